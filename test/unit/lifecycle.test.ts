import { afterEach, describe, expect, it, vi } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CachedTools, McpPool, PoolEvent, ToolsCacheStore } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool } from "../helpers/tool-server.js";

const pools: McpPool[] = [];
function track(pool: McpPool): McpPool {
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function memoryStore(
  initial: Record<string, CachedTools> = {},
): ToolsCacheStore & { saves: string[]; data: Record<string, CachedTools> } {
  const data = { ...initial };
  const saves: string[] = [];
  return {
    data,
    saves,
    load: (id) => data[id],
    save: (id, cached) => {
      saves.push(id);
      data[id] = cached;
    },
  };
}

describe("lazy servers", () => {
  it("registers a lazy row without dialling, and only a call starts it", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build }, lazy: true }));
    await pool.sync([memoryRow("s")]);
    expect(pool.state()[0]).toMatchObject({ status: "idle", tools: [] });
    pool.tools();
    pool.catalog();
    expect(s.spawns).toBe(0);
    expect(await pool.call("s__t", {})).toBe("t({})");
    expect(s.spawns).toBe(1);
    expect(pool.state()[0]?.status).toBe("ready");
  });

  it("lets a row override the pool's laziness either way", async () => {
    const eager = scriptedServer([tool("t")]);
    const lazy = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { eager: eager.build, lazy: lazy.build }, lazy: true }));
    await pool.sync([memoryRow("eager", "eager", { lazy: false }), memoryRow("lazy")]);
    expect([eager.spawns, lazy.spawns]).toEqual([1, 0]);
  });

  it("offers a warm tools cache's list as stale with nothing spawned, then replaces it from the server", async () => {
    const s = scriptedServer([tool("read"), tool("write")]);
    const warmup = track(makePool({ servers: { s: s.build } }));
    const store = memoryStore();
    const primed = track(makePool({ servers: { s: s.build }, toolsCache: store }));
    await primed.sync([memoryRow("s")]);
    expect(store.saves).toEqual(["s"]);
    await warmup.close();
    s.spawns = 0;

    s.setTools([tool("read"), tool("search")]);
    const pool = track(makePool({ servers: { s: s.build }, toolsCache: store, lazy: true }));
    await pool.sync([memoryRow("s")]);
    expect(s.spawns).toBe(0);
    expect(pool.catalog()).toMatchObject([
      { id: "s", stale: true, tools: [{ name: "s__read" }, { name: "s__write" }] },
    ]);
    expect(pool.state()[0]).toMatchObject({ status: "idle", stale: true });

    const changed = new Promise<PoolEvent>((resolve) =>
      pool.onEvent((e) => e.type === "tools-changed" && resolve(e)),
    );
    // The last-known tool that is gone now is refused as one that does not exist.
    await expect(pool.call("s__write", {})).rejects.toMatchObject({ code: "unknown-tool" });
    expect(await changed).toMatchObject({ serverId: "s", added: ["search"], removed: ["write"] });
    expect(pool.tools().map((t) => t.function.name)).toEqual(["s__read", "s__search"]);
    expect(store.saves).toEqual(["s", "s"]);
  });

  it("ignores a cached list fetched over another connection", async () => {
    const store = memoryStore({
      s: { connection: "not-this-one", tools: [{ name: "old", inputSchema: { type: "object" } }] },
    });
    const pool = track(
      makePool({
        servers: { s: scriptedServer([tool("t")]).build },
        toolsCache: store,
        lazy: true,
      }),
    );
    await pool.sync([memoryRow("s")]);
    expect(pool.catalog()).toEqual([]);
  });

  it("never waits on a tools cache save", async () => {
    const pool = track(
      makePool({
        servers: { s: scriptedServer([tool("t")]).build },
        toolsCache: { load: () => undefined, save: () => new Promise<void>(() => undefined) },
      }),
    );
    await pool.sync([memoryRow("s")]);
    expect(pool.state()[0]?.status).toBe("ready");
  });
});

describe("idle reaping", () => {
  it("reaps a server after idleTimeoutMs without a use, as a success, keeping its list as stale", async () => {
    vi.useFakeTimers();
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build }, idleTimeoutMs: 1000 }));
    const closes: PoolEvent[] = [];
    pool.onEvent((e) => e.type === "close" && closes.push(e));
    await pool.sync([memoryRow("s")]);
    await pool.call("s__t", {});
    await vi.advanceTimersByTimeAsync(999);
    expect(pool.state()[0]?.status).toBe("ready");
    await pool.call("s__t", {}); // every use resets the clock
    await vi.advanceTimersByTimeAsync(999);
    expect(pool.state()[0]?.status).toBe("ready");
    await vi.advanceTimersByTimeAsync(1);
    await pool.flush();
    expect(pool.state()[0]).toMatchObject({ status: "idle", stale: true });
    expect(pool.state()[0]?.error).toBeUndefined();
    expect(pool.state()[0]?.retryAt).toBeUndefined();
    expect(closes).toEqual([{ type: "close", serverId: "s", reason: "idle", kept: true }]);
    // No backoff: the next call dials at once.
    expect(await pool.call("s__t", {})).toBe("t({})");
    expect(s.spawns).toBe(2);
  });

  it("keeps a server whose row opts out with idleTimeoutMs 0", async () => {
    vi.useFakeTimers();
    const pool = track(
      makePool({ servers: { s: scriptedServer([tool("t")]).build }, idleTimeoutMs: 1000 }),
    );
    await pool.sync([memoryRow("s", "s", { idleTimeoutMs: 0 })]);
    await vi.advanceTimersByTimeAsync(60_000);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("ready");
  });

  it("keeps a server when a call lands after the idle timer fired but before the reap ran", async () => {
    vi.useFakeTimers();
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build }, idleTimeoutMs: 1000 }));
    await pool.sync([memoryRow("s")]);
    // The timer fires: the reap is queued on the reconcile queue but has not run.
    vi.advanceTimersByTime(1000);
    const call = pool.call("s__t", {});
    expect(await call).toBe("t({})");
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("ready");
    expect(s.spawns).toBe(1);
  });

  it("never reaps a server while a call is in flight", async () => {
    vi.useFakeTimers();
    let release: (() => void) | undefined;
    const slow = tool("slow", {
      call: () =>
        new Promise<CallToolResult>((resolve) => {
          release = () => resolve({ content: [{ type: "text", text: "done" }] });
        }),
    });
    const pool = track(
      makePool({ servers: { s: scriptedServer([slow]).build }, idleTimeoutMs: 1000 }),
    );
    await pool.sync([memoryRow("s")]);
    const call = pool.call("s__slow", {}, { timeoutMs: 600_000 });
    await vi.waitFor(() => expect(release).toBeDefined());
    await vi.advanceTimersByTimeAsync(5000);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("ready");
    release!();
    expect(await call).toBe("done");
  });
});

describe("indexTools: false", () => {
  it("never lists tools, offers none, and refuses calls without waking anything", async () => {
    let listed = 0;
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build }, indexTools: false, lazy: true }));
    pool.onEvent((e) => e.type === "connect" && (listed += e.tools));
    await pool.sync([memoryRow("s")]);
    expect(pool.tools()).toEqual([]);
    expect(pool.catalog()).toEqual([]);
    await expect(pool.call("s__t", {})).rejects.toMatchObject({ code: "unknown-tool" });
    expect(s.spawns).toBe(1);
    expect(pool.state()[0]).toMatchObject({ status: "ready", tools: [] });
    expect(listed).toBe(0);
  });
});

describe("graceful replacement", () => {
  it("lets a call in flight on the old connection finish while new calls go to the new one", async () => {
    let release: (() => void) | undefined;
    const old = scriptedServer([
      tool("slow", {
        call: () =>
          new Promise<CallToolResult>((resolve) => {
            release = () => resolve({ content: [{ type: "text", text: "old finished" }] });
          }),
      }),
      tool("who", { call: () => ({ content: [{ type: "text", text: "old" }] }) }),
    ]);
    const next = scriptedServer([
      tool("slow"),
      tool("who", { call: () => ({ content: [{ type: "text", text: "new" }] }) }),
    ]);
    const pool = track(makePool({ servers: { old: old.build, next: next.build } }));
    await pool.sync([memoryRow("s", "old")]);
    const inFlight = pool.call("s__slow", {});
    await vi.waitFor(() => expect(release).toBeDefined());
    let oldClosed = false;
    old.live[0]!.onclose = () => (oldClosed = true);

    await pool.sync([memoryRow("s", "next")]);
    expect(await pool.call("s__who", {})).toBe("new");
    expect(oldClosed).toBe(false);
    release!();
    expect(await inFlight).toBe("old finished");
    await vi.waitFor(() => expect(oldClosed).toBe(true));
  });
});

describe("startup concurrency", () => {
  it("starts at most maxConcurrentStarts children at once", async () => {
    const s = scriptedServer([tool("t")]);
    let starting = 0;
    let most = 0;
    const servers: Record<string, () => ReturnType<typeof s.build>> = {};
    const rows = Array.from({ length: 20 }, (_, i) => memoryRow(`s${i}`));
    for (const row of rows) {
      servers[row.id] = () => {
        starting += 1;
        most = Math.max(most, starting);
        const server = s.build();
        server.oninitialized = () => (starting -= 1);
        return server;
      };
    }
    const pool = track(makePool({ servers, maxConcurrentStarts: 3 }));
    await pool.sync(rows);
    expect(pool.state().every((state) => state.status === "ready")).toBe(true);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(1);
  });
});
