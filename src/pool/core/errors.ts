/**
 * McpPoolError: every refusal of the pool carries a stable string code.
 * Structured detail travels beside the message (`retryAt`, `timeoutMs`, stderr tail),
 * never inside text a caller would have to parse. The class and its code list are the
 * wire's (mcpool-protocol), so the error the pool throws is the one a client rebuilds.
 */
import type { ErrorCode, ErrorDetail } from "mcpool-protocol";

export {
  isPoolErrorCode,
  McpPoolError,
  POOL_ERROR_CODES,
  type ErrorCode,
  type PoolErrorCode,
} from "mcpool-protocol";

/** The detail of a refusal; the wire's ErrorDetail under the pool's old name. */
export type PoolErrorDetail = ErrorDetail;

const HTTP_STATUS: Record<ErrorCode, number> = {
  "unknown-server": 404,
  disabled: 404,
  "unknown-tool": 404,
  "out-of-scope": 404,
  "invalid-arguments": 400,
  "no-identity": 400,
  "no-configs": 500,
  closed: 503,
  "connect-failed": 502,
  "connection-lost": 502,
  "server-crashed": 502,
  "tool-error": 502,
  backoff: 503,
  "pool-full": 503,
  "stale-tools": 409,
  // A person has to approve the server's new tools; retrying will not help until then.
  "pin-mismatch": 403,
  // The server does not implement the surface: asking again will not help.
  "not-offered": 501,
  // Only a person signing in (`mcpool login ID`) helps; the server asked for credentials.
  "auth-required": 401,
  // A conversation's tools were listed under share names it no longer has: list again.
  "binding-changed": 409,
  // The server ended a conversation's session; the next call opens a new one.
  "session-expired": 404,
  timeout: 504,
  // The tool ran; its answer is too large to send. Asking again answers the same, uncapped.
  "answer-too-large": 502,
  // The old daemon serves on; the restart can be tried again once its cause is fixed.
  "handover-failed": 503,
  // The client's own codes, for a gateway that fronts a PoolClient rather than a pool:
  // no daemon to ask, one that speaks another protocol, or a plain JSON-RPC refusal.
  "daemon-unavailable": 503,
  "protocol-mismatch": 502,
  "rpc-error": 502,
};

/** The HTTP status a gateway should answer a refusal with. */
export function httpStatusFor(code: ErrorCode): number {
  return HTTP_STATUS[code];
}
