/**
 * `mcpool wire <host> [--write]` (SPEC D8): in a host's MCP config, every server entry that
 * mcpool also has — same connection (SPEC A5: command, args, env, cwd; or url, headers) —
 * becomes `mcpool bridge --server ID`, so the host shares the daemon's warm instance instead
 * of starting its own. Entries mcpool does not have are left as they are (`mcpool import`
 * brings them in). A dry run by default: the unified diff of what would change. `--write`
 * copies the file to a timestamped backup beside it first, then replaces it atomically.
 * Edits go through jsonc-parser's modify/applyEdits: comments, order and formatting of
 * everything else survive.
 *
 * The entry's command is this Node and this CLI's main.js, both absolute: a host started
 * from a desktop launcher has a PATH of its own, and may not find `node` or `mcpool` on it.
 */
import { copyFile, readFile, rename, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  applyEdits,
  getNodeValue,
  modify,
  parseTree,
  type FormattingOptions,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { normalizeBody, parseMcpJson, ConfigSyntaxError } from "../config/mcp-json.js";
import type { McpServerConfig } from "../config/rows.js";
import { sameConnection } from "../config/same-connection.js";
import { defaultSocketPath } from "mcpool-client";
import { mcpSocketPath } from "../bridge/mcp-socket-paths.js";
import { findPipeEntry, isPipeEntry, type PipeEntry } from "./pipe-entry.js";
import {
  HOSTS,
  hostConfigPath,
  isHostName,
  serverMapPaths,
  type HostEnvironment,
  type HostName,
  type JsonPath,
} from "./host-configs.js";
import { redactJsonSecrets } from "./redact-json.js";
import { unifiedDiff } from "./unified-diff.js";

export interface WireOptions {
  host: string;
  write: boolean;
  /** mcpool's own mcp.json. */
  configPath: string;
  /** A non-default daemon socket, written into each entry as `--socket`. */
  socketPath?: string;
  /** Where to look for the host's file. Default: this user, this platform. */
  where?: HostEnvironment;
  /** The bridge's argv prefix. Default: this Node and this CLI's main.js. */
  command?: readonly string[];
  /** Where the stock pipes are looked for (PATH). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** For the backup's name. Default: now. */
  now?: () => Date;
  out(line: string): void;
  err(line: string): void;
}

const EXIT = { ok: 0, failed: 1, badInput: 2 } as const;

/** Keys that make up a connection in the hosts' formats; a wired entry drops them all. */
const CONNECTION_KEYS = new Set([
  "type",
  "transport",
  "command",
  "args",
  "env",
  "envFile",
  "cwd",
  "url",
  "httpUrl",
  "serverUrl",
  "headers",
]);

/** `[node, …/dist/cli/main.js]`: how a host starts this mcpool. */
export function mcpoolCommand(): string[] {
  return [process.execPath, fileURLToPath(new URL("./bin.js", import.meta.url))];
}

/** One entry of the host's file and what it becomes. */
export interface WirePlanEntry {
  /** The entry's JSON path in the host's file. */
  path: JsonPath;
  name: string;
  /** The mcpool server it shares; undefined: left as it is. */
  serverId: string | undefined;
  /** Already `mcpool bridge`: nothing to do. */
  wired: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The entry a wired server gets: the bridge's command, the entry's other keys kept. */
export function wiredEntry(
  original: Record<string, unknown>,
  host: HostName,
  serverId: string,
  command: readonly string[],
  socketPath: string | undefined,
  pipe?: PipeEntry,
): Record<string, unknown> {
  const [file, ...prefix] = command;
  const entry: Record<string, unknown> = {};
  // VS Code's format names the transport; keep a `type` wherever the entry had one.
  if (host === "vscode" || "type" in original) entry.type = "stdio";
  entry.command = pipe?.command ?? file;
  entry.args = pipe?.args ?? [
    ...prefix,
    "bridge",
    "--server",
    serverId,
    ...(socketPath !== undefined ? ["--socket", socketPath] : []),
  ];
  for (const [key, value] of Object.entries(original)) {
    if (!CONNECTION_KEYS.has(key)) entry[key] = value;
  }
  return entry;
}

function isBridgeEntry(value: Record<string, unknown>): boolean {
  const args = Array.isArray(value.args) ? value.args : [];
  return (args.includes("bridge") && args.includes("--server")) || isPipeEntry(args);
}

/** Which entries of the host's file match which mcpool rows. */
export function planWire(
  host: HostName,
  tree: Node,
  rows: readonly McpServerConfig[],
): WirePlanEntry[] {
  const plan: WirePlanEntry[] = [];
  const usable = rows.filter((row) => row.enabled !== false);
  const root: unknown = getNodeValue(tree);
  for (const mapPath of serverMapPaths(host, tree)) {
    let node: unknown = root;
    for (const key of mapPath) node = isObject(node) ? node[key as string] : undefined;
    if (!isObject(node)) continue;
    for (const [name, value] of Object.entries(node)) {
      const path = [...mapPath, name];
      if (!isObject(value)) continue;
      if (isBridgeEntry(value)) {
        plan.push({ path, name, serverId: undefined, wired: true });
        continue;
      }
      const normalized = normalizeBody(name, value);
      const match =
        "row" in normalized ? usable.find((row) => sameConnection(normalized.row, row)) : undefined;
      plan.push({ path, name, serverId: match?.id, wired: false });
    }
  }
  return plan;
}

/** Indentation and line ends as the file already has them, so edits look native. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

function stamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replace(/[-:]/g, "")
    .replace("T", "-");
}

export async function runWire(options: WireOptions): Promise<number> {
  const { out, err } = options;
  if (!isHostName(options.host)) {
    err(`mcpool wire: unknown host "${options.host}" (one of ${HOSTS.join(", ")})`);
    return EXIT.badInput;
  }
  const host = options.host;
  const where = options.where ?? { home: homedir(), platform: process.platform, env: process.env };
  const path = hostConfigPath(host, where);

  let rows: McpServerConfig[];
  try {
    rows = parseMcpJson(await readFile(options.configPath, "utf8")).rows;
  } catch (error) {
    const why =
      error instanceof ConfigSyntaxError
        ? error.message
        : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
    err(`mcpool wire: cannot read mcpool's config ${options.configPath}: ${why}`);
    return EXIT.failed;
  }

  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    err(
      `mcpool wire: no ${host} config at ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
    return EXIT.failed;
  }
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (tree === undefined || errors.length > 0) {
    err(`mcpool wire: ${path} does not parse as JSON; fix it first, nothing was changed`);
    return EXIT.failed;
  }

  const plan = planWire(host, tree, rows);
  const command = options.command ?? mcpoolCommand();
  const formattingOptions = formattingOf(text);
  // The lightest entry per server: a stock pipe to the daemon's MCP socket when one works now.
  const daemonSocket = options.socketPath ?? defaultSocketPath();
  const pipes = new Map<string, PipeEntry>();
  for (const { serverId } of plan) {
    if (serverId === undefined || pipes.has(serverId)) continue;
    const pipe = await findPipeEntry(mcpSocketPath(daemonSocket, serverId), options.env);
    if (pipe !== undefined) pipes.set(serverId, pipe);
  }
  let next = text;
  for (const entry of plan) {
    if (entry.serverId === undefined) continue;
    const current = parseTree(next);
    let value: unknown = current === undefined ? undefined : getNodeValue(current);
    for (const key of entry.path) value = isObject(value) ? value[key as string] : undefined;
    if (!isObject(value)) continue;
    const pipe = pipes.get(entry.serverId);
    const wired = wiredEntry(value, host, entry.serverId, command, options.socketPath, pipe);
    // Key by key, so the entry's other keys keep their text: drop the old connection, then
    // set type/command/args (in place where they were, appended where they were not).
    const edit = (key: string, to: unknown): void => {
      next = applyEdits(next, modify(next, [...entry.path, key], to, { formattingOptions }));
    };
    for (const key of Object.keys(value)) {
      if (CONNECTION_KEYS.has(key) && !(key in wired)) edit(key, undefined);
    }
    for (const key of ["type", "command", "args"]) if (key in wired) edit(key, wired[key]);
  }

  const changed = plan.filter((e) => e.serverId !== undefined);
  const already = plan.filter((e) => e.wired);
  const left = plan.filter((e) => e.serverId === undefined && !e.wired);
  const where_ = (e: WirePlanEntry): string =>
    e.path.length > 2 ? `${e.name} (project ${String(e.path[1])})` : e.name;
  for (const e of changed) {
    const pipe = pipes.get(e.serverId ?? "");
    out(
      `${where_(e)} → ${pipe ? `${pipe.tool} to mcpool's socket of` : "mcpool bridge --server"} ${e.serverId}`,
    );
  }
  for (const e of already) out(`${where_(e)}: already goes through mcpool`);
  if (left.length > 0) {
    out(
      `left as they are (mcpool has no server with the same connection; \`mcpool import\` adds them): ${left.map(where_).join(", ")}`,
    );
  }
  if (changed.length === 0) {
    out(`nothing to wire in ${path}`);
    return EXIT.ok;
  }
  if (!options.write) {
    out("");
    out(
      unifiedDiff(
        redactJsonSecrets(text),
        redactJsonSecrets(next),
        path,
        `${path} (wired)`,
      ).trimEnd(),
    );
    out("");
    out("dry run: nothing was written; run again with --write to apply (a backup is kept)");
    return EXIT.ok;
  }
  const backup = join(
    dirname(path),
    `${basename(path)}.mcpool-backup-${stamp((options.now ?? (() => new Date()))())}`,
  );
  const mode = (await stat(path)).mode & 0o777;
  await copyFile(path, backup);
  const temp = join(dirname(path), `.${basename(path)}.mcpool-${process.pid}.tmp`);
  await writeFile(temp, next, { mode });
  await rename(temp, path);
  out(`wrote ${path} (backup at ${backup})`);
  return EXIT.ok;
}
