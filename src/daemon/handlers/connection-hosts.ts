/**
 * The hosts each connection speaks for, and which of them a pooled server's notification is
 * for. A bridge names its host's profile with each listing, call and passthrough request; the
 * pool serves that host from the row's connection its profile picks (the row's own, or a
 * project's or capability profile's child). Direct, a host hears only its own server process:
 * so a log line or a list change goes only to the connections with a host that the sending
 * connection serves, naming those hosts (the subscriptionKey() of each profile; "" for the
 * pool's own host, which every connection has: a request that names no profile is served by
 * the row's own connection). The bridge then tells only its sessions among them.
 */
import { subscriptionKey, type HostProfile } from "mcpool-protocol";

import type { NotificationSender } from "../../pool/pool-events.js";
import type { ServerNotification } from "../../pool/core/types.js";
import type { RequestContext } from "../socket/server.js";

/**
 * The most profiles kept per connection, the last named kept first: a bridge of many
 * sessions over the day (a project each) must not grow without bound. One that named more
 * since is no longer a host here until it names its profile again, with its next request.
 */
export const MAX_HOSTS_PER_CONNECTION = 256;

/** The notifications that go to the hosts their connection serves, and to no other. */
const HOSTS_ONLY: ReadonlySet<string> = new Set([
  "notifications/message",
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
]);

/** Whether `notification` goes only to the hosts the connection that sent it serves. */
export function forServedHosts(notification: ServerNotification): boolean {
  return HOSTS_ONLY.has(notification.method);
}

export class ConnectionHosts {
  /** Per connection id: subscriptionKey() → the profile, the last named last. */
  readonly #hosts = new Map<number, Map<string, HostProfile>>();

  /** A request of `ctx`'s connection named `profile`: a host of that profile is here. */
  named(ctx: RequestContext, profile: HostProfile): void {
    const { id, signal } = ctx.connection;
    if (signal.aborted) return;
    let hosts = this.#hosts.get(id);
    if (hosts === undefined) {
      const created = new Map<string, HostProfile>();
      hosts = created;
      this.#hosts.set(id, created);
      signal.addEventListener("abort", () => this.#hosts.delete(id), { once: true });
    }
    const key = subscriptionKey(profile);
    hosts.delete(key);
    hosts.set(key, profile);
    if (hosts.size <= MAX_HOSTS_PER_CONNECTION) return;
    const oldest = hosts.keys().next().value;
    if (oldest !== undefined) hosts.delete(oldest);
  }

  /**
   * The hosts of connection `id` that `from` serves, each by its subscriptionKey(); "" for
   * the pool's own host when `from` is the row's own connection. Empty: none is here.
   */
  servedBy(id: number, from: NotificationSender): string[] {
    const served = from.serves(undefined) ? [""] : [];
    for (const [key, profile] of this.#hosts.get(id) ?? []) {
      if (from.serves(profile)) served.push(key);
    }
    return served;
  }
}
