/**
 * `mcpool wire <host> [--write] [--json]`: in a host's MCP config, every
 * server entry that mcpool also has — same connection (command, args, env, cwd; or
 * url, headers) — becomes `mcpool bridge --server ID`, so the host shares the daemon's warm
 * instance instead of starting its own. Entries mcpool does not have are left as they are
 * (`mcpool import` brings them in). A dry run by default: the unified diff of what would
 * change. `--write` copies the file to a timestamped backup beside it first, then replaces it
 * atomically, what it changed kept beside it for `mcpool unwire` (`wired-record.ts`). JSON hosts are edited through jsonc-parser's modify/applyEdits, Codex's TOML
 * table by table (`toml-rewrite.ts`), Goose's YAML entry by entry (`yaml-rewrite.ts`):
 * comments, order and formatting of everything else survive.
 *
 * The entry's command is this Node and this CLI's main.js, both absolute: a host started
 * from a desktop launcher has a PATH of its own, and may not find `node` or `mcpool` on it.
 */
import { copyFile, readFile, rename, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { normalizeBody, parseMcpJson, ConfigSyntaxError } from "../../config/mcp-json.js";
import type { McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";
import { defaultSocketPath } from "mcpool-client";
import { backupPath } from "./backup.js";
import { findPipeEntry, type PipeEntry } from "./pipe-entry.js";
import {
  HOSTS,
  hostConfigPaths,
  hostFormat,
  isHostName,
  type HostEnvironment,
  type HostName,
} from "./configs.js";
import { bridgeEntryOf, isBridgeBody } from "./entries.js";
import { hostEntries, parseHostText, readIfThere, type HostEntry } from "./files.js";
import { rewriteJsonEntry } from "./json-layout.js";
import { redactJsonSecrets } from "./redact-json.js";
import { redactTomlSecrets, redactYamlSecrets } from "./redact-text.js";
import { rewriteCodexServer } from "./toml-rewrite.js";
import { unifiedDiff } from "./unified-diff.js";
import { hostBody, hostConnectionKeys, hostWiredEntry } from "./shapes.js";
import { rewriteYamlEntry } from "./yaml-rewrite.js";
import { readWiredRecord, WireEdits, writeWiredRecord } from "./wired-record.js";
import { EXIT } from "../output/exit-codes.js";

export { wiredEntry } from "./entries.js";

export interface WireOptions {
  host: string;
  write: boolean;
  /** `--json`: `{host, file, servers, skipped, diff, written, backup?}` on stdout. */
  json?: boolean;
  /** mcpool's own mcp.json. */
  configPath: string;
  /**
   * The daemon's socket. Default: `defaultSocketPath()`. Written into every entry (`--socket`,
   * the pipe's argument), so an entry reaches this daemon whatever its host strips from the
   * environment.
   */
  socketPath?: string;
  /** Where to look for the host's file. Default: this user, this platform. */
  where?: HostEnvironment;
  /** The bridge's argv prefix. Default: this Node and this CLI's main.js. */
  command?: readonly string[];
  /** Where the stock pipes are looked for (PATH). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /**
   * `--catalog[=auto]`: each entry becomes `mcpool bridge --server ID --catalog`, the
   * server's alwaysLoad tools and the pool's search, describe and call tools; entries already
   * wired without it are rewritten too. No stock pipe: one server's catalog has no socket.
   */
  catalog?: { mode: "on" | "auto"; tokens?: number };
  /** `--one-entry` (with `--catalog`): one pool-wide catalogue entry instead (one-entry.ts). */
  oneEntry?: boolean;
  /** For the backup's name. Default: now. */
  now?: () => Date;
  out(line: string): void;
  err(line: string): void;
}

/** `[node, …/dist/cli/bin.js]`: how a host starts this mcpool (bin.js: the lean bridge). */
export function mcpoolCommand(): string[] {
  return [process.execPath, fileURLToPath(new URL("../bin.js", import.meta.url))];
}

/** One entry of the host's file and what it becomes. */
export interface WirePlanEntry extends HostEntry {
  /** The mcpool server it shares; undefined: left as it is. */
  serverId: string | undefined;
  /** Already `mcpool bridge`: nothing to do. */
  wired: boolean;
  /** Why it is left as it is, when it is. */
  why?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const LEFT_WHY =
  "mcpool has no server with the same connection; `mcpool import` adds it, then wire again";

/** Which entries of the host's file match which mcpool rows. */
export function planWire(
  host: HostName,
  entries: readonly HostEntry[],
  rows: readonly McpServerConfig[],
  catalog = false,
): WirePlanEntry[] {
  const usable = rows.filter((row) => row.enabled !== false);
  return entries.map((entry) => {
    const body = hostBody(host, entry.value);
    if ("skip" in body)
      return { ...entry, serverId: undefined, wired: false, why: String(body.skip) };
    if (isBridgeBody(body)) {
      // `--catalog` turns an entry wired without it into one with it (and back).
      const wired = bridgeEntryOf(body);
      if (wired !== undefined && wired.catalog !== catalog) {
        return { ...entry, serverId: wired.serverId, wired: false };
      }
      return { ...entry, serverId: undefined, wired: true };
    }
    const normalized = normalizeBody(entry.name, body);
    const match =
      "row" in normalized ? usable.find((row) => sameConnection(normalized.row, row)) : undefined;
    return { ...entry, serverId: match?.id, wired: false, ...(match ? {} : { why: LEFT_WHY }) };
  });
}

/** The host's text with every matched entry wired; entries that cannot be get a `why`. */
export function applyWire(
  host: HostName,
  text: string,
  plan: WirePlanEntry[],
  command: readonly string[],
  socketPath: string | undefined,
  pipes: ReadonlyMap<string, PipeEntry> = new Map(),
  bridgeArgs: readonly string[] = [],
  edits?: WireEdits,
): string {
  let next = text;
  for (const entry of plan) {
    if (entry.serverId === undefined || !isObject(entry.value)) continue;
    const pipe = pipes.get(entry.serverId);
    const wired = hostWiredEntry(
      entry.value,
      host,
      entry.serverId,
      command,
      socketPath,
      pipe,
      bridgeArgs,
    );
    const format = hostFormat(host);
    const result =
      format === "toml"
        ? rewriteCodexServer(
            next,
            entry.name,
            wired.command as string,
            wired.args as string[],
            hostConnectionKeys(host),
          )
        : format === "yaml"
          ? rewriteYamlEntry(next, entry.path, wired, hostConnectionKeys(host))
          : rewriteJsonEntry(next, entry.path, entry.value, wired);
    if ("why" in result) {
      entry.why = result.why;
      entry.serverId = undefined;
    } else {
      edits?.add(entry.name, entry.path, next, result.text);
      next = result.text;
    }
  }
  return next;
}

/** mcpool's rows, or the sentence that says why they cannot be read. */
export async function mcpoolRows(configPath: string): Promise<McpServerConfig[] | string> {
  try {
    return parseMcpJson(await readFile(configPath, "utf8")).rows;
  } catch (error) {
    return error instanceof ConfigSyntaxError
      ? error.message
      : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
  }
}

/** The host's first file that exists, and its text; or the first path, for the message. */
export async function hostFile(
  host: HostName,
  where: HostEnvironment,
): Promise<{ path: string; text: string | undefined; error?: string }> {
  const paths = hostConfigPaths(host, where);
  for (const path of paths) {
    try {
      const text = await readIfThere(path);
      if (text !== undefined) return { path, text };
    } catch (error) {
      return {
        path,
        text: undefined,
        error: (error as NodeJS.ErrnoException).code ?? String(error),
      };
    }
  }
  return { path: paths[0]!, text: undefined, error: "ENOENT" };
}

/** Writes `next` over `path`, the old text kept beside it first; returns the backup's path. */
export async function writeWired(path: string, next: string, now: Date): Promise<string> {
  const backup = backupPath(path, now);
  const mode = (await stat(path)).mode & 0o777;
  await copyFile(path, backup);
  const temp = join(dirname(path), `.${basename(path)}.mcpool-${process.pid}.tmp`);
  await writeFile(temp, next, { mode });
  await rename(temp, path);
  return backup;
}

/** The diff shown for a host's file, secrets redacted in each format. */
export function wireDiff(
  host: HostName,
  path: string,
  text: string,
  next: string,
  label = "wired",
): string {
  const format = hostFormat(host);
  const redact =
    format === "toml"
      ? redactTomlSecrets
      : format === "yaml"
        ? redactYamlSecrets
        : redactJsonSecrets;
  return unifiedDiff(redact(text), redact(next), path, `${path} (${label})`).trimEnd();
}

export async function runWire(options: WireOptions): Promise<number> {
  const { out, err } = options;
  if (!isHostName(options.host)) {
    err(`mcpool wire: unknown host "${options.host}" (one of ${HOSTS.join(", ")})`);
    return EXIT.badInput;
  }
  const host = options.host;
  const where = options.where ?? { home: homedir(), platform: process.platform, env: process.env };

  const rows = await mcpoolRows(options.configPath);
  if (typeof rows === "string") {
    err(`mcpool wire: cannot read mcpool's config ${options.configPath}: ${rows}`);
    return EXIT.failed;
  }
  const { path, text, error } = await hostFile(host, where);
  if (text === undefined) {
    err(`mcpool wire: no ${host} config at ${path} (${error})`);
    return EXIT.failed;
  }
  const parsed = parseHostText(hostFormat(host), text);
  if ("error" in parsed) {
    err(`mcpool wire: ${path} does not parse (${parsed.error}); fix it first, nothing was changed`);
    return EXIT.failed;
  }

  const catalog = options.catalog;
  const plan = planWire(host, hostEntries(host, parsed.value), rows, catalog !== undefined);
  // The lightest entry per server: a stock pipe to the daemon's MCP socket when one works now.
  const daemonSocket = options.socketPath ?? defaultSocketPath();
  const pipes = new Map<string, PipeEntry>();
  for (const { serverId } of plan) {
    if (catalog !== undefined || serverId === undefined || pipes.has(serverId)) continue;
    const pipe = await findPipeEntry(daemonSocket, serverId, options.env);
    if (pipe !== undefined) pipes.set(serverId, pipe);
  }
  const command = options.command ?? mcpoolCommand();
  const bridgeArgs =
    catalog === undefined
      ? []
      : [
          catalog.mode === "auto" ? "--catalog=auto" : "--catalog",
          ...(catalog.tokens !== undefined ? ["--catalog-tokens", String(catalog.tokens)] : []),
        ];
  const edits = new WireEdits(host);
  const next = applyWire(host, text, plan, command, daemonSocket, pipes, bridgeArgs, edits);
  const changed = plan.filter((e) => e.serverId !== undefined);
  const diff = changed.length > 0 ? wireDiff(host, path, text, next) : "";
  let backup: string | undefined;
  if (options.write && changed.length > 0) {
    // The record first: a host file rewritten without it would leave unwire no way back.
    const record = await readWiredRecord(path);
    if (typeof record === "string") {
      err(`mcpool wire: ${record}`);
      return EXIT.failed;
    }
    await writeWiredRecord(path, { edits: [...record.edits, ...edits.edits] });
    backup = await writeWired(path, next, (options.now ?? (() => new Date()))());
  }
  if (options.json === true) {
    out(JSON.stringify(wireReport(host, path, plan, diff, backup), null, 2));
    return EXIT.ok;
  }
  printWire(plan, pipes, bridgeArgs, out);
  if (changed.length === 0) {
    out(`nothing to wire in ${path}`);
  } else {
    printOutcome(out, diff, path, backup);
  }
  return EXIT.ok;
}

/** The diff shown, the one written or the one --write would write, and what became of it. */
export function printOutcome(
  out: (line: string) => void,
  diff: string,
  path: string,
  backup: string | undefined,
): void {
  out("");
  out(diff);
  out("");
  out(
    backup !== undefined
      ? `wrote ${path} (backup at ${backup})`
      : "dry run: nothing was written; run again with --write to apply (a backup is kept)",
  );
}

const placeOf = (e: WirePlanEntry): string =>
  e.project !== undefined ? `${e.name} (project ${e.project})` : e.name;

/** `--json`: `{host, file, servers: [...], skipped: [{name, why}]}` and the outcome. */
function wireReport(
  host: HostName,
  file: string,
  plan: readonly WirePlanEntry[],
  diff: string,
  backup: string | undefined,
): Record<string, unknown> {
  const project = (e: WirePlanEntry) => (e.project !== undefined ? { project: e.project } : {});
  return {
    host,
    file,
    servers: plan
      .filter((e) => e.serverId !== undefined || e.wired)
      .map((e) => ({
        name: e.name,
        ...project(e),
        ...(e.serverId !== undefined
          ? { server: e.serverId, status: "wired" }
          : { status: "already" }),
      })),
    skipped: plan
      .filter((e) => e.serverId === undefined && !e.wired)
      .map((e) => ({ name: e.name, ...project(e), why: e.why ?? LEFT_WHY })),
    diff,
    written: backup !== undefined,
    ...(backup !== undefined ? { backup } : {}),
  };
}

function printWire(
  plan: readonly WirePlanEntry[],
  pipes: ReadonlyMap<string, PipeEntry>,
  bridgeArgs: readonly string[],
  out: (line: string) => void,
): void {
  for (const e of plan) {
    if (e.serverId === undefined) continue;
    const pipe = pipes.get(e.serverId);
    const via = pipe
      ? `${pipe.tool} to mcpool's socket of`
      : `mcpool bridge${bridgeArgs.length > 0 ? ` ${bridgeArgs.join(" ")}` : ""} --server`;
    out(`${placeOf(e)} → ${via} ${e.serverId}`);
  }
  for (const e of plan) if (e.wired) out(`${placeOf(e)}: already goes through mcpool`);
  const left = plan.filter((e) => e.serverId === undefined && !e.wired && e.why === LEFT_WHY);
  if (left.length > 0) {
    out(
      `left as they are (mcpool has no server with the same connection; \`mcpool import\` adds them): ${left.map(placeOf).join(", ")}`,
    );
  }
  for (const e of plan) {
    if (e.serverId === undefined && !e.wired && e.why !== LEFT_WHY) {
      out(`${placeOf(e)}: left as it is (${e.why})`);
    }
  }
}
