/**
 * Which conversation a bridge request is for (a `session: "conversation"` row through the bridge).
 * Each host connection is a conversation of its own — a stdio bridge's one, each Streamable HTTP
 * session's — so a `session: "conversation"` server keeps its state per host session, and the
 * session's remote end is terminated when the host goes away. A host that keeps its own
 * conversations names one with `_meta["mcpool/conversationId"]` on tools/list and tools/call; a
 * conversation the host named is the host's to end, and outlives the connection.
 *
 * The principal is the bridge's: the user it runs as, unless `principal` says otherwise.
 * The bridge is reached only by that user (stdio, or loopback HTTP with a token).
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import type { ConversationIdentity, PoolClient } from "mcpool-client";

/** The `_meta` key a host names its conversation with. */
export const CONVERSATION_META_KEY = "mcpool/conversationId";

export interface BridgeIdentityOptions {
  /** The principal conversations are for. Default: the name of the user the bridge runs as. */
  principal?: string;
  /** The tenant, for a daemon whose rows require one. Default: none. */
  tenant?: string;
}

/** A new conversation for one host connection. */
export function connectionIdentity(options: BridgeIdentityOptions): ConversationIdentity {
  return {
    ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    principal: options.principal ?? userInfo().username,
    conversationId: `bridge-${randomUUID()}`,
  };
}

/** The conversation a request is for: the one its `_meta` names, else the connection's. */
export function identityFor(
  connection: ConversationIdentity,
  meta: Record<string, unknown> | undefined,
): ConversationIdentity {
  const named = meta?.[CONVERSATION_META_KEY];
  return typeof named === "string" && named !== ""
    ? { ...connection, conversationId: named }
    : connection;
}

/** The host went away: its connection's conversation ends, remote sessions included. */
export function endConversation(client: PoolClient, identity: ConversationIdentity): void {
  const { tenant, principal, conversationId } = identity;
  const selector = {
    ...(tenant !== undefined ? { tenant } : {}),
    ...(principal !== undefined ? { principal } : {}),
    conversationId,
  };
  client.conversations.terminate(selector).catch(() => undefined);
}
