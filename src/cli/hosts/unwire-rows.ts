/**
 * `mcpool unwire` of entries wired before `wire` kept its record (`wired-record.ts`): an entry
 * that still points at the pool for one server — `mcpool bridge --server ID`, the perl relay,
 * a stock pipe to `mcp/ID.sock` — with no record of what was there gets the connection of the
 * row it names in mcpool's `mcp.json` — a stdio row's command, args, env and cwd, an http
 * row's url and headers — written in the host's spelling by the editor `wire` uses for the
 * format; its other keys stay. The connection written is read back as `import` would read it
 * and must be the row's, or the entry is left as it is, named. What it had before wire that
 * mcp.json does not hold (its own spelling, comments) cannot be known: unwire says which
 * entries came back from mcp.json rather than from a record. A row mcpool no longer has
 * leaves the entry as it is, named.
 */
import { normalizeBody } from "../../config/mcp-json.js";
import type { McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";
import { hostFormat, type HostName } from "./configs.js";
import { bridgeEntryOf } from "./entries.js";
import { hostEntries, parseHostText, type HostEntry } from "./files.js";
import { rewriteJsonEntry } from "./json-layout.js";
import { hostBody, hostConnectionKeys } from "./shapes.js";
import { rewriteCodexTable, type TomlValue } from "./toml-rewrite.js";
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

/** `record` when it holds a key, else undefined: an empty env or headers is not written. */
const nonEmpty = <T extends object>(record: T | undefined): T | undefined =>
  record !== undefined && Object.keys(record).length > 0 ? record : undefined;

type StdioRow = Extract<McpServerConfig, { transport: "stdio" }>;
type HttpRow = Extract<McpServerConfig, { transport: "http" }>;

/** A stdio row's connection in `host`'s spelling, `type` kept as the entry had it. */
function stdioConnection(host: HostName, entry: Body, row: StdioRow): Body {
  const env = nonEmpty(row.env);
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

/** A whole `${VAR}`: the variable's name. */
const VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * An http row's url and headers as Codex writes them: `Authorization: Bearer ${VAR}` as
 * `bearer_token_env_var`, a header that is a whole `${VAR}` in `env_http_headers`, the rest
 * in `http_headers` (as `import` reads them, developers.openai.com/codex/mcp).
 */
function codexHttp(row: HttpRow): Body {
  const plain: Record<string, string> = {};
  const fromEnv: Record<string, string> = {};
  let bearer: string | undefined;
  for (const [name, value] of Object.entries(row.headers ?? {})) {
    const token = name === "Authorization" ? /^Bearer (\$\{.+\})$/.exec(value)?.[1] : undefined;
    const variable = VARIABLE.exec(token ?? value)?.[1];
    if (token !== undefined && variable !== undefined) bearer = variable;
    else if (variable !== undefined) fromEnv[name] = variable;
    else plain[name] = value;
  }
  return {
    url: row.url,
    ...(bearer !== undefined ? { bearer_token_env_var: bearer } : {}),
    ...(Object.keys(plain).length > 0 ? { http_headers: plain } : {}),
    ...(Object.keys(fromEnv).length > 0 ? { env_http_headers: fromEnv } : {}),
  };
}

/**
 * An http row's connection in `host`'s spelling (each host's documented remote entry, as
 * shapes.ts and entries.ts read them); `type` written where the host needs one to read a
 * url as Streamable HTTP, or where the entry had one.
 */
function httpConnection(host: HostName, entry: Body, row: HttpRow): Body {
  const headers = nonEmpty(row.headers);
  const withHeaders = headers ? { headers } : {};
  const typed = (type: string): Body => (entry.type !== undefined ? { type } : {});
  switch (host) {
    case "codex":
      return codexHttp(row);
    case "opencode":
    case "kilo":
      return { type: "remote", url: row.url, ...withHeaders };
    case "goose":
      return { type: "streamable_http", uri: row.url, ...withHeaders };
    case "continue":
      return {
        ...typed("streamable-http"),
        url: row.url,
        ...(headers ? { requestOptions: { headers } } : {}),
      };
    case "gemini":
    case "qwen":
      return { httpUrl: row.url, ...withHeaders };
    case "windsurf":
      return { ...typed("http"), serverUrl: row.url, ...withHeaders };
    case "cline":
    case "cline-cli":
      return { type: "streamableHttp", url: row.url, ...withHeaders };
    case "vscode":
      return { type: "http", url: row.url, ...withHeaders };
    case "zed":
      return { url: row.url, ...withHeaders };
    default:
      return { ...typed("http"), url: row.url, ...withHeaders };
  }
}

/** A row's connection alone: what it dials, without the era pin or sign-in a host's entry lacks. */
function dialled(row: McpServerConfig): McpServerConfig {
  const { protocol: _protocol, ...rest } = row;
  if (rest.transport === "stdio") return rest;
  const { auth: _auth, ...http } = rest;
  return http;
}

/** The row's connection in `host`'s spelling, or why it cannot be said there. */
function rowConnection(
  host: HostName,
  entry: Body,
  row: McpServerConfig,
): { connection: Body } | { why: string } {
  const connection =
    row.transport === "stdio"
      ? stdioConnection(host, entry, row)
      : httpConnection(host, entry, row);
  // Read back as import reads the host's entry, it must be the row's connection.
  const body = hostBody(host, connection);
  const back = "skip" in body ? undefined : normalizeBody(row.id, body);
  if (back !== undefined && "row" in back && sameConnection(dialled(back.row), dialled(row))) {
    return { connection };
  }
  const what = row.transport === "stdio" ? "command, args, env and cwd" : "url and headers";
  return {
    why: `${host}'s entry cannot say its row's ${what} as mcp.json has them; put it back by hand`,
  };
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
    return rewriteCodexTable(text, entry.name, connection as Record<string, TomlValue>, keys);
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
    } else {
      const made = rowConnection(host, entry.value, row);
      const result = "why" in made ? made : rewritten(host, next, entry, made.connection);
      if ("why" in result) left.push(`${entry.name} (${result.why.replace("wire", "unwire")})`);
      else {
        next = result.text;
        restored.push(entry.name);
      }
    }
  }
  return { text: next, restored, left };
}
