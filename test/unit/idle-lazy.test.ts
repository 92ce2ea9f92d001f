/**
 * The idle reap's timer is lazy: calls stamp when the server may be reaped and
 * the one pending timer re-arms itself for the rest. These cover what lifecycle.test.ts does
 * not: a timer that fires while a call is in flight, and a server stopped under its timer.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { McpPool } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool } from "../helpers/tool-server.js";

const pools: McpPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

/** A tool whose answers wait for release(). */
/** A pool of one scripted server `s` with the pool-wide `idleTimeoutMs`, its tool called once. */
async function calledOnce(idleTimeoutMs: number) {
  const s = scriptedServer([tool("t")]);
  const pool = makePool({ servers: { s: s.build }, idleTimeoutMs });
  pools.push(pool);
  await pool.sync([memoryRow("s")]);
  await pool.call("s__t", {});
  return { s, pool };
}

function heldTool(): { tool: ReturnType<typeof tool>; release: () => void; asked: () => boolean } {
  let release: (() => void) | undefined;
  const made = tool("slow", {
    call: () =>
      new Promise<CallToolResult>((resolve) => {
        release = () => resolve({ content: [{ type: "text", text: "done" }] });
      }),
  });
  return { tool: made, release: () => release?.(), asked: () => release !== undefined };
}

describe("the lazy idle timer", () => {
  it("reaps a server idleTimeoutMs after a call that outlived the timer", async () => {
    vi.useFakeTimers();
    const slow = heldTool();
    const s = scriptedServer([slow.tool, tool("t")]);
    const pool = makePool({ servers: { s: s.build }, idleTimeoutMs: 1000 });
    pools.push(pool);
    await pool.sync([memoryRow("s")]);
    await pool.call("s__t", {});
    const call = pool.call("s__slow", {}, { timeoutMs: 600_000 });
    await vi.waitFor(() => expect(slow.asked()).toBe(true));
    // The timer the first call armed fires during the slow one, and finds it in use.
    await vi.advanceTimersByTimeAsync(3000);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("ready");
    slow.release();
    expect(await call).toBe("done");
    await vi.advanceTimersByTimeAsync(999);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("ready");
    await vi.advanceTimersByTimeAsync(1);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("idle");
  });

  it("reaps on a row's shortened idleTimeoutMs, not the longer timer already pending", async () => {
    vi.useFakeTimers();
    const { s, pool } = await calledOnce(60_000);
    // The same connection fields: the row is taken without touching the child.
    await pool.sync([memoryRow("s", "s", { idleTimeoutMs: 1000 })]);
    await pool.call("s__t", {});
    expect(s.spawns).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    await pool.flush();
    expect(pool.state()[0]?.status).toBe("idle");
  });

  it("leaves no timer behind for a server stopped before its reap", async () => {
    vi.useFakeTimers();
    const { pool } = await calledOnce(1000);
    await pool.stop("s");
    expect(vi.getTimerCount()).toBe(0);
  });
});
