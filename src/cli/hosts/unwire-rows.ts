/**
 * `mcpool unwire` of entries wired before `wire` kept its record (`wired-record.ts`): an entry
 * that still points at the pool for one server — `mcpool bridge --server ID`, the perl relay,
 * a stock pipe to `mcp/ID.sock` — with no record of what was there gets the connection of the
 * row it names in mcpool's `mcp.json` (command, args, env, cwd), written in the host's
 * spelling by the editor `wire` uses for the format; its other keys stay. What it had before
 * wire that mcp.json does not hold (its own spelling, comments) cannot be known: unwire says
 * which entries came back from mcp.json rather than from a record. A row mcpool no longer has,
 * or an http row, leaves the entry as it is, named.
 */
import type { McpServerConfig } from "../../config/rows.js";
import { hostFormat, type HostName } from "./configs.js";
import { bridgeEntryOf } from "./entries.js";
import { hostEntries, parseHostText, type HostEntry } from "./files.js";
import { rewriteJsonEntry } from "./json-layout.js";
import { hostBody, hostConnectionKeys } from "./shapes.js";
import { rewriteCodexServer } from "./toml-rewrite.js";
import { rewriteYamlEntry } from "./yaml-rewrite.js";

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export interface FromRows {
  text: string;
  /** Entries given back their row's connection. */
  restored: string[];
  /** Entries left pointing at the pool: `name (why)`. */
  left: string[];
}

/** A stdio row's connection in `host`'s spelling, `type` kept as the entry had it. */
function rowConnection(
  host: HostName,
  entry: Body,
  row: Extract<McpServerConfig, { transport: "stdio" }>,
): Body {
  const env = row.env !== undefined && Object.keys(row.env).length > 0 ? row.env : undefined;
  const args = row.args ?? [];
  switch (host) {
    case "opencode":
    case "kilo":
      return {
        type: "local",
        command: [row.command, ...args],
        ...(env ? { environment: env } : {}),
      };
    case "goose":
      return { type: "stdio", cmd: row.command, args, ...(env ? { envs: env } : {}) };
    default:
      return {
        ...(entry.type !== undefined ? { type: entry.type } : {}),
        command: row.command,
        ...(args.length > 0 || host === "codex" ? { args } : {}),
        ...(env ? { env } : {}),
        ...(row.cwd !== undefined ? { cwd: row.cwd } : {}),
      };
  }
}

/** `text` with `entry` given `connection` in place of the pool's, by the format's editor. */
function rewritten(
  host: HostName,
  text: string,
  entry: HostEntry,
  connection: Body,
): { text: string } | { why: string } {
  const keys = hostConnectionKeys(host);
  const value = entry.value as Body;
  const wanted: Body = { ...connection };
  for (const [key, kept] of Object.entries(value)) if (!keys.has(key)) wanted[key] = kept;
  const format = hostFormat(host);
  if (format === "toml") {
    const { command, args, ...more } = connection;
    return rewriteCodexServer(
      text,
      entry.name,
      command as string,
      args as string[],
      keys,
      more as Record<string, string | Record<string, string>>,
    );
  }
  if (format === "yaml") return rewriteYamlEntry(text, entry.path, wanted, keys);
  return rewriteJsonEntry(text, entry.path, value, wanted);
}

/**
 * `text` with every entry pointing at one server of the pool, and not in `recorded` (the
 * paths wire's record still holds), given back its row's connection from `rows`.
 */
export function unwireFromRows(
  host: HostName,
  text: string,
  rows: readonly McpServerConfig[] | string,
  recorded: readonly (readonly unknown[])[],
): FromRows {
  const restored: string[] = [];
  const left: string[] = [];
  let next = text;
  const parsed = parseHostText(hostFormat(host), text);
  const entries = "value" in parsed ? hostEntries(host, parsed.value) : [];
  for (const entry of entries) {
    if (!isObject(entry.value)) continue;
    if (recorded.some((path) => JSON.stringify(path) === JSON.stringify(entry.path))) continue;
    const body = hostBody(host, entry.value);
    const wired = "skip" in body ? undefined : bridgeEntryOf(body);
    if (wired === undefined) continue;
    const id = wired.serverId;
    const row = typeof rows === "string" ? undefined : rows.find((r) => r.id === id);
    if (typeof rows === "string") {
      left.push(`${entry.name} (mcpool's config cannot be read: ${rows})`);
    } else if (row === undefined) {
      left.push(`${entry.name} (mcpool has no server "${id}" to take its connection from)`);
    } else if (row.transport !== "stdio") {
      left.push(`${entry.name} (server "${id}" is an http row: put its url back by hand)`);
    } else {
      const result = rewritten(host, next, entry, rowConnection(host, entry.value, row));
      if ("why" in result) left.push(`${entry.name} (${result.why.replace("wire", "unwire")})`);
      else {
        next = result.text;
        restored.push(entry.name);
      }
    }
  }
  return { text: next, restored, left };
}
