/**
 * `mcpool top`: a live view of the pool in the terminal, pm2-monit style.
 * One line per server (status, pid, uptime, CPU, memory, calls/min, p50/p99, errors, a
 * sparkline of calls over the last ten minutes) and a footer (the daemon's RSS, agents,
 * config). Keys: ↑/↓ (or k/j) select, `r` restart, `s` stop, `l` the selected server's
 * log lines, `q` or Ctrl-C quit. `--once` prints one frame, without escapes, for scripts.
 *
 * Plain ANSI rather than a terminal library: the view is one table redrawn in place, which
 * takes a handful of escape codes; blessed/ink would add megabytes for it. Redraws go over
 * the previous frame line by line (cursor home, erase to end of line), never clearing the
 * screen first, so nothing flickers. The terminal is restored on every way out: `q`, Ctrl-C
 * (a byte in raw mode), SIGINT/SIGTERM/SIGHUP from outside, and an error.
 */
import { readFile } from "node:fs/promises";
import type { DaemonStatus, PoolClient, ServerState } from "mcpool-client";
import { EXIT } from "../output/exit-codes.js";
import { memory, ms, percent, sparkline, bytes } from "../output/figures.js";
import { logEntries } from "../output/messages.js";
import { terminalText } from "../output/terminal.js";
import { configLine, configWord, uptime } from "./status.js";
import type { CommandContext } from "./context.js";

export interface TopOptions {
  once: boolean;
  /** The daemon's log file, for `l`. */
  logFile: string;
  out(text: string): void;
}

/** How often the figures are sampled while the view is open. */
const REFRESH_MS = 1000;

/** Events come in bursts (a reconcile, a busy agent): at most one redraw per this many ms. */
const EVENT_REDRAW_MS = 100;

/** Signals from outside that end the view, the terminal restored first. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** 128 + SIGINT, as a shell reports a command ended by Ctrl-C (output/exit-codes.ts). */
const EXIT_INTERRUPTED = EXIT.interrupted;

/** The view is laid out for this width at most; a narrower terminal gets fewer columns. */
const WIDTH = 80;

/** Column widths of the table, which add up (with one space between) to WIDTH. */
const COLUMNS: readonly [string, number][] = [
  ["SERVER", 10],
  ["STATUS", 9],
  ["PID", 7],
  ["UP", 6],
  ["CPU", 5],
  ["MEM", 5],
  ["C/MIN", 5],
  ["P50", 5],
  ["P99", 5],
  ["ERR", 3],
  ["CALLS 10m", 10],
];

/** Which columns go first when the terminal is narrower than WIDTH, the least telling first. */
const DROPPED_FIRST = ["CALLS 10m", "P99", "ERR", "UP", "P50", "C/MIN", "PID"];

/** The columns that fit `width`, in their order: SERVER, STATUS, CPU and MEM always stay. */
function columnsFor(width: number): number[] {
  const shown = COLUMNS.map((_, i) => i);
  const used = (): number => shown.reduce((sum, i) => sum + COLUMNS[i]![1] + 1, -1);
  for (const name of DROPPED_FIRST) {
    if (used() <= width) break;
    shown.splice(shown.indexOf(COLUMNS.findIndex(([n]) => n === name)), 1);
  }
  return shown;
}

const ESC = "\x1b[";
const ENTER = `${ESC}?1049h${ESC}?25l`;
const LEAVE = `${ESC}?25h${ESC}?1049l`;
const INVERSE = `${ESC}7m`;
const PLAIN = `${ESC}0m`;

/** One line of the view: made safe (it holds ids, errors and log lines), then cut or padded. */
function fit(raw: string, width: number): string {
  const text = terminalText(raw);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

function row(cells: readonly string[], columns: readonly number[]): string {
  return columns
    .map((i) => fit(cells[i] ?? "", COLUMNS[i]![1]))
    .join(" ")
    .trimEnd();
}

function serverCells(s: ServerState, now: number): string[] {
  const r = s.resources;
  return [
    s.id,
    s.status,
    s.pid !== undefined ? String(s.pid) : "-",
    uptime(s, now),
    percent(r?.cpuPercent),
    memory(r).replace(/\/.*$/, ""),
    r ? String(r.callsLastMinute) : "-",
    ms(r?.p50Ms),
    ms(r?.p99Ms),
    r ? String(r.errorsLastMinute) : "-",
    r ? sparkline(r.callsPerMinute) : "",
  ];
}

export interface View {
  selected: number;
  /** Lines shown under the table (`l`), or undefined. */
  logLines?: readonly string[];
  /** What the last key did. */
  message?: string;
}

/** The terminal a frame is drawn for: columns and rows. */
export interface Screen {
  width: number;
  height: number;
}

/** What `--once` and a terminal that says nothing of its size get. */
const DEFAULT_SCREEN: Screen = { width: WIDTH, height: Infinity };

/**
 * One frame as lines, no escape codes but the selected line's inverse video when `tty`.
 * Every line fits `screen.width` (a narrower terminal gets fewer columns, never a wrapped
 * line), and no more lines than `screen.height`: the header and the footer stay, and the
 * server list scrolls to keep the selected server in view.
 */
export function frame(
  status: DaemonStatus,
  view: View,
  now: number,
  tty: boolean,
  screen: Screen = DEFAULT_SCREEN,
): string[] {
  const servers = status.servers;
  const width = Math.min(WIDTH, Math.max(20, screen.width));
  const columns = columnsFor(width);
  const line = (text: string): string => fit(text, width).trimEnd();
  const header = [
    line(
      `mcpool top · ${servers.length} server(s) · ↑/↓ select  r restart  s stop  l logs  q quit`,
    ),
    "",
    row(
      COLUMNS.map(([name]) => name),
      columns,
    ),
  ];
  const footer = [
    "",
    line(
      `daemon pid ${status.pid} · rss ${bytes(status.rssBytes)} · agents ${Math.max(0, status.clients - 1)} · config ${configWord(status.config)}`,
    ),
    line(`config ${configLine(status)}`),
  ];
  // The rows the server list may take: what the header, the footer and at least three log
  // lines (when shown) leave; at least one, so the selected server is always there.
  const logRoom = view.logLines !== undefined ? 5 : 0;
  const room = Math.max(1, screen.height - header.length - footer.length - logRoom);
  const first = Math.min(Math.max(0, view.selected - room + 1), Math.max(0, servers.length - room));
  const shown = servers.slice(first, first + room);
  const lines = [
    ...header,
    ...shown.map((s, k) => {
      const text = row(serverCells(s, now), columns);
      return tty && first + k === view.selected ? `${INVERSE}${text.padEnd(width)}${PLAIN}` : text;
    }),
    ...footer,
  ];
  const limited = servers.filter((s) => s.resources?.maxMemoryMb !== undefined);
  if (limited.length > 0) {
    const limits = limited
      .map((s) => `${s.id} ${memory(s.resources)} (${s.resources!.overMemoryRestarts} restarts)`)
      .join(" · ");
    lines.push(line(limits));
  }
  if (view.message !== undefined) lines.push(line(view.message));
  if (view.logLines !== undefined) {
    const selected = servers[view.selected]?.id ?? "";
    lines.push("", line(`log of ${selected}:`), ...view.logLines.map(line));
  }
  return lines.slice(0, screen.height);
}

/** The log's entries about `server`, last `count` lines of them. */
export async function serverLogLines(
  file: string,
  server: string,
  count: number,
): Promise<string[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  const entries = logEntries(text.trimEnd().split("\n")).filter((e) => e.server === server);
  return entries.flatMap((e) => `${e.time.slice(11, 19)} ${e.message}`.split("\n")).slice(-count);
}

/**
 * The keys in one read of the terminal, in order. A read holds as many keys as were typed
 * (or pasted, or sent) since the last one: on a busy machine `↓` then `r` arrive together,
 * and each must count. An escape sequence (CSI `ESC [ … final`, SS3 `ESC O x`) is one key.
 */
export function keysOf(data: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < data.length) {
    let end = i + 1;
    if (data[i] === "\x1b" && data[i + 1] === "[") {
      end = i + 2;
      // Parameter and intermediate bytes, then the final byte (0x40–0x7e).
      while (end < data.length && !/[\x40-\x7e]/.test(data[end]!)) end++;
      end = Math.min(end + 1, data.length);
    } else if (data[i] === "\x1b" && data[i + 1] === "O" && i + 2 < data.length) {
      end = i + 3;
    } else {
      const code = data.codePointAt(i) ?? 0;
      end = i + (code > 0xffff ? 2 : 1);
    }
    keys.push(data.slice(i, end));
    i = end;
  }
  return keys;
}

/** Runs the view until `q`; resolves with the exit code. */
export async function top(client: PoolClient, options: TopOptions): Promise<number> {
  if (options.once) {
    const status = await client.status({ resources: true });
    options.out(frame(status, { selected: -1 }, Date.now(), false).join("\n"));
    return 0;
  }
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) {
    throw new Error(
      "top needs a terminal; `mcpool top --once` prints one frame, `status --json` the figures",
    );
  }
  const view: View = { selected: 0 };
  let status: DaemonStatus | undefined;
  let refreshing: Promise<void> | undefined;
  let eventTimer: NodeJS.Timeout | undefined;
  let left = false;
  /** `q`, Ctrl-C or a signal ended the view: keys read after are not acted on. */
  let ended = false;
  let done: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => {
    done = (code) => {
      ended = true;
      resolve(code);
    };
  });

  const draw = (): void => {
    // A refresh that lands after the view was left would paint over the person's own screen.
    if (status === undefined || left) return;
    const screen = { width: stdout.columns || WIDTH, height: stdout.rows || 24 };
    const lines = frame(status, view, Date.now(), true, screen);
    // Over the previous frame, each line erased to its end, then the rest of the screen.
    const text = lines.map((line) => `${line}${ESC}K`).join("\r\n");
    stdout.write(`${ESC}H${text}${ESC}J`);
  };
  const refresh = (): Promise<void> =>
    (refreshing ??= (async () => {
      try {
        status = await client.status({ resources: true });
        view.selected = Math.min(Math.max(0, view.selected), status.servers.length - 1);
        if (view.logLines !== undefined) await showLog();
        draw();
      } catch (error) {
        view.message = `the daemon did not answer: ${(error as Error).message}`;
        draw();
      } finally {
        refreshing = undefined;
      }
    })());
  const selectedId = (): string | undefined => status?.servers[view.selected]?.id;
  const showLog = async (): Promise<void> => {
    const id = selectedId();
    // What the frame leaves under the table: the header, footer and one server take 7.
    const room = Math.max(3, (stdout.rows || 24) - (status?.servers.length ?? 0) - 10);
    view.logLines = id === undefined ? [] : await serverLogLines(options.logFile, id, room);
  };
  const act = (what: string, run: () => Promise<void>): void => {
    view.message = `${what}…`;
    draw();
    run()
      .then(
        () => (view.message = `${what}: done`),
        (error: unknown) => (view.message = `${what}: ${(error as Error).message}`),
      )
      .finally(() => void refresh());
  };
  const onKey = (key: string): void => {
    const id = selectedId();
    if (key === "q" || key === "\x04") return done(0);
    // Ctrl-C is a byte in raw mode: it ends the view as the signal would.
    if (key === "\x03") return done(EXIT_INTERRUPTED);
    if (key === `${ESC}A` || key === "k") view.selected = Math.max(0, view.selected - 1);
    else if (key === `${ESC}B` || key === "j") {
      view.selected = Math.min((status?.servers.length ?? 1) - 1, view.selected + 1);
    } else if (key === "r" && id !== undefined)
      return act(`restarting ${id}`, () => client.reconnect(id));
    else if (key === "s" && id !== undefined) return act(`stopping ${id}`, () => client.stop(id));
    else if (key === "l") {
      if (view.logLines !== undefined) delete view.logLines;
      else return void showLog().then(draw);
    }
    draw();
  };
  const onSignal = (): void => done(EXIT_INTERRUPTED);

  stdin.setRawMode(true);
  stdin.resume();
  const onData = (data: Buffer): void => {
    for (const key of keysOf(data.toString("utf8"))) if (!ended) onKey(key);
  };
  stdin.on("data", onData);
  stdout.on("resize", draw);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  stdout.write(ENTER);
  const offEvents = client.onEvent(() => {
    eventTimer ??= setTimeout(() => {
      eventTimer = undefined;
      void refresh();
    }, EVENT_REDRAW_MS);
  });
  const ticker = setInterval(() => void refresh(), REFRESH_MS);
  try {
    await refresh();
    return await finished;
  } finally {
    clearInterval(ticker);
    if (eventTimer !== undefined) clearTimeout(eventTimer);
    offEvents();
    stdin.off("data", onData);
    stdout.off("resize", draw);
    for (const signal of SIGNALS) process.off(signal, onSignal);
    left = true;
    stdout.write(LEAVE);
    stdin.setRawMode(false);
    stdin.pause();
  }
}

/** `mcpool top [--once]`. */
export function topCommand(context: CommandContext<{ once?: boolean }>): Promise<number> {
  return context.withClient((client) =>
    top(client, {
      once: context.flags.once === true,
      logFile: context.logFile(),
      out: context.out,
    }),
  );
}
