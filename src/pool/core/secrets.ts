/**
 * Keeping a row's secrets out of what the pool reports. A server that fails can
 * say anything: a child prints its token in a traceback, a remote answers 401 quoting the
 * bearer it was sent. Every message the pool builds from such text — status, events, logs,
 * errors, probe results — passes through `redactSecrets` with the row's secret values:
 * its env and header values and its OAuth client secret or key, ID token and IdP client
 * secret, as written and as expanded from placeholders.
 */
import { expandPlaceholders, type Environment } from "../../config/placeholders.js";
import type { McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "./errors.js";

/** What a secret is replaced with. */
export const REDACTED = "[redacted]";

/**
 * Values shorter than this are not redacted: a `DEBUG: "1"` or a port number would blank
 * every digit of a message and hide nothing worth hiding.
 */
const MIN_SECRET_LENGTH = 6;

/** The values of a row's env and headers, as written and as expanded, longest first. */
export function secretValues(row: McpServerConfig, env: Environment): string[] {
  const map = row.transport === "stdio" ? row.env : row.headers;
  const values = new Set<string>();
  for (const written of Object.values(map ?? {})) {
    if (typeof written !== "string") continue;
    const expanded = expandPlaceholders(written, env);
    const tokens = row.transport === "http" ? bearerTokens(expanded) : [];
    for (const value of [written, expanded, ...tokens]) {
      if (value.length >= MIN_SECRET_LENGTH) values.add(value);
    }
  }
  // The OAuth secrets of the row are too, as written and as expanded.
  const auth = row.transport === "http" && typeof row.auth === "object" ? row.auth : undefined;
  for (const written of [
    auth?.clientSecret,
    auth?.privateKey,
    auth?.idToken,
    auth?.idpClientSecret,
  ]) {
    if (typeof written !== "string") continue;
    for (const value of [written, expandPlaceholders(written, env)]) {
      if (value.length >= MIN_SECRET_LENGTH) values.add(value);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** A header's `Bearer abc` is also quoted back as `abc`. */
function bearerTokens(value: string): string[] {
  const match = /^\s*[A-Za-z][\w-]*\s+(\S+)\s*$/.exec(value);
  return match ? [match[1]!] : [];
}

/** `text` with every occurrence of every secret replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  return out;
}

/** A pool error whose message and string details carry no secret; the same error if clean. */
export function redactPoolError(error: McpPoolError, secrets: readonly string[]): McpPoolError {
  if (secrets.length === 0) return error;
  const message = redactSecrets(error.message, secrets);
  let changed = message !== error.message;
  const detail: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error.detail)) {
    const clean = typeof value === "string" ? redactSecrets(value, secrets) : value;
    if (clean !== value) changed = true;
    detail[key] = clean;
  }
  // The cause stays: it never leaves this process, and a debugger may want it.
  return changed
    ? new McpPoolError(error.code, message, detail, { cause: error.cause ?? error })
    : error;
}
