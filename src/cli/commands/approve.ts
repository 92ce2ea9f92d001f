/**
 * `mcpool approve ID [--show]`: shows how a server's live tools differ from
 * the list its pin was approved for, and — without `--show` — approves them: the daemon
 * keeps the approved list in its pin store (refusing if the list moved since it was shown),
 * the new fingerprint is written into the row's `pin` in the daemon's mcp.json (comments and
 * formatting kept), and a reload makes the daemon offer the tools again.
 */
import { realpath, readFile, stat } from "node:fs/promises";
import type { PinInfo, PinnedTool, PoolClient } from "mcpool-client";
import { setPinInMcpJson } from "../../config/mcp-json-pin.js";
import { writeAtomically } from "../../daemon/config/source.js";
import { cell } from "../output/format.js";
import { terminalText } from "../output/terminal.js";
import type { CommandContext } from "./context.js";

export interface ApproveOptions {
  /** Only show the difference; write nothing. */
  show: boolean;
  json: boolean;
  out(line: string): void;
}

/** Characters of a fingerprint shown to a person: enough to tell two apart. */
const SHORT = 12;

/** Runs the command; resolves with 0, or throws for the CLI to report. */
export async function approve(client: PoolClient, id: string, options: ApproveOptions): Promise<0> {
  const info = await client.pinInfo(id);
  if (options.show) {
    options.out(options.json ? JSON.stringify(info, null, 2) : report(info).join("\n"));
    return 0;
  }
  if (!options.json) options.out(report(info).join("\n"));

  const { configPath } = await client.status();
  // Through a symlink (a dotfiles checkout), so the link stays a link.
  const file = await realpath(configPath);
  const text = await readFile(file, "utf8");
  const next = setPinInMcpJson(text, id, info.fingerprint);
  // The compare-and-set: refused when the live list is no longer the one just shown.
  await client.approve(id, info.fingerprint);
  const written = next !== text;
  if (written) await writeAtomically(file, next, (await stat(file)).mode & 0o777);
  const config = await client.reload();
  if (!config.ok) throw new Error(`${config.path}: ${config.error ?? "does not load"}`);
  const state = (await client.state()).find((s) => s.id === id);
  if (state?.status === "pin-mismatch") {
    throw new Error(
      `${id}: its tools changed again while they were being approved; run \`mcpool approve ${id}\` again`,
    );
  }
  const result = { serverId: id, fingerprint: info.fingerprint, tools: info.tools.length, written };
  options.out(
    options.json
      ? JSON.stringify({ ...result, configPath: file }, null, 2)
      : written
        ? `approved: the ${info.tools.length} tools of ${id} are pinned as ${short(info.fingerprint)} in ${file} and offered again`
        : `approved: the pin of ${id} (${short(info.fingerprint)}) already matches; its tools are offered`,
  );
  return 0;
}

/** What a person reads before approving. */
export function report(info: PinInfo): string[] {
  const id = info.serverId;
  if (info.pin === undefined) {
    return [
      `${id}: not pinned; approving pins these ${info.tools.length} tools (${short(info.fingerprint)}):`,
      ...info.tools.map(line("  ")),
    ];
  }
  if (!info.withheld) {
    return [`${id}: the ${info.tools.length} tools match the pin ${short(info.pin)}`];
  }
  const head = `${id}: the tools changed since they were approved (pin ${short(info.pin)}, now ${short(info.fingerprint)}); they are withheld until approved`;
  if (!info.diff || !info.approved) {
    return [
      head,
      "the list the pin was approved for is not in this daemon's pin store, so what changed cannot be shown; the live tools are:",
      ...info.tools.map(line("  ")),
    ];
  }
  const live = new Map(info.tools.map((tool) => [tool.name, tool]));
  const changes = new Map((info.changes ?? []).map((c) => [c.name, c.changes]));
  return [
    head,
    ...info.diff.added.map((name) => line("  + ")(live.get(name) ?? { name, inputSchema: {} })),
    ...info.diff.removed.map((name) => `  - ${terminalText(name)}`),
    ...info.diff.changed.flatMap((name) => [
      `  ~ ${terminalText(name)}`,
      ...(changes.get(name) ?? []).map((change) => `      ${terminalText(change)}`),
    ]),
  ];
}

/** One tool on a line: its name, description, and the hints a host acts on. */
function line(prefix: string): (tool: PinnedTool) => string {
  return (tool) => {
    const hints = Object.entries(tool.annotations ?? {})
      .filter(([key]) => key !== "title")
      .map(([key, value]) => `${terminalText(key)}: ${terminalText(String(value))}`);
    const description = tool.description ? `: ${cell(tool.description, 100)}` : "";
    return `${prefix}${terminalText(tool.name)}${description}${hints.length > 0 ? ` [${hints.join(", ")}]` : ""}`;
  };
}

function short(fingerprint: string): string {
  return `${fingerprint.slice(0, SHORT)}…`;
}

/** `mcpool approve ID [--show]`. */
export function approveCommand(context: CommandContext<{ show?: boolean }>): Promise<number> {
  const id = context.arg(0, "server ID");
  const { json, out } = context;
  return context.withClient((client) =>
    approve(client, id, { show: context.flags.show === true, json, out }),
  );
}
