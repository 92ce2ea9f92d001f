/**
 * The shapes of per-conversation servers, declared once: the pool's
 * (src/pool/conversations/types.ts re-exports them), the config's (src/config/conversation.ts
 * re-exports the row options) and the wire's. None of them carries an identity value, a
 * session id, an argument or a result; reports name a conversation by `keyHash`, a digest
 * that means nothing outside the daemon that made it.
 */
import type { ErrorCode } from "./errors.js";
import type { ToolDefinition } from "./tool-definition.js";

/**
 * The conversation a call is for. Verify the caller at your door before you name it: the
 * pool never derives one. Compared as exact strings; absent ≡ empty.
 */
export interface ConversationIdentity {
  tenant?: string;
  principal?: string;
  conversationId: string;
}

/** Which conversations terminate() or permissionsChanged() mean: absent fields match any. */
export interface ConversationSelector {
  tenant?: string;
  principal?: string;
  conversationId?: string;
}

/** `shared`: one connection serves every caller. `conversation`: one client per identity. */
export type SessionMode = "shared" | "conversation";

/**
 * What an operator vouches for: conversations whose share names are equal see the same
 * tool list, so one listing serves them all. Never shared across tenants; the pool also
 * keys the listing by the row's connection, so an edited url or command lists afresh.
 */
export interface ShareNames {
  /** The server's configuration, e.g. `"orders-runtime@v7"`. */
  configuration: string;
  /** The authorization the caller's list depends on, e.g. `"analyst@policy-3"`. */
  authorization: string;
}

/**
 * Budgets and rules of a `session: "conversation"` row. Every field is optional; the pool
 * supplies the defaults (src/config/conversation.ts checks what a file says).
 */
export interface ConversationRowOptions {
  /** Open clients (opening and in use included) this row may hold. Default 8. */
  maxClients?: number;
  /** Open clients one `{tenant, principal}` may hold. Default: `maxClients`. */
  maxClientsPerPrincipal?: number;
  /** Clients being ended at once (DELETE or child stop in progress). Default 4. */
  maxEnding?: number;
  /** Calls, listings and endings outstanding on this row's clients. Default 64. */
  maxOperations?: number;
  /** A client unused for this many ms is ended at the next use of the row; 0 never. Default 600 000. */
  idleMs?: number;
  /** Refuse an identity without a principal (`no-identity`). Default true. */
  requirePrincipal?: boolean;
  /** Refuse an identity without a tenant (`no-identity`). Default false. */
  requireTenant?: boolean;
  /** A tool listing is listed again after this many ms; 0 never. Default 0. */
  definitionTtlMs?: number;
  /** Conversations (of one tenant) that may share one listing; absent, each client lists its own. */
  share?: ShareNames;
}

/**
 * How ending a conversation's remote session went (src/pool/transport/session-end.ts):
 *
 * - `terminated`    the server ended it (HTTP DELETE answered 2xx; a stdio child stopped);
 * - `already-gone`  the server no longer had it (DELETE answered 404; the child had died);
 * - `no-session`    there was none to end (the server issued no session id);
 * - `not-offered`   the server does not end sessions on request (DELETE answered 405);
 * - `failed`        the DELETE failed otherwise (another status, a network error);
 * - `timed-out`     no answer within the bound;
 * - `handle-lost`   our side lost the session's handle before the DELETE: nothing was sent.
 *
 * Only the first three are resolved.
 */
export type SessionEndOutcome =
  | "terminated"
  | "already-gone"
  | "no-session"
  | "not-offered"
  | "failed"
  | "timed-out"
  | "handle-lost";

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
  refused: { serverId: string; code: ErrorCode | "error"; message: string; limit?: string }[];
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
