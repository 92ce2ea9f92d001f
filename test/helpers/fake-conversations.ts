/**
 * A fake of the pool's conversation registry for wire tests: it records what reached it
 * (method, server, identity or selector, options) and answers with fixed shapes.
 */
import type { ConversationsLike } from "../../src/daemon/handlers/conversations.js";
import type { ConversationLease } from "../../src/pool/conversations/registry.js";

export interface FakeConversations extends ConversationsLike {
  /** What reached the registry, in order. */
  readonly log: unknown[][];
  /** Leases handed out and not yet released. */
  readonly held: Set<ConversationLease>;
}

export function fakeConversations(): FakeConversations {
  const log: unknown[][] = [];
  const held = new Set<ConversationLease>();
  return {
    log,
    held,
    async acquire(serverId, identity) {
      log.push(["acquire", serverId, identity]);
      const lease: ConversationLease = {
        serverId,
        keyHash: "0123456789ab",
        held: true,
        release: () => {
          held.delete(lease);
        },
        [Symbol.asyncDispose]: async () => lease.release(),
      };
      held.add(lease);
      return lease;
    },
    async tools(identity, options) {
      log.push(["tools", identity, options]);
      return {
        tools: [
          {
            type: "function",
            function: { name: "orders__count", description: "[orders] count", parameters: {} },
          },
        ],
        bindings: { orders: "binding-1" },
        refused: [],
      };
    },
    async describe(qualified, scope, options) {
      log.push(["describe", qualified, scope, options]);
      return undefined;
    },
    async terminate(selector, options) {
      log.push(["terminate", selector, options]);
      return [
        {
          serverId: "orders",
          conversationId: selector.conversationId ?? "c1",
          keyHash: "0123456789ab",
          outcome: "terminated",
          resolved: true,
          status: 200,
          durationMs: 3,
        },
      ];
    },
    stats(servers) {
      log.push(["stats", servers]);
      return [
        {
          serverId: "orders",
          clients: 1,
          inUse: 0,
          idle: 1,
          opening: 0,
          ending: 0,
          operations: 0,
          unsettled: 0,
          unresolvedEndings: 0,
          leases: held.size,
          listings: 1,
        },
      ];
    },
    permissionsChanged(selector) {
      log.push(["permissionsChanged", selector]);
    },
    toolsChanged(servers) {
      log.push(["toolsChanged", servers]);
    },
  };
}
