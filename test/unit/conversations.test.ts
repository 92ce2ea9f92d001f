/**
 * Per-conversation rows over in-memory servers: identity rules,
 * budgets that refuse and never queue, leases, sweeping and TTLs on fake timers, bindings,
 * terminate's deadline, and what events say. Real sessions and children are in
 * test/integration/conversations.test.ts.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  McpPool,
  McpPoolError,
  parseMcpJson,
  validateServerConfig,
  type McpPoolOptions,
  type McpServerConfig,
  type PoolEvent,
} from "../../src/index.js";
import type { ConversationEvent } from "../../src/pool/conversations/types.js";
import { makePool, memoryRow } from "../../src/testing/index.js";

/** A per-session server: counts its listings and calls, and can hold a call until released. */
function statefulServer() {
  let tools: Tool[] = [{ name: "count", inputSchema: { type: "object" } }];
  const gates: (() => void)[] = [];
  const state = {
    builds: 0,
    listings: 0,
    live: [] as Server[],
    /** Calls of `wait` block until release() is called. */
    release: () => gates.splice(0).forEach((open) => open()),
    /** Calls of `wait` blocked now. */
    waiting: () => gates.length,
    setTools(next: Tool[]) {
      tools = next;
    },
    build: () => {
      state.builds += 1;
      let counter = 0;
      const server = new Server(
        { name: "stateful", version: "1.0.0" },
        { capabilities: { tools: { listChanged: true } } },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => {
        state.listings += 1;
        return { tools: [...tools, { name: "wait", inputSchema: { type: "object" } }] };
      });
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        if (request.params.name === "wait") await new Promise<void>((r) => gates.push(r));
        counter += 1;
        return { content: [{ type: "text", text: String(counter) }] };
      });
      state.live.push(server);
      return server;
    },
  };
  return state;
}

const pools: McpPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(
  server: ReturnType<typeof statefulServer>,
  extra: Partial<McpPoolOptions> = {},
): McpPool {
  const created = makePool({ servers: { s: server.build }, ...extra });
  pools.push(created);
  return created;
}

function row(conversation: McpServerConfig["conversation"] = {}): McpServerConfig {
  return memoryRow("s", "s", { session: "conversation", conversation });
}

const who = (principal: string, conversationId: string, tenant = "acme") => ({
  tenant,
  principal,
  conversationId,
});

async function refusal(promise: Promise<unknown>): Promise<McpPoolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpPoolError);
  return error as McpPoolError;
}

function events(p: McpPool): ConversationEvent[] {
  const seen: ConversationEvent[] = [];
  p.onEvent((event: PoolEvent) => {
    if (event.type === "conversation") seen.push(event);
  });
  return seen;
}

describe("identity", () => {
  it("refuses a call that names no identity, or no principal, before anything opens", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row()]);
    expect((await refusal(p.call("s__count"))).code).toBe("no-identity");
    const anonymous = await refusal(p.call("s__count", {}, { identity: { conversationId: "c1" } }));
    expect(anonymous.code).toBe("no-identity");
    expect(anonymous.message).toMatch(/principal/);
    expect(server.builds).toBe(0);
  });

  it("takes an identity without a principal when the row allows it, and requires a tenant when told", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ requirePrincipal: false, requireTenant: true })]);
    const noTenant = await refusal(
      p.call("s__count", {}, { identity: { principal: "a", conversationId: "c1" } }),
    );
    expect(noTenant.message).toMatch(/tenant/);
    expect(
      await p.call("s__count", {}, { identity: { tenant: "acme", conversationId: "c1" } }),
    ).toBe("1");
  });

  it("puts a keyed digest in events and reports, never an identity", async () => {
    const server = statefulServer();
    const p = pool(server);
    const seen = events(p);
    await p.sync([row({ maxClients: 1 })]);
    await p.call("s__count", {}, { identity: who("alice-secret", "conv-secret", "tenant-x") });
    await p.conversations.terminate({ tenant: "tenant-x", principal: "alice-secret" });
    await refusal(
      p.conversations
        .acquire("s", who("bob-secret", "conv-2", "tenant-x"))
        .then((l) => {
          l.release();
          return p.conversations.acquire("s", who("bob-secret", "conv-3", "tenant-x"));
        })
        .then(() => p.conversations.acquire("s", who("carol-secret", "conv-4", "tenant-x"))),
    );
    const text = JSON.stringify(seen);
    for (const secret of ["alice-secret", "conv-secret", "tenant-x", "bob-secret", "conv-2"]) {
      expect(text).not.toContain(secret);
    }
    expect(seen.map((e) => e.kind)).toEqual(expect.arrayContaining(["opened", "ended", "refused"]));
    expect(new Set(seen.map((e) => e.keyHash.length))).toEqual(new Set([12]));
    // The same conversation digests alike; another one does not.
    const opened = seen.filter((e) => e.kind === "opened").map((e) => e.keyHash);
    expect(new Set(opened).size).toBe(opened.length);
  });
});

describe("budgets", () => {
  it("never evicts a client in use, even one still opening, and refuses at once instead of queueing", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ maxClients: 1 })]);
    // Both opens start together: the first client counts as in use from its first moment.
    const first = p.conversations.acquire("s", who("a", "c1"));
    const second = refusal(p.conversations.acquire("s", who("b", "c1")));
    expect((await second).detail.limit).toBe("pool");
    const lease = await first;
    expect((await refusal(p.call("s__count", {}, { identity: who("b", "c1") }))).code).toBe(
      "pool-full",
    );
    expect(p.conversations.statsOf("s")).toMatchObject({ clients: 1, inUse: 1, leases: 1 });
    lease.release();
    // Idle now: evicted to make room.
    expect(await p.call("s__count", {}, { identity: who("b", "c1") })).toBe("1");
    await p.conversations.settled();
    expect(p.conversations.statsOf("s")).toMatchObject({ clients: 1, ending: 0 });
  });

  it("keeps an operation charged until its work settles, and refuses past maxOperations", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ maxOperations: 1 })]);
    const waiting = p.call("s__wait", {}, { identity: who("a", "c1") });
    await vi.waitFor(() => expect(server.waiting()).toBe(1));
    expect(p.conversations.statsOf("s")?.operations).toBe(1);
    const full = await refusal(p.call("s__count", {}, { identity: who("a", "c1") }));
    expect(full.detail.limit).toBe("operations");
    server.release();
    expect(await waiting).toBe("1");
    expect(p.conversations.statsOf("s")?.operations).toBe(0);
  });

  it("sweeps an idle client at the next use after idleMs, with no timer in between", async () => {
    vi.useFakeTimers();
    const server = statefulServer();
    const p = pool(server);
    const seen = events(p);
    await p.sync([row({ idleMs: 60_000 })]);
    await p.call("s__count", {}, { identity: who("a", "c1") });
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(59_000);
    expect(p.conversations.sweep()).toBe(0);
    vi.advanceTimersByTime(1_000);
    await p.call("s__count", {}, { identity: who("b", "c1") });
    await p.conversations.settled();
    expect(seen.filter((e) => e.kind === "ended").map((e) => e.reason)).toEqual(["idle"]);
    expect(p.conversations.statsOf("s")).toMatchObject({ clients: 1 });
    // The swept conversation starts over on a new client.
    expect(await p.call("s__count", {}, { identity: who("a", "c1") })).toBe("1");
  });

  it("never sweeps a client held by a lease", async () => {
    vi.useFakeTimers();
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ idleMs: 1_000 })]);
    {
      await using lease = await p.conversations.acquire("s", who("a", "c1"));
      expect(lease.held).toBe(true);
      vi.advanceTimersByTime(5_000);
      expect(p.conversations.sweep()).toBe(0);
      expect(await p.call("s__count", {}, { identity: who("a", "c1") })).toBe("1");
    }
    expect(p.conversations.statsOf("s")).toMatchObject({ leases: 0, idle: 1 });
    vi.advanceTimersByTime(1_000);
    expect(p.conversations.sweep()).toBe(1);
  });

  it("refuses an acquire still opening when the pool closes, holding nothing", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row()]);
    const acquiring = p.conversations.acquire("s", who("a", "c1"));
    const closing = p.close();
    expect((await refusal(acquiring)).code).toBe("closed");
    await closing;
    expect(p.conversations.statsOf("s")).toMatchObject({ clients: 0, ending: 0, leases: 0 });
  });
});

describe("tool listings", () => {
  it("lists per client by default, and again after definitionTtlMs", async () => {
    vi.useFakeTimers();
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ definitionTtlMs: 10_000 })]);
    const first = await p.conversations.tools(who("a", "c1"));
    expect(first.tools.map((t) => t.function.name)).toEqual(["s__count", "s__wait"]);
    await p.conversations.tools(who("a", "c1"));
    await p.conversations.tools(who("a", "c2"));
    expect(server.listings).toBe(2);
    vi.advanceTimersByTime(10_000);
    // A bound call on a listing past its TTL is refused before anything is sent.
    const stale = await refusal(
      p.call("s__count", {}, { identity: who("a", "c1"), bindings: first.bindings }),
    );
    expect(stale.code).toBe("stale-tools");
    await p.conversations.tools(who("a", "c1"));
    expect(server.listings).toBe(3);
  });

  it("refuses a binding after toolsChanged(), and a server's own list change", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row()]);
    const listed = await p.conversations.tools(who("a", "c1"));
    const bound = { identity: who("a", "c1"), bindings: listed.bindings };
    expect(await p.call("s__count", {}, bound)).toBe("1");
    p.conversations.toolsChanged();
    expect((await refusal(p.call("s__count", {}, bound))).code).toBe("stale-tools");

    const again = await p.conversations.tools(who("a", "c1"));
    await server.live.at(-1)!.sendToolListChanged();
    await vi.waitFor(() => expect(p.conversations.statsOf("s")?.listings).toBe(0));
    const refused = await refusal(
      p.call("s__count", {}, { identity: who("a", "c1"), bindings: again.bindings }),
    );
    expect(refused.code).toBe("stale-tools");
    // Unbound, the call is checked against a fresh listing and goes.
    expect(await p.call("s__count", {}, { identity: who("a", "c1") })).toBe("2");
  });

  it("shares one listing under declared names, never across tenants, and refuses binding-changed when the names move", async () => {
    const server = statefulServer();
    let authorization = "analyst@policy-3";
    const p = pool(server, {
      conversations: {
        share: () => ({ configuration: "orders@v7", authorization }),
      },
    });
    await p.sync([row()]);
    const one = await p.conversations.tools(who("a", "c1"));
    const two = await p.conversations.tools(who("b", "c2"));
    expect(two.bindings).toEqual(one.bindings);
    expect(server.listings).toBe(1);
    await p.conversations.tools(who("a", "c1", "globex"));
    expect(server.listings).toBe(2);

    authorization = "analyst@policy-4";
    const calls = server.live.length;
    const moved = await refusal(
      p.call("s__count", {}, { identity: who("a", "c1"), bindings: one.bindings }),
    );
    expect(moved.code).toBe("binding-changed");
    expect(server.live.length).toBe(calls);
    const relisted = await p.conversations.tools(who("a", "c1"));
    expect(relisted.bindings.s).not.toBe(one.bindings.s);
    expect(server.listings).toBe(3);
  });

  it("drops a listing whose names changed while it was in flight, and lists again", async () => {
    const server = statefulServer();
    let asked = 0;
    const p = pool(server, {
      conversations: {
        // Asked once when the listing is sent, once when it arrives: the first answer moves.
        share: () => ({ configuration: "v", authorization: asked++ === 0 ? "old" : "new" }),
      },
    });
    await p.sync([row()]);
    await p.conversations.tools(who("a", "c1"));
    expect(server.listings).toBe(2);
  });

  it("sends a call bound to a replaced client's listing only if the new list holds the same definition", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row({ maxClients: 1 })]);
    const listed = await p.conversations.tools(who("a", "c1"));
    // b's conversation evicts a's client; a's next call opens a replacement.
    await p.call("s__count", {}, { identity: who("b", "c1") });
    await p.conversations.settled();
    expect(
      await p.call("s__count", {}, { identity: who("a", "c1"), bindings: listed.bindings }),
    ).toBe("1");
    expect(server.builds).toBe(3);
  });
});

describe("terminate", () => {
  it("waits for a lease to let go, answering timed-out within its deadline, and reports the ending", async () => {
    const server = statefulServer();
    const p = pool(server, { conversations: { terminateTimeoutMs: 50 } });
    const seen = events(p);
    await p.sync([row()]);
    const lease = await p.conversations.acquire("s", who("a", "c1"));
    const [answer] = await p.conversations.terminate({ principal: "a", tenant: "acme" });
    expect(answer).toMatchObject({ outcome: "timed-out", resolved: false, conversationId: "c1" });
    expect(p.conversations.statsOf("s")).toMatchObject({ unsettled: 1, inUse: 1 });
    lease.release();
    await p.conversations.settled();
    expect(seen.map((e) => e.kind)).toEqual(["opened", "deferred", "ended"]);
    expect(seen.at(-1)).toMatchObject({ reason: "terminated", outcome: "no-session" });
    expect(p.conversations.statsOf("s")).toMatchObject({ unsettled: 0, clients: 0 });
  });

  it("answers within its deadline when a local close hangs, holding the ending slot until it finishes", async () => {
    const server = statefulServer();
    let finishClose!: () => void;
    const hung = new Promise<void>((resolve) => (finishClose = resolve));
    const p = makePool({
      servers: {},
      conversations: { terminateTimeoutMs: 100 },
      createTransport: async () => {
        const [client, remote] = InMemoryTransport.createLinkedPair();
        await server.build().connect(remote);
        const close = client.close.bind(client);
        client.close = async () => {
          await hung;
          await close();
        };
        return client;
      },
    });
    pools.push(p);
    await p.sync([row({ maxEnding: 1 })]);
    await p.call("s__count", {}, { identity: who("a", "c1") });
    const started = performance.now();
    const [answer] = await p.conversations.terminate({ tenant: "acme", principal: "a" });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer?.outcome).toBe("no-session");
    expect(p.conversations.statsOf("s")).toMatchObject({ ending: 1, operations: 1 });
    // An eviction would need the one ending slot, which the hung close still holds.
    await p.call("s__count", {}, { identity: who("b", "c1") });
    finishClose();
    await p.conversations.settled();
    expect(p.conversations.statsOf("s")).toMatchObject({ ending: 0, operations: 0 });
  });

  it("refuses a selector that names no principal on a row that requires one", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row()]);
    expect((await refusal(p.conversations.terminate({ conversationId: "c1" }))).code).toBe(
      "no-identity",
    );
    expect((await refusal(p.conversations.terminate({}))).code).toBe("no-identity");
  });

  it("reports counts only", async () => {
    const server = statefulServer();
    const p = pool(server);
    await p.sync([row()]);
    await p.call("s__count", {}, { identity: who("a", "c1") });
    const [stats] = p.conversations.stats();
    expect(Object.keys(stats!).sort()).toEqual(
      [
        "serverId",
        "clients",
        "inUse",
        "idle",
        "opening",
        "ending",
        "operations",
        "unsettled",
        "unresolvedEndings",
        "leases",
        "listings",
      ].sort(),
    );
    expect(Object.values(stats!).every((v) => typeof v === "number" || v === "s")).toBe(true);
  });
});

describe("switching a row's session mode", () => {
  it("closes the shared connection of a row that becomes a conversation row, and dials it again when it goes back", async () => {
    const server = statefulServer();
    const p = pool(server);
    const shared = memoryRow("s");
    await p.sync([shared]);
    expect(await p.call("s__count")).toBe("1");
    expect(p.state()[0]?.status).toBe("ready");
    await p.sync([row()]);
    expect(p.state()[0]?.status).toBe("idle");
    expect((await refusal(p.call("s__count"))).code).toBe("no-identity");
    expect(await p.call("s__count", {}, { identity: who("a", "c1") })).toBe("1");
    await p.sync([shared]);
    await p.conversations.settled();
    expect(p.conversations.stats()).toEqual([]);
    expect(p.state()[0]?.status).toBe("ready");
    expect(await p.call("s__count")).toBe("1");
  });
});

describe("conversation row options", () => {
  it("passes session and conversation through from mcp.json", () => {
    const { rows, problems } = parseMcpJson(
      JSON.stringify({
        mcpServers: {
          browser: {
            command: "npx",
            args: ["browser-mcp"],
            session: "conversation",
            conversation: { maxClients: 4, idleMs: 300000 },
          },
        },
      }),
    );
    expect(problems).toEqual([]);
    expect(rows[0]).toMatchObject({
      session: "conversation",
      conversation: { maxClients: 4, idleMs: 300000 },
    });
  });

  it("validates session and its budgets", () => {
    const base = { id: "s", transport: "http", url: "https://x.example/mcp" };
    expect(validateServerConfig({ ...base, session: "conversation" })).toEqual([]);
    expect(validateServerConfig({ ...base, session: "per-call" })).toEqual([
      '`session` must be "shared" or "conversation", got "per-call"',
    ]);
    expect(
      validateServerConfig({
        ...base,
        session: "conversation",
        conversation: {
          maxClients: 0,
          idleMs: -1,
          requirePrincipal: "no",
          share: { configuration: "" },
        },
      }),
    ).toEqual([
      "`conversation.maxClients` must be a whole number ≥ 1, got 0",
      "`conversation.idleMs` must be a whole number of milliseconds from 0 (never) to 2147483647 (about 24.8 days), the longest a timer can wait; got -1",
      '`conversation.requirePrincipal` must be true or false, got "no"',
      "`conversation.share.configuration` must be a non-empty string",
      "`conversation.share.authorization` must be a non-empty string",
    ]);
    expect(validateServerConfig({ ...base, conversation: {} })).toEqual([
      '`conversation` applies only to a row with `session: "conversation"`',
    ]);
  });
});
