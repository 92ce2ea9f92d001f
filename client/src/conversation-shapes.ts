/**
 * The wire shapes of per-conversation servers (SPEC B9): structural copies of
 * src/pool/conversation-types.ts and src/config/conversation.ts, because this package may
 * not import src/. None of them carries an identity value, a session id, an argument or a
 * result; reports name a conversation by `keyHash`, a digest that means nothing outside
 * the daemon that made it.
 */
import type { PoolErrorCode } from "./errors.js";
import type { ToolDefinition } from "./shapes.js";

/** The conversation a call is for. Verify the caller at your door before you name it. */
export interface ConversationIdentity {
  tenant?: string;
  principal?: string;
  conversationId: string;
}

/** Which conversations terminate() means: absent fields match any. */
export interface ConversationSelector {
  tenant?: string;
  principal?: string;
  conversationId?: string;
}

export type SessionMode = "shared" | "conversation";

export interface ShareNames {
  configuration: string;
  authorization: string;
}

/** Budgets and rules of a `session: "conversation"` row. */
export interface ConversationRowOptions {
  maxClients?: number;
  maxClientsPerPrincipal?: number;
  maxEnding?: number;
  maxOperations?: number;
  idleMs?: number;
  requirePrincipal?: boolean;
  requireTenant?: boolean;
  definitionTtlMs?: number;
  share?: ShareNames;
}

export type SessionEndOutcome =
  | "terminated"
  | "already-gone"
  | "no-session"
  | "not-offered"
  | "failed"
  | "timed-out"
  | "handle-lost";

export type ConversationLimit = "pool" | "principal" | "ending" | "operations";

export type ConversationEndReason =
  | "terminated"
  | "idle"
  | "evicted"
  | "lost"
  | "expired"
  | "removed"
  | "changed"
  | "stopped"
  | "shutdown";

/** Counts only, per conversation row. */
export interface ConversationStats {
  clients: number;
  inUse: number;
  idle: number;
  opening: number;
  ending: number;
  operations: number;
  unsettled: number;
  unresolvedEndings: number;
  leases: number;
  listings: number;
}

export interface ConversationServerStats extends ConversationStats {
  serverId: string;
}

export interface TerminateResult {
  serverId: string;
  conversationId: string;
  keyHash: string;
  outcome: SessionEndOutcome;
  /** True only for `terminated`, `already-gone` and `no-session`. */
  resolved: boolean;
  status?: number;
  durationMs: number;
}

export interface ConversationTools {
  tools: ToolDefinition[];
  /** Server id → binding; pass as `bindings` to call() to be refused a stale tool before it is sent. */
  bindings: Record<string, string>;
  refused: { serverId: string; code: PoolErrorCode | "error"; message: string; limit?: string }[];
}

export interface ConversationEvent {
  type: "conversation";
  serverId: string;
  keyHash: string;
  kind: "opened" | "open-failed" | "refused" | "ended" | "deferred" | "revoked";
  reason?: ConversationEndReason;
  outcome?: SessionEndOutcome;
  resolved?: boolean;
  status?: number;
  limit?: ConversationLimit;
  durationMs?: number;
  error?: string;
}
