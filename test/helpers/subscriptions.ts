/**
 * A pool's resource subscriptions (src/pool/calls/subscriptions.ts) over our own upstream,
 * which records what it is sent, as the hand-over's steps see them through the pool.
 */
import { Subscriptions } from "../../src/pool/calls/subscriptions.js";
import type { McpPool } from "../../src/pool/pool.js";

export function pooledSubscriptions(): {
  sent: string[];
  subscriptions: Subscriptions;
  pool: McpPool;
} {
  const sent: string[] = [];
  const subscriptions = new Subscriptions({
    upstream: (id, uri, method) => {
      sent.push(`${method} ${id} ${uri}`);
      return Promise.resolve();
    },
    stopUpstream: (id, uri) => {
      sent.push(`resources/unsubscribe ${id} ${uri}`);
      return Promise.resolve();
    },
    log: {},
  });
  const pool = { handedSubscriptions: subscriptions } as unknown as McpPool;
  return { sent, subscriptions, pool };
}
