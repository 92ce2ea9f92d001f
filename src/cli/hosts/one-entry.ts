/**
 * One pool-wide catalogue entry for a host, instead of one per server:
 *
 * - `mcpool wire HOST --catalog[=auto] --one-entry`: the host's entries that mcpool has (the
 *   same connection as a row, or already wired to one server) are taken out, and one entry,
 *   `mcpool`, runs `mcpool bridge --catalog[=auto]` — the whole pool's search, describe and
 *   call tools, with its rows' `alwaysLoad` tools. What was taken out is kept beside the file
 *   for `unwire`: a JSON host's entries as values (`<file>.mcpool-replaced.json`), Codex's
 *   TOML and Goose's and Continue's YAML as the text the edit replaced, in the record plain
 *   `wire` keeps (`wired-record.ts`), so unwire gives back those lines byte for byte. Run
 *   again, it changes nothing.
 * - `mcpool unwire HOST`: the pool-wide entry taken out, and the entries it replaced put back
 *   as they were, each in the map it was in (unless an entry of that name is there now); then
 *   every entry plain `wire` rewrote put back as it was (`wired-record.ts`), in any format. A
 *   pool-wide entry with no record left (the record lost, or never kept) is ours by its
 *   command: it is taken out all the same, with nothing to put back in its place.
 *
 * Each file is edited in place with the editor plain `wire` uses for its format (each
 * file's own spacing kept, the result checked to mean the old file with just that change).
 */
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { defaultSocketPath } from "mcpool-client";
import { EXIT } from "../output/exit-codes.js";
import { hostFormat, isHostName, serverMapPaths, serversKey, HOSTS } from "./configs.js";
import type { HostEnvironment, HostName, JsonPath } from "./configs.js";
import { bridgeEntryOf } from "./entries.js";
import { canonicalJson, hostEntries, parseHostText, type HostEntry } from "./files.js";
import { insertProperty, styleOf } from "./json-insert.js";
import { addJsonEntry, removeJsonEntry, rewriteJsonEntry } from "./json-layout.js";
import { pipeEntryServer } from "./pipe-entry.js";
import { hostBody, hostWiredEntry } from "./shapes.js";
import { replaceCodexServers } from "./toml-rewrite.js";
import { unwireFromRows } from "./unwire-rows.js";
import {
  readWiredRecord,
  unwindWired,
  WireEdits,
  writeWiredRecord,
  type WiredEdit,
} from "./wired-record.js";
import { replaceYamlEntries } from "./yaml-rewrite.js";
import {
  hostFile,
  mcpoolCommand,
  mcpoolRows,
  planWire,
  printOutcome,
  wireDiff,
  writeWired,
  type WireOptions,
} from "./wire.js";

/** The pool-wide entry's name in the host's file. */
const POOL_ENTRY = "mcpool";

/** Beside the host's file: the entries the pool-wide entry replaced, for `unwire`. */
export const replacedPath = (file: string): string => `${file}.mcpool-replaced.json`;

interface Replaced {
  entries: { path: JsonPath; value: unknown }[];
}

type Body = Record<string, unknown>;

/** Whether `entry` runs the whole pool's catalogue (`bridge --catalog`, the relay on `@catalog`). */
function isPoolCatalogEntry(host: HostName, entry: unknown): boolean {
  const body = hostBody(host, entry);
  if ("skip" in body) return false;
  const args = (Array.isArray(body.args) ? body.args : []).filter((a) => typeof a === "string");
  if (pipeEntryServer(args)?.startsWith("@catalog") === true) return true;
  return (
    args.includes("bridge") &&
    args.some((a) => a.startsWith("--catalog")) &&
    !args.includes("--server") &&
    !args.includes("--servers")
  );
}

/** The pool-wide entry in `host`'s spelling. */
function poolEntry(
  host: HostName,
  command: readonly string[],
  socket: string,
  args: string[],
): Body {
  const entry = hostWiredEntry(
    TEMPLATES[host] ?? {},
    host,
    undefined,
    command,
    socket,
    undefined,
    args,
  );
  // Continue's block is named by its `name`, written first as Continue's own blocks are.
  return host === "continue" ? { name: POOL_ENTRY, ...entry } : entry;
}

/** The keys besides the connection a host's pool-wide entry has. */
const TEMPLATES: Partial<Record<HostName, Body>> = {
  // GitHub Copilot CLI names a stdio server "local" and lists the tools it may use.
  copilot: { type: "local", tools: ["*"] },
  // Goose's extension names itself, and is on; 300 s is Goose's own default timeout.
  goose: { enabled: true, name: POOL_ENTRY, timeout: 300 },
};

/**
 * The record beside `file` of the entries the pool-wide entry replaced: none when there is no
 * record; a refusal, naming it, when there is one that does not parse (its entries are the
 * only way back to them: never overwritten, never taken for empty).
 */
async function readReplaced(file: string, command: "wire" | "unwire"): Promise<Replaced | string> {
  const at = replacedPath(file);
  let text: string;
  try {
    text = await readFile(at, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [] };
    return `mcpool ${command}: cannot read ${at} (${(error as Error).message}); nothing was changed`;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Replaced> | null;
    if (Array.isArray(parsed?.entries)) return parsed as Replaced;
  } catch {
    // said below
  }
  return `mcpool ${command}: ${at} does not parse as the record of the entries the pool-wide entry replaced (an "entries" list); fix or move it, nothing was changed`;
}

/** Writes `record` to `file`'s record whole (a temporary file renamed over it), or removes it when empty. */
async function writeReplaced(file: string, record: Replaced): Promise<void> {
  const at = replacedPath(file);
  if (record.entries.length === 0) return rm(at, { force: true });
  const tmp = `${at}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, at);
}

/** `mcpool wire HOST --catalog[=auto] --one-entry [--write]`. */
export async function runWireOneEntry(options: WireOptions): Promise<number> {
  const { out, err } = options;
  const opened = await openHost(options, "wire");
  if (typeof opened === "number") return opened;
  const { host, path, text, root } = opened;
  const catalog = options.catalog ?? { mode: "on" };
  const rows = await mcpoolRows(options.configPath);
  if (typeof rows === "string") {
    err(`mcpool wire: cannot read mcpool's config ${options.configPath}: ${rows}`);
    return EXIT.failed;
  }
  const json = hostFormat(host) === "json";
  // The record of what the entry replaces: JSON keeps the entries, TOML and YAML the text.
  const kept = json ? await readReplaced(path, "wire") : { entries: [] };
  const wiredRecord = json ? { edits: [] } : await readWiredRecord(path);
  if (typeof kept === "string" || typeof wiredRecord === "string") {
    err(typeof kept === "string" ? kept : `mcpool wire: ${String(wiredRecord)}`);
    return EXIT.failed;
  }
  const entries = hostEntries(host, root);
  const plan = planWire(host, entries, rows, true);
  // Entries the pool serves: a row's own connection, or an entry wired to one server.
  const replaced = plan.filter((entry) => {
    if (isPoolCatalogEntry(host, entry.value)) return false;
    const body = hostBody(host, entry.value);
    return entry.serverId !== undefined || (!("skip" in body) && bridgeEntryOf(body) !== undefined);
  });
  const mapPath = serverMapPaths(host, root)[0] ?? [serversKey(host)];
  const named = entries.find(
    (entry) => entry.name === POOL_ENTRY && same(entry.path.slice(0, -1), mapPath),
  );
  const goes = (entry: HostEntry): boolean => replaced.some((r) => same(r.path, entry.path));
  if (named && !isPoolCatalogEntry(host, named.value) && !goes(named)) {
    err(
      `mcpool wire: ${path} already has an entry "${POOL_ENTRY}" that is not mcpool's catalogue; rename it, then wire again`,
    );
    return EXIT.failed;
  }
  const args = [
    catalog.mode === "auto" ? "--catalog=auto" : "--catalog",
    ...(catalog.tokens !== undefined ? ["--catalog-tokens", String(catalog.tokens)] : []),
  ];
  const socket = options.socketPath ?? defaultSocketPath();
  const wanted = poolEntry(host, options.command ?? mcpoolCommand(), socket, args);
  const edited = json
    ? jsonPoolEdit(text, replaced, named, mapPath, wanted)
    : textPoolEdit(host, text, replaced, named, wanted);
  if ("why" in edited) {
    err(`mcpool wire: ${path}: ${edited.why}; nothing was changed`);
    return EXIT.failed;
  }
  const next = edited.text;
  const diff = next === text ? "" : wireDiff(host, path, text, next);
  let backup: string | undefined;
  const names = replaced.map((entry) => entry.name);
  if (options.write && next !== text) {
    // The record first: a host file rewritten without it would leave its entries no way back.
    if (json) {
      for (const entry of replaced) {
        if (!kept.entries.some((k) => same(k.path, entry.path))) {
          kept.entries.push({ path: entry.path, value: entry.value });
        }
      }
      await writeReplaced(path, kept);
    } else {
      const edits = new WireEdits(host);
      const label = `${POOL_ENTRY} (the pool-wide catalogue entry${names.length > 0 ? `, in place of ${names.join(", ")}` : ""})`;
      edits.add(label, poolPath(host, next, mapPath), text, next);
      await writeWiredRecord(path, { edits: [...wiredRecord.edits, ...edits.edits] });
    }
    backup = await writeWired(path, next, (options.now ?? (() => new Date()))());
  }
  if (options.json === true) {
    out(
      JSON.stringify(
        {
          host,
          file: path,
          entry: POOL_ENTRY,
          replaced: names,
          diff,
          written: backup !== undefined,
          ...(backup ? { backup } : {}),
        },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  if (next === text) {
    out(`nothing to wire in ${path}: its "${POOL_ENTRY}" entry serves the pool's catalogue`);
    return EXIT.ok;
  }
  out(
    `${POOL_ENTRY} → mcpool bridge ${args.join(" ")} (the whole pool)${names.length > 0 ? `, in place of ${names.join(", ")}` : ""}`,
  );
  printOutcome(out, diff, path, backup);
  return EXIT.ok;
}

/** A JSON host's file with `replaced` taken out and the pool-wide entry `wanted` in. */
function jsonPoolEdit(
  text: string,
  replaced: readonly HostEntry[],
  named: HostEntry | undefined,
  mapPath: JsonPath,
  wanted: Body,
): { text: string } | { why: string } {
  let next = text;
  for (const entry of [...replaced].reverse()) next = removeJsonEntry(next, entry.path) ?? next;
  if (named === undefined || replaced.some((r) => same(r.path, named.path))) {
    return { text: added(next, mapPath, POOL_ENTRY, wanted) };
  }
  const rewritten = rewriteJsonEntry(next, named.path, named.value as Body, wanted);
  return "why" in rewritten ? { why: `the "${POOL_ENTRY}" entry ${rewritten.why}` } : rewritten;
}

/**
 * Codex's TOML or Goose's and Continue's YAML with `replaced` taken out and the pool-wide
 * entry `wanted` in the first one's place; a pool-wide entry already there that is not
 * `wanted` is replaced too. The text editors `wire` uses, each checking its result.
 */
function textPoolEdit(
  host: HostName,
  text: string,
  replaced: readonly HostEntry[],
  named: HostEntry | undefined,
  wanted: Body,
): { text: string } | { why: string } {
  const stale = named !== undefined && canonicalJson(named.value) !== canonicalJson(wanted);
  if (replaced.length === 0 && named !== undefined && !stale) return { text };
  const goes = [...replaced, ...(named !== undefined ? [named] : [])].map((entry) =>
    entry.path.at(-1)!,
  );
  if (host === "codex") {
    const table = {
      name: POOL_ENTRY,
      command: wanted.command as string,
      args: wanted.args as string[],
    };
    return replaceCodexServers(text, goes as string[], table);
  }
  const at = serversKey(host);
  return replaceYamlEntries(
    text,
    at,
    goes,
    host === "continue" ? { value: wanted } : { key: POOL_ENTRY, value: wanted },
  );
}

/** Where the pool-wide entry is in `text` (a list's: its index). */
function poolPath(host: HostName, text: string, mapPath: JsonPath): JsonPath {
  const parsed = parseHostText(hostFormat(host), text);
  const entries = "value" in parsed ? hostEntries(host, parsed.value) : [];
  const entry = entries.find((e) => e.name === POOL_ENTRY && same(e.path.slice(0, -1), mapPath));
  return entry?.path ?? [...mapPath, POOL_ENTRY];
}

/** `mcpool unwire HOST [--write]`: the pool-wide entry and every entry wire rewrote, undone. */
export async function runUnwire(options: WireOptions): Promise<number> {
  const { out, err } = options;
  const opened = await openHost(options, "unwire");
  if (typeof opened === "number") return opened;
  const { host, path, text, root } = opened;
  const json = hostFormat(host) === "json" && host !== "continue";
  const record = json ? await readReplaced(path, "unwire") : { entries: [] };
  const wiredRecord = await readWiredRecord(path);
  if (typeof record === "string" || typeof wiredRecord === "string") {
    err(typeof record === "string" ? record : `mcpool unwire: ${String(wiredRecord)}`);
    return EXIT.failed;
  }
  const pool = json
    ? hostEntries(host, root).filter((entry) => isPoolCatalogEntry(host, entry.value))
    : [];
  let next = text;
  for (const entry of [...pool].reverse()) next = removeJsonEntry(next, entry.path) ?? next;
  const restored: string[] = [];
  const taken: string[] = [];
  /** The entries not put back: they stay in the record. */
  const left: Replaced = { entries: [] };
  if (pool.length > 0) {
    for (const { path: at, value } of record.entries) {
      const name = String(at.at(-1));
      const parsed = parseHostText("json", next);
      const present =
        "value" in parsed && hostEntries(host, parsed.value).some((e) => same(e.path, at));
      if (present) {
        taken.push(name);
        left.entries.push({ path: at, value });
      } else {
        next = added(next, at.slice(0, -1), name, value);
        restored.push(name);
      }
    }
  }
  const unwound = unwindWired(host, next, wiredRecord);
  // A TOML or YAML file's pool-wide entry with no record left: ours by its command, taken out.
  const orphans = json
    ? { text: unwound.text, removed: [], left: [] }
    : withoutPoolEntries(host, unwound.text, unwound.record.edits);
  // Entries wired before wire kept its record: their rows' connections, from mcp.json.
  const fromRows = unwireFromRows(
    host,
    orphans.text,
    await mcpoolRows(options.configPath),
    unwound.record.edits.map((edit) => edit.path),
  );
  next = fromRows.text;
  const diff = next === text ? "" : wireDiff(host, path, text, next, "unwired");
  let backup: string | undefined;
  if (options.write && next !== text) {
    backup = await writeWired(path, next, (options.now ?? (() => new Date()))());
    if (json) await writeReplaced(path, left);
    await writeWiredRecord(path, unwound.record);
  }
  if (options.json === true) {
    const report = {
      host,
      file: path,
      removed: [...pool.map((e) => e.name), ...orphans.removed],
      restored: [...restored, ...unwound.restored],
      fromConfig: fromRows.restored,
      taken,
      left: [...unwound.left, ...orphans.left, ...fromRows.left],
      diff,
    };
    out(
      JSON.stringify(
        { ...report, written: backup !== undefined, ...(backup ? { backup } : {}) },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  for (const name of [...unwound.left, ...orphans.left, ...fromRows.left]) out(`${name}`);
  if (next === text) {
    out(`nothing to unwire in ${path}: no entry is as mcpool wire left it`);
    return EXIT.ok;
  }
  if (pool.length > 0) {
    out(
      `${pool.map((e) => e.name).join(", ")}: the pool-wide catalogue entry goes${restored.length > 0 ? `; back as they were: ${restored.join(", ")}` : ""}`,
    );
  }
  if (orphans.removed.length > 0) {
    out(
      `${orphans.removed.join(", ")}: the pool-wide catalogue entry goes; with no record of the entries it replaced, none comes back (wire's backup beside the file has them)`,
    );
  }
  if (unwound.restored.length > 0) {
    out(`back as they were before wire: ${unwound.restored.join(", ")}`);
  }
  if (fromRows.restored.length > 0) {
    out(
      `back from mcp.json, with no record of what was there before wire (their rows' connections: command, args, env and cwd, or url and headers; what they had beyond those, as comments and spelling, was not kept): ${fromRows.restored.join(", ")}`,
    );
  }
  if (taken.length > 0)
    out(
      `not put back, an entry of that name is there now: ${taken.join(", ")} (kept in ${replacedPath(path)})`,
    );
  printOutcome(out, diff, path, backup);
  return EXIT.ok;
}

/**
 * A TOML or YAML `text` with its pool-wide catalogue entries that no edit of `recorded`
 * covers taken out, by the editor wire uses for the format; one that cannot be is named.
 */
function withoutPoolEntries(
  host: HostName,
  text: string,
  recorded: readonly WiredEdit[],
): { text: string; removed: string[]; left: string[] } {
  const parsed = parseHostText(hostFormat(host), text);
  const entries = "value" in parsed ? hostEntries(host, parsed.value) : [];
  const orphans = entries.filter(
    (entry) =>
      isPoolCatalogEntry(host, entry.value) &&
      !recorded.some((edit) => same(edit.path, entry.path)),
  );
  if (orphans.length === 0) return { text, removed: [], left: [] };
  const goes = orphans.map((entry) => entry.path.at(-1)!);
  const result =
    host === "codex"
      ? replaceCodexServers(text, goes as string[], undefined)
      : replaceYamlEntries(text, serversKey(host), goes, undefined, host === "continue");
  const names = orphans.map((entry) => entry.name);
  return "why" in result
    ? {
        text,
        removed: [],
        left: names.map((name) => `${name} (${result.why.replace("wire it", "take it out")})`),
      }
    : { text: result.text, removed: names, left: [] };
}

/** The host's file, parsed (JSON for wire); or the exit code after saying why not. */
async function openHost(
  options: WireOptions,
  command: "wire" | "unwire",
): Promise<number | { host: HostName; path: string; text: string; root: unknown }> {
  const { err } = options;
  if (!isHostName(options.host)) {
    err(`mcpool ${command}: unknown host "${options.host}" (one of ${HOSTS.join(", ")})`);
    return EXIT.badInput;
  }
  const host = options.host;
  const where: HostEnvironment = options.where ?? {
    home: homedir(),
    platform: process.platform,
    env: process.env,
  };
  const { path, text, error } = await hostFile(host, where);
  if (text === undefined) {
    err(`mcpool ${command}: no ${host} config at ${path} (${error})`);
    return EXIT.failed;
  }
  const parsed = parseHostText(hostFormat(host), text);
  if ("error" in parsed) {
    err(
      `mcpool ${command}: ${path} does not parse (${parsed.error}); fix it first, nothing was changed`,
    );
    return EXIT.failed;
  }
  return { host, path, text, root: parsed.value };
}

/** `text` with `name: value` last in the map at `mapPath`, made when it is missing. */
function added(text: string, mapPath: JsonPath, name: string, value: unknown): string {
  return (
    addJsonEntry(text, mapPath, name, value) ??
    insertProperty(text, mapPath, name, value, styleOf(text))
  );
}

const same = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((part, i) => part === b[i]);
