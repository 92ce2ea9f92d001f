import { describe, expect, it } from "vitest";
import { subscriptionKey, type HostProfile } from "mcpool-protocol";
import {
  ConnectionHosts,
  forServedHosts,
  MAX_HOSTS_PER_CONNECTION,
} from "../../src/daemon/handlers/connection-hosts.js";
import type { NotificationSender } from "../../src/pool/pool-events.js";
import type { RequestContext } from "../../src/daemon/socket/server.js";

/** A request of connection `id` (only what ConnectionHosts reads of it). */
function requestOf(id: number, signal = new AbortController().signal): RequestContext {
  return { connection: { id, signal } } as unknown as RequestContext;
}

const project = (name: string): HostProfile => ({
  roots: [{ uri: `file:///${name}` }],
  era: "legacy",
});

/** A connection of a row that serves the hosts of `profiles` (undefined: the pool's own). */
function sender(key: string | undefined, ...profiles: (HostProfile | undefined)[]) {
  const served = new Set(profiles.map((profile) => subscriptionKey(profile)));
  return { key, serves: (profile) => served.has(subscriptionKey(profile)) } as NotificationSender;
}

describe("the hosts a connection speaks for", () => {
  it("names only the hosts of the connection that the sending process serves", () => {
    const hosts = new ConnectionHosts();
    hosts.named(requestOf(1), project("a"));
    hosts.named(requestOf(1), project("b"));
    hosts.named(requestOf(2), project("b"));

    const childOfA = sender("a", project("a"));
    expect(hosts.servedBy(1, childOfA)).toEqual([subscriptionKey(project("a"))]);
    expect(hosts.servedBy(2, childOfA)).toEqual([]);
    // The row's own serves the hosts that name no profile, on every connection.
    expect(hosts.servedBy(2, sender(undefined, undefined))).toEqual([""]);
    expect(hosts.servedBy(3, sender(undefined, undefined))).toEqual([""]);
  });

  it("forgets a connection's hosts when it closes", () => {
    const hosts = new ConnectionHosts();
    const closing = new AbortController();
    hosts.named(requestOf(1, closing.signal), project("a"));
    closing.abort();
    expect(hosts.servedBy(1, sender("a", project("a")))).toEqual([]);
  });

  it("keeps the profiles named last when a connection names more than it keeps", () => {
    const hosts = new ConnectionHosts();
    for (let i = 0; i <= MAX_HOSTS_PER_CONNECTION; i++) hosts.named(requestOf(1), project(`${i}`));
    expect(hosts.servedBy(1, sender("0", project("0")))).toEqual([]);
    const last = `${MAX_HOSTS_PER_CONNECTION}`;
    expect(hosts.servedBy(1, sender(last, project(last)))).toEqual([
      subscriptionKey(project(last)),
    ]);
  });

  it("routes log lines and list changes by host, and nothing else", () => {
    expect(forServedHosts({ method: "notifications/message", params: { level: "info" } })).toBe(
      true,
    );
    expect(forServedHosts({ method: "notifications/prompts/list_changed" })).toBe(true);
    expect(forServedHosts({ method: "notifications/tools/list_changed" })).toBe(true);
    expect(forServedHosts({ method: "notifications/resources/list_changed" })).toBe(true);
    expect(forServedHosts({ method: "notifications/progress" } as never)).toBe(false);
  });
});
