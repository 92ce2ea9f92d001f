/**
 * Errors on both sides of the wire. A pool refusal keeps its string code across the socket:
 * the daemon sends it as a JSON-RPC error whose numeric code says "pool error
 * number N" and whose `data` carries `{ code, detail }`; the client rebuilds an McpPoolError
 * with the same `.code` and `.detail`. toWireError and fromWireError are the only two places
 * that convert, one per direction; test/unit/wire-errors.test.ts round-trips every code.
 */
import { isRecord } from "./values.js";

/**
 * The pool's codes. Order matters: a code's index is its wire number. Append only.
 * The pool raises these (src/pool/core/errors.ts re-exports this list); a client sees them.
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
  // The daemon's: an answer over its frame cap, after the tool ran (cap it with maxResultChars).
  "answer-too-large",
  // A restart that hands the servers over did not: the old daemon serves on, and says why.
  "handover-failed",
] as const;

export type PoolErrorCode = (typeof POOL_ERROR_CODES)[number];

/**
 * Codes only the client raises, never the pool:
 * - `daemon-unavailable`: no daemon at the socket, a socket that is not ours, or the
 *   connection dropped while a request was in flight;
 * - `protocol-mismatch`: the daemon speaks another PROTOCOL_VERSION (the daemon also sends
 *   this one, when it refuses a client's hello);
 * - `rpc-error`: the daemon answered with a plain JSON-RPC error (parse error, invalid
 *   params, internal error…); `detail.rpcCode` holds its number.
 */
export const CLIENT_ERROR_CODES = ["daemon-unavailable", "protocol-mismatch", "rpc-error"] as const;

export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

export type ErrorCode = PoolErrorCode | ClientErrorCode;

/** Structured facts about a refusal. */
export interface ErrorDetail {
  /** The server the refusal concerns, when there is one. */
  serverId?: string;
  /** For `backoff`: epoch ms at which a dial will be attempted again. */
  retryAt?: number;
  /** For `timeout`: the bound that ran out. */
  timeoutMs?: number;
  /** For `connect-failed` and `connection-lost`: what the child last wrote to stderr. */
  stderr?: string;
  /**
   * For `connect-failed` and `connection-lost`: the code of what went wrong under the
   * fetch or the spawn (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`, `ENOENT`…).
   */
  causeCode?: string;
  /** For `pool-full`: the budget that is full. */
  limit?: string;
  /** Anything else worth carrying, already free of secrets. */
  [key: string]: unknown;
}

/**
 * A refusal: the one class the pool throws and a client rebuilds from the wire, so
 * `instanceof McpPoolError` holds on either side, and in a process that embeds both.
 */
export class McpPoolError extends Error {
  override readonly name = "McpPoolError";
  readonly code: ErrorCode;
  readonly detail: ErrorDetail;

  constructor(code: ErrorCode, message: string, detail: ErrorDetail = {}, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.detail = detail;
  }
}

const ALL_CODES: readonly string[] = [...POOL_ERROR_CODES, ...CLIENT_ERROR_CODES];

export function isPoolErrorCode(value: unknown): value is PoolErrorCode {
  return typeof value === "string" && (POOL_ERROR_CODES as readonly string[]).includes(value);
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && ALL_CODES.includes(value);
}

/** A JSON-RPC 2.0 error object, as it travels. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/** `data` of a wire error that carries a pool refusal. */
export interface WireErrorData {
  code: ErrorCode;
  detail: ErrorDetail;
}

// JSON-RPC 2.0 reserves -32000..-32099 for implementation-defined server errors. Pool codes
// count down from the top (-32000 - index); client codes count up from the bottom, so the
// pool's list can grow to 97 codes before the two would meet.
const POOL_WIRE_BASE = -32000;
const CLIENT_WIRE_BASE = -32099;

/** The numeric JSON-RPC code a string code travels under. */
export function wireCodeOf(code: ErrorCode): number {
  const pool = (POOL_ERROR_CODES as readonly string[]).indexOf(code);
  if (pool !== -1) return POOL_WIRE_BASE - pool;
  return CLIENT_WIRE_BASE + (CLIENT_ERROR_CODES as readonly string[]).indexOf(code);
}

function codeOfWireNumber(n: number): ErrorCode | undefined {
  return POOL_ERROR_CODES[POOL_WIRE_BASE - n] ?? CLIENT_ERROR_CODES[n - CLIENT_WIRE_BASE];
}

/** The JSON-RPC error that carries a refusal across the socket. */
export function toWireError(code: ErrorCode, message: string, detail: ErrorDetail = {}): WireError {
  const data: WireErrorData = { code, detail };
  return { code: wireCodeOf(code), message, data };
}

/**
 * The McpPoolError a JSON-RPC error stands for. `data.code` wins; a bare number in the
 * reserved range still names its code; any other JSON-RPC error becomes `rpc-error`.
 */
export function fromWireError(error: WireError): McpPoolError {
  const data = isRecord(error.data) ? error.data : undefined;
  const message = typeof error.message === "string" ? error.message : "the daemon refused";
  if (data !== undefined && isErrorCode(data.code)) {
    return new McpPoolError(data.code, message, isRecord(data.detail) ? data.detail : {});
  }
  const code = Number.isInteger(error.code) ? codeOfWireNumber(error.code) : undefined;
  if (code !== undefined) return new McpPoolError(code, message);
  const detail: ErrorDetail = { rpcCode: error.code };
  if (error.data !== undefined) detail.data = error.data;
  return new McpPoolError("rpc-error", message, detail);
}
