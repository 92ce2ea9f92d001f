/**
 * The pool's errors as a 2026-07-28 host reads them: SDK v2's ProtocolError, with the code,
 * message and data a server sent, and a resource not found in the modern shape.
 */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { RESOURCE_NOT_FOUND, unprefixed } from "../core/errors.js";

/**
 * A resource not found, as 2026-07-28 says it (SEP-2164): `-32602` with the URI in `data`.
 * The legacy code (-32002: the pool's own answer for a URI no server in scope has, and a
 * legacy server's) reaches a modern host as the modern one, naming the URI even when the
 * server's error named none (SDK v2 maps the code alone); a modern server's is its own.
 */
export function notFoundAsModern(error: unknown, uri: string): unknown {
  if (!(error instanceof ProtocolError) || error.code !== RESOURCE_NOT_FOUND) return error;
  const data = typeof error.data === "object" && error.data !== null ? error.data : {};
  return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { ...data, uri });
}

/** A v1 McpError (errors.ts) as the v2 SDK's ProtocolError, code, message and data kept. */
export function asProtocolError(error: unknown): unknown {
  if (error instanceof ProtocolError) return error;
  const { code, message } = error as { code?: unknown; message?: string };
  let { data } = error as { data?: unknown };
  // A pooled server's own refusal (errors.ts keeps its code): its own data, as it sent it.
  const detail = (data as { detail?: { mcpCode?: unknown; data?: unknown } } | undefined)?.detail;
  if (typeof detail?.mcpCode === "number") data = detail.data;
  if (typeof code === "number") {
    const text = error instanceof Error ? unprefixed(code, error) : (message ?? "");
    return new ProtocolError(code, text, data);
  }
  return error;
}
