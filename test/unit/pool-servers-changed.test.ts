/**
 * The pool says when its set of servers changes: the daemon's MCP sockets follow
 * that and nothing else, so a row added to mcp.json gets its socket with the reconcile that
 * adds it, and a call costs them nothing — nor does listening to it make a call build its
 * event.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { McpPool } from "../../src/index.js";
import { PoolEvents } from "../../src/pool/pool-events.js";
import { echoServer, makePool, memoryRow } from "../../src/testing/index.js";

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("McpPool.onServersChanged", () => {
  it("says the ids after a reconcile that added, removed or reordered rows, and only then", async () => {
    const pool = makePool({ servers: { a: () => echoServer(), b: () => echoServer() } });
    pools.push(pool);
    const said: string[][] = [];
    pool.onServersChanged((ids) => said.push([...ids]));

    await pool.sync([memoryRow("a")]);
    await pool.sync([memoryRow("a")]);
    await pool.call("a__echo", { text: "x" });
    await pool.sync([memoryRow("a"), memoryRow("b")]);
    await pool.sync([memoryRow("b"), memoryRow("a")]);
    await pool.sync([memoryRow("b")]);
    await pool.close();

    expect(said).toEqual([["a"], ["a", "b"], ["b", "a"], ["b"], []]);
  });

  it("is not listening to calls: a pool with only this listener builds no call event", () => {
    const events = new PoolEvents({
      log: {},
      react: () => undefined,
      deliver: () => undefined,
      servedBy: () => undefined,
    });
    events.onServersChanged(() => undefined);
    expect(events.listened).toBe(false);
    const off = events.onEvent(() => undefined);
    expect(events.listened).toBe(true);
    off();
    expect(events.listened).toBe(false);
  });
});
