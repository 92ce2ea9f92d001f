/**
 * The wire methods of per-conversation servers, spread into methods.ts's
 * METHODS. A lease lives as long as the connection that took it: a client that disconnects
 * lets go of every conversation it held. Calls and listings name their conversation with
 * `identity` on `tools/call` and `tools/list`; identities travel to the daemon only, and
 * nothing the daemon pushes carries one.
 */
import type {
  ConversationIdentity,
  ConversationServerStats,
  ConversationTools,
  TerminateResult,
} from "./conversation-shapes.js";
import { fields, fieldsOf, method, returns } from "./checks.js";
import type { Empty, SpecParams } from "./checks.js";

/** The params of one conversation method, as its descriptor types them. */
type ParamsOf<M extends keyof typeof CONVERSATION_METHODS> = SpecParams<
  (typeof CONVERSATION_METHODS)[M]
>;

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

export type ConversationReleaseParams = ParamsOf<"conversation/release">;

/** Which conversations to end (ConversationSelector), on which rows, waiting how long. */
export type ConversationTerminateParams = ParamsOf<"conversation/terminate">;

export interface ConversationToolsParams {
  identity: ConversationIdentity;
  servers?: readonly string[];
  names?: readonly string[];
}

export type ConversationStatsParams = ParamsOf<"conversation/stats">;

export type PermissionsChangedParams = ParamsOf<"conversation/permissions-changed">;

export type ToolsChangedParams = ParamsOf<"conversation/tools-changed">;

/** ConversationSelector's table: absent fields match any conversation. */
const SELECTOR = { tenant: "string?", principal: "string?", conversationId: "string?" } as const;

const SCOPE = fields({ servers: "string[]?" });

export const CONVERSATION_METHODS = {
  /** Holds a conversation's client (opening it) until release or disconnect. */
  "conversation/acquire": method(
    fieldsOf<ConversationAcquireParams>({ serverId: "string", identity: "object" }),
    returns<ConversationAcquireResult>(),
  ),
  "conversation/release": method(fields({ leaseId: "string" }), returns<Empty>()),
  /** Ends remote sessions; one result per conversation ended, in no particular order. */
  "conversation/terminate": method(
    fields({
      ...SELECTOR,
      /** Conversation rows to end it on: absent = every one. */
      servers: "string[]?",
      /** How long to wait for the remote outcomes, ms. Default: the daemon's (10 s). */
      timeoutMs: "number?",
    }),
    returns<readonly TerminateResult[]>(),
  ),
  /** The conversation's tools on every conversation row, with a binding per row. */
  "conversation/tools": method(
    fieldsOf<ConversationToolsParams>({
      identity: "object",
      servers: "string[]?",
      names: "string[]?",
    }),
    returns<ConversationTools>(),
  ),
  /** Counts only. */
  "conversation/stats": method(SCOPE, returns<readonly ConversationServerStats[]>()),
  /** Every listing of the tenant (and the principal's own) is listed again before use. */
  "conversation/permissions-changed": method(
    fields({ tenant: "string?", principal: "string?" }),
    returns<Empty>(),
  ),
  "conversation/tools-changed": method(SCOPE, returns<Empty>()),
} as const;
