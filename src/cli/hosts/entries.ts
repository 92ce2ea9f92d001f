/**
 * One server entry as each host spells it, both ways: `toMcpBody` turns a host's
 * entry into the `mcp.json` body mcpool reads (what `import` adds and what `wire` matches
 * against mcpool's rows), and `wiredEntry` turns it into the host's own spelling of
 * `mcpool bridge --server ID`, keeping every key that is not part of the connection.
 * Entries that name a transport mcpool does not speak (SSE), or that are a host's built-in
 * rather than a server, come back as `{ skip: why }`.
 */
import type { HostName } from "./configs.js";
import { isPipeEntry, pipeEntryServer, type PipeEntry } from "./pipe-entry.js";

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const SSE_WHY =
  "SSE servers are not supported: mcpool speaks Streamable HTTP. Most servers serve it at the same host, often under /mcp";

/**
 * Keys that make up a connection in each host's format; a wired entry drops them all and
 * keeps the rest (`autoApprove`, `timeout`, `trust`, `description`…).
 */
const CONNECTION_KEYS: Record<
  "json" | "opencode" | "zed" | "codex" | "goose",
  ReadonlySet<string>
> = {
  json: new Set([
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
  ]),
  opencode: new Set(["type", "command", "environment", "url", "headers"]),
  zed: new Set(["command", "args", "env", "url", "headers"]),
  codex: new Set([
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
  ]),
  goose: new Set(["type", "cmd", "args", "envs", "env_keys", "uri", "headers"]),
};

export function connectionKeys(host: HostName): ReadonlySet<string> {
  return host === "opencode" || host === "zed" || host === "codex" || host === "goose"
    ? CONNECTION_KEYS[host]
    : CONNECTION_KEYS.json;
}

/** Gemini CLI expands `$VAR` as well as `${VAR}`; mcpool only the latter. */
const GEMINI_VARIABLE = /\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** OpenCode's variable substitution is `{env:VAR}`. */
const OPENCODE_VARIABLE = /\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Every string in `value` with the host's own variable syntax spelled `${VAR}`. */
function bracePlaceholders(value: unknown, variable: RegExp): unknown {
  if (typeof value === "string") return value.replace(variable, "$${$1}");
  if (Array.isArray(value)) return value.map((v) => bracePlaceholders(v, variable));
  if (isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, bracePlaceholders(v, variable)]),
    );
  }
  return value;
}

/** Keys of `from` copied to a new object when they are set (not undefined or null). */
function pick(from: Body, keys: readonly string[]): Body {
  const out: Body = {};
  for (const key of keys) if (from[key] != null) out[key] = from[key];
  return out;
}

function codexBody(entry: Body): Body {
  const body = pick(entry, ["command", "args", "env", "cwd", "url"]);
  const headers: Record<string, unknown> = isObject(entry.http_headers)
    ? { ...entry.http_headers }
    : {};
  // Codex sends `Authorization: Bearer <$VAR>`, and `env_http_headers` maps a header to a variable.
  if (typeof entry.bearer_token_env_var === "string") {
    headers.Authorization = `Bearer \${${entry.bearer_token_env_var}}`;
  }
  if (isObject(entry.env_http_headers)) {
    for (const [name, variable] of Object.entries(entry.env_http_headers)) {
      headers[name] = `\${${String(variable)}}`;
    }
  }
  if (Object.keys(headers).length > 0) body.headers = headers;
  if (entry.enabled === false) body.disabled = true;
  return body;
}

function openCodeBody(entry: Body): Body | { skip: string } {
  const off = entry.enabled === false || entry.disabled === true ? { disabled: true } : {};
  if (entry.type === "remote") {
    return { type: "http", ...pick(entry, ["url", "headers"]), ...off };
  }
  const [command, ...args] = Array.isArray(entry.command) ? entry.command : [entry.command];
  return {
    command,
    ...(args.length > 0 ? { args } : {}),
    ...(entry.environment !== undefined ? { env: entry.environment } : {}),
    ...off,
  };
}

function zedBody(entry: Body): Body | { skip: string } {
  const off = entry.enabled === false ? { disabled: true } : {};
  // Before the flat shape, Zed nested the process: `"command": { "path", "args", "env" }`.
  if (isObject(entry.command)) {
    const { path, args, env } = entry.command;
    return { command: path, ...pick({ args, env }, ["args", "env"]), ...off };
  }
  if (entry.command === undefined && entry.url === undefined) {
    return {
      skip: "a Zed extension's server: Zed starts it from the extension, with no command here",
    };
  }
  return { ...pick(entry, ["command", "args", "env", "url", "headers"]), ...off };
}

function gooseBody(entry: Body): Body | { skip: string } {
  const off = entry.enabled === false ? { disabled: true } : {};
  const env: Body = isObject(entry.envs) ? { ...entry.envs } : {};
  // `env_keys` are secrets Goose keeps in the keyring: the daemon takes them from its environment.
  for (const key of Array.isArray(entry.env_keys) ? entry.env_keys : []) {
    if (typeof key === "string" && !(key in env)) env[key] = `\${${key}}`;
  }
  const withEnv = Object.keys(env).length > 0 ? { env } : {};
  switch (entry.type) {
    case "stdio":
      return { command: entry.cmd, ...pick(entry, ["args"]), ...withEnv, ...off };
    case "streamable_http":
      return { type: "http", url: entry.uri, ...pick(entry, ["headers"]), ...off };
    case "sse":
      return { skip: SSE_WHY };
    default:
      return {
        skip: `a Goose ${String(entry.type)} extension, part of Goose rather than an MCP server`,
      };
  }
}

/** A host's entry as an `mcp.json` body, or why it cannot be one. */
export function toMcpBody(host: HostName, entry: unknown): Body | { skip: string } {
  if (!isObject(entry)) return { skip: "a server must be an object" };
  switch (host) {
    case "codex":
      return codexBody(entry);
    case "opencode":
      return openCodeBody(bracePlaceholders(entry, OPENCODE_VARIABLE) as Body);
    case "zed":
      return zedBody(entry);
    case "goose":
      return gooseBody(entry);
    case "gemini": {
      // Gemini's `url` is SSE unless `type` says http; `httpUrl` is Streamable HTTP.
      if (entry.url !== undefined && entry.httpUrl === undefined && entry.type !== "http") {
        return { skip: `${SSE_WHY}; give it "httpUrl" instead of "url"` };
      }
      return bracePlaceholders(entry, GEMINI_VARIABLE) as Body;
    }
    case "windsurf": {
      const { serverUrl, ...rest } = entry;
      return serverUrl === undefined ? entry : { ...rest, url: serverUrl };
    }
    case "cline":
      // Cline reads a `url` with no type as SSE; Streamable HTTP is `"type": "streamableHttp"`.
      if (entry.url !== undefined && (entry.type ?? entry.transportType ?? "sse") === "sse") {
        return { skip: `${SSE_WHY}; Cline reads a url with no "type" as SSE` };
      }
      return entry;
    default:
      // Claude Code, Cursor and VS Code spell an SSE server `"type": "sse"`.
      if (entry.type === "sse" || entry.transport === "sse") return { skip: SSE_WHY };
      return entry;
  }
}

/**
 * Whether an http row's url looks like an SSE endpoint (`…/sse`): imported as Streamable HTTP,
 * which a server that speaks only the old SSE transport refuses, so import says so.
 */
export function looksLikeSse(url: string): boolean {
  try {
    return /\/sse\/?$/i.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/**
 * The server a wired entry (`mcpool bridge --server ID …`, the relay `mcpool-pipe.pl ID …`, or
 * a pipe to `mcp/ID.sock`) serves,
 * and whether it is in catalog mode; undefined for any other entry.
 */
export function bridgeEntryOf(body: Body): { serverId: string; catalog: boolean } | undefined {
  const args = Array.isArray(body.args) ? body.args : [];
  const catalog = args.some((a) => typeof a === "string" && a.startsWith("--catalog"));
  const at = args.indexOf("--server");
  if (args.includes("bridge") && at !== -1 && typeof args[at + 1] === "string") {
    return { serverId: args[at + 1] as string, catalog };
  }
  // A pipe to one server's socket; `@…` are the pool's own, no server's.
  const id = pipeEntryServer(args);
  return id !== undefined && !id.startsWith("@") ? { serverId: id, catalog: false } : undefined;
}

/** Whether a host's entry already starts `mcpool bridge --server …`. */
export function isBridgeBody(body: Body): boolean {
  const args = Array.isArray(body.args) ? body.args : [];
  return (args.includes("bridge") && args.includes("--server")) || isPipeEntry(args);
}

/** The entry a wired server gets in `host`'s spelling: the bridge, the entry's other keys kept. */
export function wiredEntry(
  original: Body,
  host: HostName,
  /** Undefined: the whole pool (a pool-wide catalogue entry, one-entry.ts). */
  serverId: string | undefined,
  command: readonly string[],
  socketPath: string | undefined,
  /** A stock pipe to the daemon's MCP socket (pipe-entry.ts), instead of `mcpool bridge`. */
  pipe?: PipeEntry,
  /** More of the bridge's flags (`--catalog`); unused with a pipe. */
  bridgeArgs: readonly string[] = [],
): Body {
  const [file, ...args] = pipe
    ? [pipe.command, ...pipe.args]
    : [
        ...command,
        "bridge",
        ...(serverId !== undefined ? ["--server", serverId] : []),
        ...bridgeArgs,
        ...(socketPath !== undefined ? ["--socket", socketPath] : []),
      ];
  const entry: Body = {};
  if (host === "opencode") {
    entry.type = "local";
    entry.command = [file, ...args];
  } else if (host === "goose") {
    entry.type = "stdio";
    entry.cmd = file;
    entry.args = args;
  } else {
    // VS Code's format names the transport; keep a `type` wherever the entry had one.
    if (host === "vscode" || ("type" in original && host !== "zed")) entry.type = "stdio";
    entry.command = file;
    entry.args = args;
  }
  const connection = connectionKeys(host);
  for (const [key, value] of Object.entries(original)) {
    if (!connection.has(key) && !(key in entry)) entry[key] = value;
  }
  return entry;
}
