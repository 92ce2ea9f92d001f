/**
 * Environment placeholders in rows: `${VAR}`, `${VAR:-default}` and `${env:VAR}`
 * (VS Code's spelling, also with `:-default`) in command, args, env values, cwd, url,
 * header values and the strings of an `auth` object (a client secret, a key, its file).
 *
 * Rows keep their placeholders as written: they are expanded only when a transport is
 * built, so a resolved secret exists in the connecting process's memory and nowhere else —
 * never in a file a config writer saves, in status, in events or in the tools cache.
 * Browser-safe: no `node:` imports; `process.env` is read through `globalThis` when there is
 * one, and a browser has none.
 */
import type { HttpServerConfig, McpServerConfig } from "./rows.js";

/** Variables to resolve placeholders against; `undefined` is unset. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * `${NAME}`, `${env:NAME}`, each optionally with `:-default`. A name is a shell name; a
 * default runs to the first `}`. Anything else that starts with `${` (VS Code's
 * `${input:…}`, `${workspaceFolder:…}`) is not ours and is left alone.
 */
const PLACEHOLDER = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** process.env where the runtime has one; nothing in a browser. */
export function defaultEnvironment(): Environment {
  const host = globalThis as { process?: { env?: Environment } };
  return host.process?.env ?? {};
}

/** Whether a string holds at least one placeholder. */
export function hasPlaceholders(value: string): boolean {
  PLACEHOLDER.lastIndex = 0;
  const found = PLACEHOLDER.test(value);
  PLACEHOLDER.lastIndex = 0;
  return found;
}

/**
 * One string with its placeholders filled from `env`. The `:-default` form has the shell's
 * meaning: the default stands in when the variable is unset or empty; `${VAR}` of a
 * variable set to "" is "". A variable that is unset and has no default is left verbatim —
 * a literal `${…}` failing loudly at the server beats an empty token failing mysteriously —
 * and its name is passed to `onUnset`.
 */
export function expandPlaceholders(
  value: string,
  env: Environment = defaultEnvironment(),
  onUnset?: (name: string) => void,
): string {
  return value.replace(PLACEHOLDER, (whole, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (fallback !== undefined) return found === undefined || found === "" ? fallback : found;
    if (found !== undefined) return found;
    onUnset?.(name);
    return whole;
  });
}

/** The names of the variables a string's placeholders read, in order, each once. */
export function placeholderNames(value: string): string[] {
  const names: string[] = [];
  for (const match of value.matchAll(PLACEHOLDER)) {
    const name = match[1]!;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

function mapValues(
  record: Readonly<Record<string, string>>,
  map: (value: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) out[key] = map(value);
  return out;
}

/** A copy of the row with `map` applied to every field placeholders may appear in. */
function mapConnectionStrings(
  row: McpServerConfig,
  map: (value: string) => string,
): McpServerConfig {
  if (row.transport === "stdio") {
    return {
      ...row,
      command: map(row.command),
      ...(row.args !== undefined ? { args: row.args.map(map) } : {}),
      ...(row.env !== undefined ? { env: mapValues(row.env, map) } : {}),
      ...(row.cwd !== undefined ? { cwd: map(row.cwd) } : {}),
    };
  }
  return {
    ...row,
    url: map(row.url),
    ...(row.headers !== undefined ? { headers: mapValues(row.headers, map) } : {}),
    ...(typeof row.auth === "object" ? { auth: mapAuth(row.auth, map) } : {}),
  };
}

/** An `auth` object with `map` applied to its strings and scopes; the grant is a keyword. */
function mapAuth(
  auth: Exclude<HttpServerConfig["auth"], "oauth" | undefined>,
  map: (value: string) => string,
): typeof auth {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(auth)) {
    if (key === "grant") out[key] = value;
    else if (typeof value === "string") out[key] = map(value);
    else if (Array.isArray(value))
      out[key] = value.map((v) => (typeof v === "string" ? map(v) : v));
    else out[key] = value;
  }
  return out as typeof auth;
}

/**
 * The row a transport is built from: a copy with every placeholder in command, args, env
 * values, cwd, url, header values and `auth` strings filled from `env`. Never store what this returns.
 * `onUnset` hears the name of each variable left verbatim, once per occurrence.
 */
export function expandServerConfig(
  row: McpServerConfig,
  env: Environment = defaultEnvironment(),
  onUnset?: (name: string) => void,
): McpServerConfig {
  return mapConnectionStrings(row, (value) => expandPlaceholders(value, env, onUnset));
}

/** The variables a row reads that are unset in `env` and have no default, each once. */
export function unsetVariables(row: McpServerConfig, env: Environment): string[] {
  const names: string[] = [];
  expandServerConfig(row, env, (name) => {
    if (!names.includes(name)) names.push(name);
  });
  return names;
}

/**
 * A row from a source that must never read this process's environment (a project's file,
 * a paste from elsewhere): every placeholder resolved now to its `:-default`, else to "",
 * so the transport's own expansion has nothing of this process's secrets to put into a
 * command, an env value, a url or a header.
 */
export function withoutEnvPlaceholders(row: McpServerConfig): McpServerConfig {
  return mapConnectionStrings(row, (value) => {
    // Until none is left: `${A:-${B}}` resolves to `${B}`, which must not survive to be
    // expanded later. Each pass makes the string shorter, so this ends.
    let out = value;
    while (hasPlaceholders(out)) {
      out = out.replace(PLACEHOLDER, (_whole, _name: string, fallback: string | undefined) =>
        fallback === undefined ? "" : fallback,
      );
    }
    return out;
  });
}
