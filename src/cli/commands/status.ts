/**
 * `mcpool status` for people: the daemon, its config, and one line per server with its
 * pid, uptime, CPU and memory of its process group and calls in the last minute,
 * tools, the protocol revision it speaks and last error. `--json` prints the DaemonStatus as it came.
 */
import type { ConfigStatus, DaemonStatus, HandoverInfo, ServerState } from "mcpool-protocol";
import { conversationLines } from "../output/conversation-status.js";
import { limitLines } from "../output/limits-status.js";
import { bytes, memory, percent } from "../output/figures.js";
import { cell, duration, table } from "../output/format.js";
import { cutErrorsHint, ERROR_CELL_WIDTH } from "../output/messages.js";
import { terminalText } from "../output/terminal.js";
import { EXIT } from "../output/exit-codes.js";
import type { CommandContext } from "./context.js";

/** Uptime of a server whose connection is up, else `-`. */
export function uptime(s: ServerState, now: number): string {
  return s.startedAt !== undefined && (s.status === "ready" || s.status === "pin-mismatch")
    ? duration(now - s.startedAt)
    : "-";
}

/**
 * The status word, `(stale)` when the tools are last-known, `stopped` when its process is
 * (`ready, stopped`: nothing answers until it is continued), while it starts for how long
 * and its pid (`connecting, starting for 12 s, pid 4242`), and when a backoff holds the
 * next dial, how long until it: `unreachable, next try in 8s`.
 */
export function statusCell(s: ServerState, now: number): string {
  const stale = s.stale ? `${s.status} (stale)` : s.status;
  const word = s.resources?.stopped === true ? `${stale}, stopped` : stale;
  if (s.startingSince !== undefined) {
    // Starting: how long for, and its child (a wait on a server that never answers shows).
    const pid = s.pid !== undefined ? `, pid ${s.pid}` : "";
    return `${word}, starting for ${Math.floor(Math.max(0, now - s.startingSince) / 1000)} s${pid}`;
  }
  if (s.retryAt === undefined || s.retryAt <= now || s.status === "auth-required") return word;
  return `${word}, next try in ${duration(s.retryAt - now + 999)}`;
}

/**
 * The revision the live connection speaks (`2025-11-25`, `2026-07-28`), or with none up
 * the era last found (`legacy`, `modern`), else `-`.
 */
export function protocolCell(s: ServerState): string {
  return s.protocolVersion ?? s.era ?? "-";
}

/**
 * Since when the daemon serves, and from which hand-over (`mcpool restart`), if one: then
 * since when the pool serves without a cold start, and since when this process does.
 */
export function handoverLines(status: DaemonStatus): string[] {
  const iso = (ms: number): string => new Date(ms).toISOString();
  const handover = status.handover;
  if (handover === undefined) return [`        serving since ${iso(status.startedAt)}`];
  const count =
    handover.handovers === undefined ? "" : `${handover.handovers} hand-over(s) since; `;
  const since =
    handover.cold !== undefined
      ? `serving since ${iso(status.startedAt)}`
      : `serving since ${iso(poolSince(handover))} (${count}this process since ${iso(status.startedAt)})`;
  const { from, adopted } = handover;
  const origin = `handed over from pid ${from.pid} (version ${from.version}) at ${iso(handover.at)}`;
  const took =
    handover.cold !== undefined
      ? `started every server again: ${terminalText(handover.cold)}`
      : `${adopted.length} server(s) adopted running${adopted.length > 0 ? `: ${adopted.join(", ")}` : ""}${childrenText(handover.children)}`;
  return [`        ${since}`, `        ${origin}; ${took}`];
}

/**
 * Since when the pool serves without a cold start; a daemon of an earlier release says only whence
 * it came.
 */
function poolSince(handover: HandoverInfo): number {
  return handover.servingSince ?? handover.from.startedAt;
}

function childrenText(children: readonly string[] | undefined): string {
  if (children === undefined || children.length === 0) return "";
  return `, and ${children.length} other children: ${children.map((child) => terminalText(child)).join(", ")}`;
}

/** The uptime: this process's, and after a hand-over the pool's since its last cold start. */
function upText(status: DaemonStatus, now: number): string {
  const up = duration(now - status.startedAt);
  const handover = status.handover;
  if (handover === undefined || handover.cold !== undefined) return up;
  return `${up} (this process; the pool ${duration(now - poolSince(handover))}, without a cold start)`;
}

/** The whole human-readable status. */
export function statusText(status: DaemonStatus, now = Date.now()): string {
  const rss = status.rssBytes !== undefined ? `, rss ${bytes(status.rssBytes)}` : "";
  const restarted = status.servers.filter((s) => (s.resources?.overMemoryRestarts ?? 0) > 0);
  return [
    `daemon  pid ${status.pid}, version ${status.version}, up ${upText(status, now)}, ${status.clients} client(s)${rss}`,
    ...handoverLines(status),
    `socket  ${status.socketPath}`,
    `config  ${configLine(status)}`,
    ...(status.config.watching === false
      ? [
          `        not watching: ${terminalText(status.config.watchReason ?? "")}; \`mcpool reload\` starts it again`,
        ]
      : []),
    ...status.config.problems.map((p) => `        problem: ${terminalText(p)}`),
    ...(status.config.warnings ?? []).map((w) => `        warning: ${terminalText(w)}`),
    ...limitLines(status),
    "",
    table(
      [
        "SERVER",
        "STATUS",
        "PID",
        "UPTIME",
        "CPU",
        "MEM",
        "CALLS/MIN",
        "TOOLS",
        "PROTOCOL",
        "LAST ERROR",
      ],
      status.servers.map((s) => [
        s.id,
        statusCell(s, now),
        s.pid !== undefined ? String(s.pid) : "-",
        uptime(s, now),
        percent(s.resources?.cpuPercent),
        memory(s.resources),
        s.resources ? String(s.resources.callsLastMinute) : "-",
        String(s.tools.length),
        protocolCell(s),
        cell(
          s.error ??
            (s.status === "pin-mismatch"
              ? `tools withheld: see \`mcpool approve ${s.id} --show\``
              : undefined),
          ERROR_CELL_WIDTH,
        ),
      ]),
    ),
    ...status.servers
      .filter((s) => s.signInNotice !== undefined)
      .map((s) => `${s.id}: sign-in: ${terminalText(s.signInNotice!)}`),
    ...status.servers
      .filter((s) => s.resources?.stopped === true)
      .map(
        (s) =>
          `${s.id}: its process${s.pid !== undefined ? ` (pid ${s.pid})` : ""} is stopped: calls wait until it is continued${s.pid !== undefined ? ` (kill -CONT ${s.pid})` : ""} or time out`,
      ),
    ...restarted.map(
      (s) =>
        `${s.id}: replaced ${s.resources!.overMemoryRestarts} time(s) for staying over maxMemoryMb (${s.resources!.maxMemoryMb ?? "-"} MB)`,
    ),
    ...cutErrorsHint(status.servers.map((s) => s.error)),
    ...conversationLines(status.servers),
    ...profileLines(status.servers),
  ].join("\n");
}

/**
 * The config in a word: `ok` only when the file parsed and every row applied; `N problems`
 * when rows were rejected (the valid ones still apply); `ERROR` when the file did not parse.
 */
export function configWord(config: ConfigStatus): string {
  if (!config.ok) return "ERROR";
  const n = config.problems.length;
  return n === 0 ? "ok" : `${n} problem${n === 1 ? "" : "s"}`;
}

/** The config's word, with the parse error and that the last good configuration still runs. */
export function configLine(status: DaemonStatus): string {
  const config = status.config;
  const path = status.configPath;
  if (config.ok) {
    const rejected = config.problems.length > 0 ? " (the other rows apply)" : "";
    return `${path}: ${configWord(config)}${rejected}`;
  }
  const kept = config.loadedAt !== undefined ? "; the last good configuration keeps running" : "";
  return `${path}: ERROR ${terminalText(config.error ?? "")}${kept}`;
}

/**
 * The children that serve hosts with other capabilities or roots than the pool's:
 * per server, each child's pid, what it declared and, for a per-project child, its
 * roots, or that it awaits them (opened ahead for a host). Roots are a host's text: made printable.
 */
export function profileLines(servers: readonly ServerState[]): string[] {
  const rows = servers.filter((s) => (s.profiles ?? []).length > 0);
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((s) => s.id.length));
  return [
    "",
    "children for host profiles",
    ...rows.flatMap((s) =>
      (s.profiles ?? []).map((child) => {
        const parts = [
          child.pid !== undefined ? `pid ${child.pid}` : child.status,
          `declares ${child.capabilities}`,
        ];
        if (child.roots !== undefined) {
          parts.push(
            `roots ${child.roots.map((root) => terminalText(root)).join(" ") || "(none)"}`,
          );
        }
        if (child.awaitingRoots === true) parts.push("awaiting roots");
        return `  ${s.id.padEnd(width)}  ${parts.join(", ")}`;
      }),
    ),
  ];
}

/** `mcpool status`: also a daemon whose socket was removed, and strays serving other sockets. */
export async function statusCommand(context: CommandContext): Promise<number> {
  const lost = await import("./lost-socket.js");
  return context
    .withClient(async (client) => {
      const status = await client.status({ resources: true });
      const strays = lost.strays(status.socketPath, status.pid);
      context.print({ ...status, strays }, () =>
        [statusText(status), ...(strays.length > 0 ? ["", ...lost.strayLines(strays)] : [])].join(
          "\n",
        ),
      );
      return EXIT.ok;
    })
    .catch((error: unknown) => {
      const d = lost.socketlessDaemon(error, context.target());
      if (d === undefined) throw error;
      return lost.statusWithoutSocket(d, context.print, context.err);
    });
}
