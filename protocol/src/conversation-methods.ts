/**
 * The wire methods of per-conversation servers (SPEC B9), spread into methods.ts's
 * METHODS. A lease lives as long as the connection that took it: a client that disconnects
 * lets go of every conversation it held. Calls and listings name their conversation with
 * `identity` on `tools/call` and `tools/list`; identities travel to the daemon only, and
 * nothing the daemon pushes carries one.
 */
import type {
  ConversationIdentity,
  ConversationSelector,
  ConversationServerStats,
  ConversationTools,
  TerminateResult,
} from "./conversation-shapes.js";
import { fields, method } from "./checks.js";
import type { Empty } from "./methods.js";

export interface ConversationAcquireParams {
  serverId: string;
  identity: ConversationIdentity;
}

export interface ConversationAcquireResult {
  /** Names the lease in `conversation/release`; valid on this connection only. */
  leaseId: string;
  serverId: string;
  keyHash: string;
}

export interface ConversationReleaseParams {
  leaseId: string;
}

export interface ConversationTerminateParams extends ConversationSelector {
  /** Conversation rows to end it on: absent = every one. */
  servers?: readonly string[];
  /** How long to wait for the remote outcomes, ms. Default: the daemon's (10 s). */
  timeoutMs?: number;
}

export interface ConversationToolsParams {
  identity: ConversationIdentity;
  servers?: readonly string[];
  names?: readonly string[];
}

export interface ConversationStatsParams {
  servers?: readonly string[];
}

export interface PermissionsChangedParams {
  tenant?: string;
  principal?: string;
}

export interface ToolsChangedParams {
  servers?: readonly string[];
}

const SELECTOR = { tenant: "string?", principal: "string?", conversationId: "string?" } as const;

export const CONVERSATION_METHODS = {
  /** Holds a conversation's client (opening it) until release or disconnect. */
  "conversation/acquire": method<ConversationAcquireParams, ConversationAcquireResult>(
    fields({ serverId: "string", identity: "object" }),
  ),
  "conversation/release": method<ConversationReleaseParams, Empty>(fields({ leaseId: "string" })),
  /** Ends remote sessions; one result per conversation ended, in no particular order. */
  "conversation/terminate": method<ConversationTerminateParams, readonly TerminateResult[]>(
    fields({ ...SELECTOR, servers: "string[]?", timeoutMs: "number?" }),
  ),
  /** The conversation's tools on every conversation row, with a binding per row. */
  "conversation/tools": method<ConversationToolsParams, ConversationTools>(
    fields({ identity: "object", servers: "string[]?", names: "string[]?" }),
  ),
  /** Counts only. */
  "conversation/stats": method<ConversationStatsParams, readonly ConversationServerStats[]>(
    fields({ servers: "string[]?" }),
  ),
  /** Every listing of the tenant (and the principal's own) is listed again before use. */
  "conversation/permissions-changed": method<PermissionsChangedParams, Empty>(
    fields({ tenant: "string?", principal: "string?" }),
  ),
  "conversation/tools-changed": method<ToolsChangedParams, Empty>(fields({ servers: "string[]?" })),
} as const;
