/**
 * sameConnection: only the fields a connection is made of decide whether an edit
 * restarts a server. Absent and empty are the same.
 */
import type { HttpServerConfig, McpServerConfig } from "./rows.js";

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((value, i) => value === y[i]);
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const x = Object.entries(a ?? {});
  const y = b ?? {};
  return x.length === Object.keys(y).length && x.every(([key, value]) => y[key] === value);
}

/** OAuth settings compared by value: a new client, key or scope list signs in afresh. */
function sameAuth(a: HttpServerConfig["auth"], b: HttpServerConfig["auth"]): boolean {
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  const { scopes: x, ...restA } = a;
  const { scopes: y, ...restB } = b;
  return sameMap(restA, restB) && sameList(x, y);
}

/** Whether two rows dial the same thing, so an edit between them needs no restart. */
export function sameConnection(a: McpServerConfig, b: McpServerConfig): boolean {
  // The era is spoken on the connection: a new pin dials again.
  if ((a.protocol ?? "auto") !== (b.protocol ?? "auto")) return false;
  if (a.transport === "stdio" && b.transport === "stdio") {
    return (
      a.command === b.command &&
      sameList(a.args, b.args) &&
      sameMap(a.env, b.env) &&
      (a.cwd ?? "") === (b.cwd ?? "")
    );
  }
  if (a.transport === "http" && b.transport === "http") {
    return a.url === b.url && sameMap(a.headers, b.headers) && sameAuth(a.auth, b.auth);
  }
  return false;
}
