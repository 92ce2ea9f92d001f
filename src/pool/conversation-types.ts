/**
 * The public shapes of per-conversation servers (SPEC B9): counts, reports and the answers
 * of terminate() and listings. Plain data, so the daemon sends them over its socket
 * unchanged; none of them carries an identity value, a session id, an argument or a result.
 */
import type { PoolErrorCode } from "./errors.js";
import type { SessionEndOutcome } from "./session-end.js";
import type { ToolDefinition } from "./types.js";

export type { ConversationIdentity, ConversationSelector } from "./identity.js";
export type { SessionEndOutcome } from "./session-end.js";
export type { ConversationRowOptions, SessionMode, ShareNames } from "../config/conversation.js";

/** The budget a `pool-full` refusal names in `detail.limit`. */
export type ConversationLimit = "pool" | "principal" | "ending" | "operations";

/** Why a conversation's client ended. */
export type ConversationEndReason =
  /** terminate() asked for it. */
  | "terminated"
  /** Unused for `idleMs`, swept at the next use of the row (or sweep()). */
  | "idle"
  /** Ended to make room for another conversation. */
  | "evicted"
  /** Its connection closed under it (a child that died): the next call opens a new one. */
  | "lost"
  /** The server answered 404 for the session it had issued. */
  | "expired"
  /** Its row left the configuration, or stopped being a conversation row. */
  | "removed"
  /** Its row's connection fields changed: new calls get a client on the new row. */
  | "changed"
  /** stop() or reconnect() of its row. */
  | "stopped"
  /** The pool closed. */
  | "shutdown";

/** Counts only: what a row's conversation clients are doing now, and what was left behind. */
export interface ConversationStats {
  /** Open clients, opening ones included. */
  clients: number;
  /** Open clients held by a lease or an operation. */
  inUse: number;
  /** Open clients nobody holds: the ones eviction and sweeping may end. */
  idle: number;
  /** Clients still connecting. */
  opening: number;
  /** Endings in progress (each holds an ending slot). */
  ending: number;
  /** Calls, listings and endings charged to the row. */
  operations: number;
  /** Endings whose terminate() was answered before they finished. */
  unsettled: number;
  /** Endings that finished without ending the remote session (not-offered, failed, timed-out, handle-lost). */
  unresolvedEndings: number;
  /** Leases held. */
  leases: number;
  /** Tool listings kept (shared and per client). */
  listings: number;
}

export interface ConversationServerStats extends ConversationStats {
  serverId: string;
}

/** One conversation ended by terminate(). */
export interface TerminateResult {
  serverId: string;
  /** The conversation, as the caller named it. */
  conversationId: string;
  keyHash: string;
  outcome: SessionEndOutcome;
  /** True only for `terminated`, `already-gone` and `no-session`. */
  resolved: boolean;
  /** The DELETE's HTTP status, when one was answered. */
  status?: number;
  durationMs: number;
}

/** One listing: the definitions, and per server the binding a call may present. */
export interface ConversationTools {
  tools: ToolDefinition[];
  /** Server id → the binding of the listing these tools came from (CallOptions.bindings). */
  bindings: Record<string, string>;
  /** Rows whose listing was refused (pool-full, connect-failed…); their tools are left out. */
  refused: { serverId: string; code: PoolErrorCode | "error"; message: string; limit?: string }[];
}

/**
 * A report about a conversation client, as a pool event (`onEvent`). `keyHash` is the
 * conversation's keyed digest; it means nothing outside this pool.
 */
export interface ConversationEvent {
  type: "conversation";
  serverId: string;
  keyHash: string;
  /**
   * - `opened`: a client opened (`durationMs`);
   * - `open-failed`: it could not (`error`);
   * - `refused`: a budget was full (`limit`);
   * - `ended`: an ending finished (`reason`, `outcome`, `resolved`, `durationMs`);
   * - `deferred`: terminate() answered before the ending finished; `ended` follows;
   * - `revoked`: a lease was cut short (`reason`).
   */
  kind: "opened" | "open-failed" | "refused" | "ended" | "deferred" | "revoked";
  reason?: ConversationEndReason;
  outcome?: SessionEndOutcome;
  resolved?: boolean;
  status?: number;
  limit?: ConversationLimit;
  durationMs?: number;
  error?: string;
}
