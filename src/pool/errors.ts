/**
 * McpPoolError: every refusal of the pool carries a stable string code (SPEC C12).
 * Structured detail travels beside the message (`retryAt`, `timeoutMs`, stderr tail),
 * never inside text a caller would have to parse.
 */

export const POOL_ERROR_CODES = [
  "unknown-server",
  "disabled",
  "backoff",
  "connect-failed",
  "connection-lost",
  "unknown-tool",
  "out-of-scope",
  "tool-error",
  "invalid-arguments",
  "timeout",
  "no-configs",
  "pool-full",
  "no-identity",
  "stale-tools",
  "closed",
  "pin-mismatch",
  "not-offered",
  "auth-required",
  "binding-changed",
  "session-expired",
  "server-crashed",
] as const;

export type PoolErrorCode = (typeof POOL_ERROR_CODES)[number];

export interface PoolErrorDetail {
  /** The server the refusal concerns, when there is one. */
  serverId?: string;
  /** For `backoff`: epoch ms at which a dial will be attempted again. */
  retryAt?: number;
  /** For `timeout`: the bound that ran out. */
  timeoutMs?: number;
  /** For `connect-failed` and `connection-lost`: what the child last wrote to stderr. */
  stderr?: string;
  /** For `pool-full`: the budget that is full. */
  limit?: string;
  /** Anything else worth carrying, already free of secrets. */
  [key: string]: unknown;
}

export class McpPoolError extends Error {
  override readonly name = "McpPoolError";
  readonly code: PoolErrorCode;
  readonly detail: PoolErrorDetail;

  constructor(
    code: PoolErrorCode,
    message: string,
    detail: PoolErrorDetail = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = code;
    this.detail = detail;
  }
}

export function isPoolErrorCode(value: unknown): value is PoolErrorCode {
  return typeof value === "string" && (POOL_ERROR_CODES as readonly string[]).includes(value);
}

const HTTP_STATUS: Record<PoolErrorCode, number> = {
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
  // The server does not implement the surface (C15): asking again will not help.
  "not-offered": 501,
  // Only a person signing in (`mcpool login ID`) helps; the server asked for credentials.
  "auth-required": 401,
  // A conversation's tools were listed under share names it no longer has: list again.
  "binding-changed": 409,
  // The server ended a conversation's session; the next call opens a new one.
  "session-expired": 404,
  timeout: 504,
};

/** The HTTP status a gateway should answer a refusal with. */
export function httpStatusFor(code: PoolErrorCode): number {
  return HTTP_STATUS[code];
}
