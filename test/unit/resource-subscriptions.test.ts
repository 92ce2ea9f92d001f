/**
 * A bridge's resource subscriptions, as it hands the daemon's updates to its sessions: an
 * update that names a host goes to that host's session alone, or to nobody when no session of
 * this bridge goes by the name (every scope's bridge on the MCP sockets hears the one shared
 * client's updates, each daemon listener's once); one that names no host goes to the sessions
 * of no name.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient, ServerNotification } from "mcpool-client";
import type { Subscriber } from "../../src/bridge/core/session.js";
import { ResourceSubscriptions } from "../../src/bridge/core/resource-subscriptions.js";

const URI = "note://1";
const NAME = "0123456789abcdef0123456789abcdef";
const OTHER = "fedcba9876543210fedcba9876543210";
const update: ServerNotification = {
  method: "notifications/resources/updated",
  params: { uri: URI },
};

/** This build's daemon's hello: it names hosts. */
const HELLO = { protocolVersion: 1, daemonVersion: "0.1.0", pid: 1, namesHosts: true };
/** The hello of a daemon from before hosts had names, as it went on the wire. */
const OLDER_HELLO = { protocolVersion: 1, daemonVersion: "0.1.0", pid: 1 };

/**
 * The client a bridge holds, as much of it as subscriptions use, connected to a daemon that
 * said `hello`; `sent` what it asked.
 */
function client(hello: object = HELLO): { client: PoolClient; sent: unknown[] } {
  const sent: unknown[] = [];
  const fake = {
    daemon: hello,
    subscribeResource: (serverId: string, uri: string, host?: unknown) => {
      sent.push(["subscribe", serverId, uri, host ?? {}]);
      return Promise.resolve();
    },
    unsubscribeResource: (serverId: string, uri: string, host?: unknown) => {
      sent.push(["unsubscribe", serverId, uri, host ?? {}]);
      return Promise.resolve();
    },
  };
  return { client: fake as unknown as PoolClient, sent };
}

/** A bridge's subscriptions over `pool`, every URI routed to server `s`. */
function bridge(pool: PoolClient): ResourceSubscriptions {
  return new ResourceSubscriptions({
    client: pool,
    route: () => Promise.resolve("s"),
    ask: (work) => work(),
  });
}

/** A host's session, going by `hostName` if given; `heard` what it was sent. */
function session(hostName?: string): Subscriber & { heard: unknown[] } {
  const heard: unknown[] = [];
  return {
    subscriptions: new Map(),
    ...(hostName !== undefined ? { hostName } : {}),
    server: {
      sendResourceUpdated: (params) => {
        heard.push(params);
        return Promise.resolve();
      },
    },
    heard,
  };
}

describe("a bridge's resource updates", () => {
  it("go to the host an update names, and never to the sessions of no name", async () => {
    const { client: pool } = client();
    // Two scopes' bridges on one client: a named host on one, a host of no name on the other.
    const lean = bridge(pool);
    const relay = bridge(pool);
    const named = session(NAME);
    const nameless = session();
    await lean.subscribe(named, URI);
    await relay.subscribe(nameless, URI);
    // The daemon sends one update per listener: the named one's, then the nameless one's.
    for (const one of [lean, relay]) one.deliverUpdated("s", update, NAME);
    for (const one of [lean, relay]) one.deliverUpdated("s", update);
    expect({ named: named.heard, nameless: nameless.heard }).toEqual({
      named: [{ uri: URI }],
      nameless: [{ uri: URI }],
    });
    // An update for a host that is not here (another's, or one that left) reaches nobody.
    relay.deliverUpdated("s", update, OTHER);
    lean.deliverUpdated("s", update, OTHER);
    expect(nameless.heard).toHaveLength(1);
    expect(named.heard).toHaveLength(1);
  });

  it("reach a named host on a daemon that does not name hosts, subscribed there without a name", async () => {
    const older = client(OLDER_HELLO);
    const onOlder = bridge(older.client);
    const named = session(NAME);
    const nameless = session();
    await onOlder.subscribe(named, URI);
    await onOlder.subscribe(nameless, URI);
    // Its updates name nobody: each session of the URI hears each one.
    onOlder.deliverUpdated("s", update);
    expect({ named: named.heard, nameless: nameless.heard }).toEqual({
      named: [{ uri: URI }],
      nameless: [{ uri: URI }],
    });
    await onOlder.unsubscribe(named, URI);
    await onOlder.unsubscribe(nameless, URI);
    expect(older.sent).toEqual([
      ["subscribe", "s", URI, {}],
      ["unsubscribe", "s", URI, {}],
    ]);

    // The same sessions on this build's daemon subscribe by name, and each keeps its own.
    const current = client();
    const onCurrent = bridge(current.client);
    await onCurrent.subscribe(named, URI);
    await onCurrent.subscribe(nameless, URI);
    await onCurrent.unsubscribe(named, URI);
    expect(current.sent).toEqual([
      ["subscribe", "s", URI, { taskOwner: NAME }],
      ["subscribe", "s", URI, {}],
      ["unsubscribe", "s", URI, { taskOwner: NAME }],
    ]);
  });
});
