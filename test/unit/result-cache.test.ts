import { defined } from "mcpool-protocol";
import { afterEach, describe, expect, it, vi } from "vitest";

import { McpPool, type McpPoolOptions, type PoolEvent } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool, type FakeTool } from "../helpers/tool-server.js";

const pools: McpPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** A server whose tools answer `<name> #<n>`, n counting the calls that reached it. */
function countingServer() {
  const reached: string[] = [];
  const counted = (name: string, annotations: FakeTool["annotations"]): FakeTool =>
    tool(name, {
      annotations,
      inputSchema: {
        type: "object",
        properties: { path: { type: "string" }, limit: { type: "integer" } },
      },
      call: (args) => {
        reached.push(name);
        return {
          content: [{ type: "text", text: `${name} #${reached.length} ${JSON.stringify(args)}` }],
        };
      },
    });
  const initial: FakeTool[] = [
    counted("read", { readOnlyHint: true }),
    counted("put", { idempotentHint: true }),
    counted("write", {}),
    counted("plain", undefined),
    tool("broken", {
      annotations: { readOnlyHint: true },
      call: () => {
        reached.push("broken");
        return { isError: true, content: [{ type: "text", text: "nope" }] };
      },
    }),
  ];
  const server = scriptedServer(initial);
  return { server, reached, tools: initial };
}

/** Pool options over a default cache; `resultCache: undefined` leaves the option out. */
async function cachedPool(
  options: { [K in keyof McpPoolOptions]?: McpPoolOptions[K] | undefined } = {},
  row: Parameters<typeof memoryRow>[2] = { trustAnnotations: true },
) {
  const { server, reached, tools } = countingServer();
  const pool = makePool(defined({ servers: { s: server.build }, resultCache: {}, ...options }));
  pools.push(pool);
  await pool.sync([memoryRow("s", "s", row)]);
  return { pool, server, reached, tools };
}

function nextEvent(pool: McpPool, match: (e: PoolEvent) => boolean): Promise<PoolEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error("timed out waiting for a pool event"));
    }, 5000);
    const stop = pool.onEvent((event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      stop();
      resolve(event);
    });
  });
}

describe("the result cache: what it answers", () => {
  it("is off unless the pool option is given", async () => {
    const { pool, reached } = await cachedPool({ resultCache: undefined });
    await pool.call("s__read", { path: "a" });
    await pool.call("s__read", { path: "a" });
    expect(reached).toEqual(["read", "read"]);
  });

  it("answers a trusted read-only tool's repeat from memory and says cached on the call event", async () => {
    const { pool, reached } = await cachedPool();
    const events: PoolEvent[] = [];
    pool.onEvent((e) => e.type === "call" && events.push(e));
    const first = await pool.call("s__read", { path: "a" });
    expect(await pool.call("s__read", { path: "a" })).toBe(first);
    expect(await pool.call("s__read", { path: "b" })).not.toBe(first);
    expect(reached).toEqual(["read", "read"]);
    expect(events.map((e) => (e.type === "call" ? e.cached : "-"))).toEqual([
      undefined,
      true,
      undefined,
    ]);
    expect(events[1]).toMatchObject({ ok: true, chars: first.length, serverId: "s" });
  });

  it("caches an idempotent tool too", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__put", { path: "a" });
    await pool.call("s__put", { path: "a" });
    expect(reached).toEqual(["put"]);
  });

  it("never caches for a row that does not set trustAnnotations, nor a tool without the hints", async () => {
    const untrusted = await cachedPool({}, {});
    await untrusted.pool.call("s__read", { path: "a" });
    await untrusted.pool.call("s__read", { path: "a" });
    expect(untrusted.reached).toEqual(["read", "read"]);

    const trusted = await cachedPool();
    await trusted.pool.call("s__plain", {});
    await trusted.pool.call("s__plain", {});
    expect(trusted.reached).toEqual(["plain", "plain"]);
  });

  it("keys on the arguments after coercion, key order aside", async () => {
    const { pool, reached } = await cachedPool();
    const first = await pool.call("s__read", { limit: "5", path: "a" });
    expect(await pool.call("s__read", { path: "a", limit: 5 })).toBe(first);
    expect(reached).toEqual(["read"]);
  });

  it("with cache: false asks the server, and keeps the new answer", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    const fresh = await pool.call("s__read", { path: "a" }, { cache: false });
    expect(fresh).toMatch(/^read #2/);
    expect(await pool.call("s__read", { path: "a" })).toBe(fresh);
    expect(reached).toEqual(["read", "read"]);
  });

  it("neither answers nor stores a raw call", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" }, { raw: true });
    await pool.call("s__read", { path: "a" });
    await pool.call("s__read", { path: "a" }, { raw: true });
    expect(reached).toEqual(["read", "read", "read"]);
    await pool.call("s__read", { path: "a" });
    expect(reached).toHaveLength(3);
  });

  it("never keeps a failure: a tool-error is thrown as ever and asked again next time", async () => {
    const { pool, reached } = await cachedPool();
    await expect(pool.call("s__broken", {})).rejects.toMatchObject({ code: "tool-error" });
    await expect(pool.call("s__broken", {})).rejects.toMatchObject({ code: "tool-error" });
    expect(reached).toEqual(["broken", "broken"]);
  });

  it("keeps the whole text and cuts a hit to the cap of the call that asked", async () => {
    const long = "x".repeat(500);
    const big = scriptedServer([
      tool("big", {
        annotations: { readOnlyHint: true },
        call: () => ({ content: [{ type: "text", text: long }] }),
      }),
    ]);
    const pool = makePool({ servers: { s: big.build }, resultCache: {} });
    pools.push(pool);
    await pool.sync([memoryRow("s", "s", { trustAnnotations: true })]);
    const cut = await pool.call("s__big", {}, { maxResultChars: 100 });
    expect(cut.length).toBeLessThanOrEqual(100);
    expect(await pool.call("s__big", {})).toBe(long);
    const events: PoolEvent[] = [];
    pool.onEvent((e) => events.push(e));
    expect((await pool.call("s__big", {}, { maxResultChars: 50 })).length).toBeLessThanOrEqual(50);
    expect(events[0]).toMatchObject({ cached: true, chars: 500, truncated: true });
  });

  it("is looked up after the refusals: a run outside the scope, or a hidden tool, gets no answer", async () => {
    const { pool } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    await expect(pool.call("s__read", { path: "a" }, { servers: [] })).rejects.toMatchObject({
      code: "out-of-scope",
    });
    await pool.sync([memoryRow("s", "s", { trustAnnotations: true, hiddenTools: ["read"] })]);
    await expect(pool.call("s__read", { path: "a" })).rejects.toMatchObject({
      code: "unknown-tool",
    });
    await expect(pool.call("s__read", { path: "a" }, { hidden: true })).resolves.toMatch(/#1/);
  });
});

describe("the result cache: what clears it", () => {
  it("a call that is not read-only reaching the server clears that server's answers", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    await pool.call("s__write", { path: "a" });
    await pool.call("s__read", { path: "a" });
    expect(reached).toEqual(["read", "write", "read"]);
  });

  it("an idempotent write is cached and clears the reads all the same", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    await pool.call("s__put", { path: "a" });
    await pool.call("s__put", { path: "a" });
    await pool.call("s__read", { path: "a" });
    expect(reached).toEqual(["read", "put", "read"]);
  });

  it("a write refused before it reaches the server clears nothing", async () => {
    const { pool, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    await expect(pool.call("s__write", { limit: "many" })).rejects.toMatchObject({
      code: "invalid-arguments",
    });
    await pool.call("s__read", { path: "a" });
    expect(reached).toEqual(["read"]);
  });

  it("a read that raced a write is not kept", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let readsStarted!: () => void;
    const readStarted = new Promise<void>((resolve) => (readsStarted = resolve));
    let n = 0;
    const server = scriptedServer([
      tool("slowread", {
        annotations: { readOnlyHint: true },
        call: async () => {
          n += 1;
          const mine = n;
          if (mine === 1) {
            readsStarted();
            await held;
          }
          return { content: [{ type: "text", text: `read ${mine}` }] };
        },
      }),
      tool("write"),
    ]);
    const pool = makePool({ servers: { s: server.build }, resultCache: {} });
    pools.push(pool);
    await pool.sync([memoryRow("s", "s", { trustAnnotations: true })]);
    const racing = pool.call("s__slowread", {});
    await readStarted;
    await pool.call("s__write", {});
    release();
    expect(await racing).toBe("read 1");
    expect(await pool.call("s__slowread", {})).toBe("read 2");
  });

  it("the server's connection closing, for any reason, clears its answers", async () => {
    const { pool, server, reached } = await cachedPool({ crashBackoffMs: 0 });
    const read = () => pool.call("s__read", { path: "a" });

    await read();
    await pool.stop("s");
    await read();
    expect(reached).toHaveLength(2);

    await pool.reconnect("s");
    await read();
    expect(reached).toHaveLength(3);

    const crashed = nextEvent(pool, (e) => e.type === "close" && e.reason === "crash");
    await server.live.at(-1)!.close();
    await crashed;
    await read();
    expect(reached).toHaveLength(4);
    await read();
    expect(reached).toHaveLength(4);
  });

  it("a tool-list change clears the server's answers", async () => {
    const { pool, server, tools, reached } = await cachedPool();
    await pool.call("s__read", { path: "a" });
    const changed = nextEvent(pool, (e) => e.type === "tools-changed");
    server.setTools([...tools, tool("extra")]);
    await server.listChanged();
    await changed;
    await pool.call("s__read", { path: "a" });
    expect(reached).toEqual(["read", "read"]);
  });
});

describe("the result cache: its bounds", () => {
  it("forgets an answer after ttlMs", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { pool, reached } = await cachedPool({ resultCache: { ttlMs: 1000 } });
    await pool.call("s__read", { path: "a" });
    vi.advanceTimersByTime(999);
    await pool.call("s__read", { path: "a" });
    expect(reached).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await pool.call("s__read", { path: "a" });
    expect(reached).toHaveLength(2);
  });

  it("keeps at most maxEntries answers, dropping the least recently used", async () => {
    const { pool, reached } = await cachedPool({ resultCache: { maxEntries: 2 } });
    const read = (path: string) => pool.call("s__read", { path });
    await read("a");
    await read("b");
    await read("a"); // a is now the most recently used
    await read("c"); // evicts b
    expect(reached).toHaveLength(3);
    await read("a");
    await read("c");
    expect(reached).toHaveLength(3);
    await read("b");
    expect(reached).toHaveLength(4);
  });
});
