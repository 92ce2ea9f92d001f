/**
 * Per-conversation servers against real peers: a stateful Streamable
 * HTTP server that keeps a counter per session id and whose DELETEs can be held or refused
 * (test/helpers/session-server.ts), and stdio children from test/fixtures.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  createDefaultTransport,
  McpPool,
  McpPoolError,
  type McpPoolOptions,
  type McpServerConfig,
  type PoolEvent,
} from "../../src/index.js";
import type { ConversationEvent } from "../../src/pool/conversations/types.js";
import { alive, fixture, nextMatching, waitFor } from "../helpers/processes.js";
import { sessionServer, type SessionServer } from "../helpers/session-server.js";

const pools: McpPool[] = [];
const servers: SessionServer[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function pool(options: Partial<McpPoolOptions> = {}): McpPool {
  const created = new McpPool({
    clientName: "mcpool-test",
    log: {},
    connectTimeoutMs: 15_000,
    ...options,
  });
  pools.push(created);
  return created;
}

async function server(): Promise<SessionServer> {
  const created = await sessionServer();
  servers.push(created);
  return created;
}

function orders(url: string, conversation: McpServerConfig["conversation"] = {}): McpServerConfig {
  return { id: "orders", transport: "http", url, session: "conversation", conversation };
}

async function refusal(promise: Promise<unknown>): Promise<McpPoolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpPoolError);
  return error as McpPoolError;
}

function conversationEvents(p: McpPool): ConversationEvent[] {
  const seen: ConversationEvent[] = [];
  p.onEvent((event) => {
    if (event.type === "conversation") seen.push(event);
  });
  return seen;
}

function nextEvent(p: McpPool, match: (event: ConversationEvent) => boolean): Promise<PoolEvent> {
  return nextMatching<PoolEvent>(
    (listener) => p.onEvent(listener),
    (event) => event.type === "conversation" && match(event),
  );
}

const id = (principal: string, conversationId: string) => ({
  tenant: "acme",
  principal,
  conversationId,
});

describe("per-conversation clients over Streamable HTTP", () => {
  it("gives two principals with two conversations each four sessions, each with its own state", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url)]);
    expect(remote.opened()).toBe(0); // registered, never dialled as shared
    const answers: string[] = [];
    for (const principal of ["alice", "bob"]) {
      for (const conversationId of ["c1", "c2"]) {
        answers.push(
          await p.call("orders__count", {}, { identity: id(principal, conversationId) }),
        );
      }
    }
    expect(answers).toEqual(["1", "1", "1", "1"]);
    expect(remote.opened()).toBe(4);
    expect(remote.sessions()).toBe(4);
    // The same conversation finds its own session again.
    expect(await p.call("orders__count", {}, { identity: id("alice", "c1") })).toBe("2");
    expect(remote.opened()).toBe(4);
    expect(p.conversations.statsOf("orders")).toMatchObject({ clients: 4, inUse: 0, idle: 4 });
    expect(p.state()[0]?.conversations).toMatchObject({ clients: 4 });
  });

  it("refuses at once, naming the budget, and evicts an idle client whose slow DELETE holds the ending slot", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url, { maxClients: 2, maxEnding: 1 })]);
    const small = p.conversations;
    const a = await small.acquire("orders", id("dave", "d1"));
    const b = await small.acquire("orders", id("erin", "e1"));
    // Both clients are in use: a third conversation is refused at once.
    const full = await refusal(small.acquire("orders", id("fay", "f1")));
    expect(full.code).toBe("pool-full");
    expect(full.detail.limit).toBe("pool");

    // Dave's idle client is evicted to make room for Gus, and its DELETE is slow.
    const releaseDeletes = remote.holdDeletes();
    a.release();
    const gus = await small.acquire("orders", id("gus", "g1"));
    await waitFor(() => remote.count("DELETE") === 1, 10_000, "dave's DELETE");
    expect(small.statsOf("orders")).toMatchObject({ clients: 2, ending: 1 });
    b.release();
    // Making room for Hal needs a second ending: refused at once, never queued.
    const refused = await refusal(small.acquire("orders", id("hal", "h1")));
    expect(refused.detail.limit).toBe("ending");

    // Once Dave's ending has settled, its slot is free and Hal gets room.
    const ended = nextEvent(p, (e) => e.kind === "ended" && e.reason === "evicted");
    releaseDeletes();
    await small.settled();
    expect(await ended).toMatchObject({ outcome: "terminated", resolved: true });
    const hal = await small.acquire("orders", id("hal", "h1"));
    expect(small.statsOf("orders")).toMatchObject({ clients: 2, inUse: 2 });
    gus.release();
    await hal[Symbol.asyncDispose]();
    expect(hal.held).toBe(false);
    expect(small.statsOf("orders")).toMatchObject({ inUse: 0, idle: 2, unresolvedEndings: 0 });
  });

  it("refuses a principal over its own budget even when the row has room", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url, { maxClients: 4, maxClientsPerPrincipal: 1 })]);
    const first = await p.conversations.acquire("orders", id("ivy", "i1"));
    const error = await refusal(p.conversations.acquire("orders", id("ivy", "i2")));
    expect(error.detail.limit).toBe("principal");
    // Another principal still has room.
    (await p.conversations.acquire("orders", id("jon", "j1"))).release();
    first.release();
  });

  it("reports what the server answered to each ending", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url)]);
    const call = (principal: string, c: string) =>
      p.call("orders__count", {}, { identity: id(principal, c) });
    await call("alice", "c1");
    await call("bob", "c1");
    await call("bob", "c2");
    await call("carol", "c1");
    await call("dan", "c1");

    const [terminated] = await p.conversations.terminate({
      tenant: "acme",
      principal: "alice",
      conversationId: "c1",
    });
    expect(terminated).toMatchObject({
      serverId: "orders",
      conversationId: "c1",
      outcome: "terminated",
      resolved: true,
      status: 200,
    });

    remote.refuseDeletes(true); // this server does not end sessions on request
    const notOffered = await p.conversations.terminate({ tenant: "acme", principal: "bob" });
    remote.refuseDeletes(false);
    expect(notOffered.map((r) => r.outcome)).toEqual(["not-offered", "not-offered"]);
    expect(notOffered.every((r) => !r.resolved)).toBe(true);

    // A DELETE nobody answers: terminate() answers within its deadline; the ending goes on.
    const releaseDeletes = remote.holdDeletes();
    const deferred = nextEvent(p, (e) => e.kind === "deferred");
    const [slow] = await p.conversations.terminate(
      { tenant: "acme", principal: "carol" },
      { timeoutMs: 200 },
    );
    expect(slow).toMatchObject({ outcome: "timed-out", resolved: false });
    expect(slow!.durationMs).toBeLessThan(5_000);
    await deferred;
    expect(p.conversations.statsOf("orders")).toMatchObject({ unsettled: 1, ending: 1 });
    const finished = nextEvent(p, (e) => e.kind === "ended" && e.reason === "terminated");
    releaseDeletes();
    expect(await finished).toMatchObject({ outcome: "terminated", resolved: true });
    await p.conversations.settled();

    remote.forgetAll(); // the server forgot dan's session
    const [gone] = await p.conversations.terminate({ tenant: "acme", principal: "dan" });
    expect(gone).toMatchObject({ outcome: "already-gone", resolved: true, status: 404 });
    expect(p.conversations.statsOf("orders")).toMatchObject({
      clients: 0,
      unsettled: 0,
      unresolvedEndings: 2,
    });
    expect(await p.conversations.terminate({ tenant: "acme", principal: "nobody" })).toEqual([]);
  });

  it("says handle-lost, sending nothing, when our side lost the session's handle", async () => {
    const remote = await server();
    const transports: Transport[] = [];
    const p = pool({
      createTransport: async (row, context) => {
        const transport = await createDefaultTransport(row, context);
        transports.push(transport);
        return transport;
      },
    });
    await p.sync([orders(remote.url)]);
    await p.call("orders__count", {}, { identity: id("alice", "c1") });
    const lost = nextEvent(p, (e) => e.kind === "ended" && e.reason === "lost");
    await transports[0]!.close(); // the handle is gone; the remote session is not
    expect(await lost).toMatchObject({ outcome: "handle-lost", resolved: false });
    expect(remote.count("DELETE")).toBe(0);
    expect(remote.sessions()).toBe(1);
    expect(p.conversations.statsOf("orders")?.unresolvedEndings).toBe(1);
    // The next call opens a new client for the same conversation.
    expect(await p.call("orders__count", {}, { identity: id("alice", "c1") })).toBe("1");
    expect(remote.opened()).toBe(2);
  });

  it("fails a call whose session the server forgot with session-expired, and opens a new one next", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url)]);
    expect(await p.call("orders__count", {}, { identity: id("alice", "c1") })).toBe("1");
    remote.forgetAll();
    const error = await refusal(p.call("orders__count", {}, { identity: id("alice", "c1") }));
    expect(error.code).toBe("session-expired");
    expect(await p.call("orders__count", {}, { identity: id("alice", "c1") })).toBe("1");
    await p.conversations.settled();
    expect(remote.count("DELETE")).toBe(0);
  });

  it("lists once for two conversations under a declared share, and again after permissionsChanged", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([
      orders(remote.url, {
        share: { configuration: "orders-runtime@v7", authorization: "analyst@policy-3" },
      }),
    ]);
    const before = remote.count("tools/list");
    for (const conversationId of ["s1", "s2"]) {
      const listed = await p.conversations.tools(id("carol", conversationId));
      expect(listed.tools.map((t) => t.function.name)).toEqual(["orders__count"]);
    }
    expect(remote.count("tools/list") - before).toBe(1);
    // Never across tenants.
    await p.conversations.tools({ tenant: "globex", principal: "carol", conversationId: "s1" });
    expect(remote.count("tools/list") - before).toBe(2);

    p.conversations.permissionsChanged({ tenant: "acme", principal: "carol" });
    await p.conversations.tools(id("carol", "s1"));
    await p.conversations.tools(id("carol", "s2"));
    expect(remote.count("tools/list") - before).toBe(3);
  });

  it("lists per client without a share, and a server's list change re-lists that client", async () => {
    const remote = await server();
    const p = pool();
    await p.sync([orders(remote.url)]);
    const first = await p.conversations.tools(id("carol", "s1"));
    await p.conversations.tools(id("carol", "s2"));
    expect(remote.count("tools/list")).toBe(2);
    remote.setTools([{ name: "refund", inputSchema: { type: "object" } }]);
    await remote.listChanged();
    await waitFor(
      () => p.conversations.statsOf("orders")?.listings === 0,
      10_000,
      "the listings to go stale",
    );
    // A call bound to the old listing is refused before anything is sent.
    const calls = remote.count("tools/call");
    const stale = await refusal(
      p.call("orders__count", {}, { identity: id("carol", "s1"), bindings: first.bindings }),
    );
    expect(stale.code).toBe("stale-tools");
    expect(remote.count("tools/call")).toBe(calls);
    const again = await p.conversations.tools(id("carol", "s1"));
    expect(again.tools.map((t) => t.function.name)).toEqual(["orders__count", "orders__refund"]);
  });
});

describe("per-conversation stdio children", () => {
  /** The echo fixture as a row with a child per conversation. */
  const echo: McpServerConfig = {
    id: "echo",
    transport: "stdio",
    command: process.execPath,
    args: [fixture("echo.mjs")],
    session: "conversation",
  };

  /** A pool that lists in `spawned` the pid of every child it spawns. */
  const counting = (): { p: McpPool; spawned: number[] } => {
    const spawned: number[] = [];
    const p = pool({
      onChild: (event) => {
        if (event.type === "spawn") spawned.push(event.pid);
      },
    });
    return { p, spawned };
  };

  it("gives each conversation its own child and stops it on terminate", async () => {
    const { p, spawned } = counting();
    await p.sync([echo]);
    expect(spawned).toEqual([]);
    const pidFor = async (c: string) =>
      Number(await p.call("echo__pid", {}, { identity: id("alice", c) }));
    const one = await pidFor("c1");
    const two = await pidFor("c2");
    expect(one).not.toBe(two);
    expect(await pidFor("c1")).toBe(one);
    // And one spare child before the first, which found the row's era once.
    const spares = spawned.filter((pid) => pid !== one && pid !== two);
    expect(spares).toHaveLength(1);
    expect(spawned).toHaveLength(3);
    await waitFor(() => !alive(spares[0]!), 10_000, "the spare child to exit");

    const [result] = await p.conversations.terminate({
      tenant: "acme",
      principal: "alice",
      conversationId: "c1",
    });
    expect(result).toMatchObject({ outcome: "terminated", resolved: true });
    await waitFor(() => !alive(one), 10_000, "the first child to exit");
    expect(alive(two)).toBe(true);
    await p.close();
    await waitFor(() => !alive(two), 10_000, "the second child to exit");
  });

  it("refuses a call without an identity, and never dials the row as shared", async () => {
    const { p, spawned } = counting();
    const events = conversationEvents(p);
    await p.sync([echo]);
    const error = await refusal(p.call("echo__pid", {}));
    expect(error.code).toBe("no-identity");
    const reconnect = await p.reconnect("echo").then(
      () => "ok",
      (e: unknown) => e,
    );
    expect(reconnect).toBe("ok");
    expect(spawned).toEqual([]);
    expect(events).toEqual([]);
  });
});
