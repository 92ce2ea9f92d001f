/**
 * Retiring a connection that still has calls in flight: it waits for them under
 * a bound, then closes the client — which closes its transport — once, and leaves no timer.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { McpPool } from "../../src/index.js";
import { echoServer, makePool, memoryRow, memoryTransport } from "../../src/testing/index.js";

const pools: McpPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

/**
 * makePool over the echo server, counting the closes the pool asks of each transport it
 * dials; not the one the in-memory pair's far side makes back while it closes.
 */
function countingPool(): { pool: McpPool; closes: number[] } {
  const closes: number[] = [];
  const dial = memoryTransport({ echo: () => echoServer() });
  const pool = makePool({
    servers: {},
    createTransport: async (row, context): Promise<Transport> => {
      const transport = await dial(row, context);
      const at = closes.push(0) - 1;
      const close = transport.close.bind(transport);
      let closing = false;
      transport.close = async () => {
        if (closing) return close();
        closes[at]! += 1;
        closing = true;
        try {
          await close();
        } finally {
          closing = false;
        }
      };
      return transport;
    },
  });
  pools.push(pool);
  return { pool, closes };
}

describe("retiring a connection with a use in flight", () => {
  it("clears the timer bounding the drain and closes the transport once", async () => {
    const { pool, closes } = countingPool();
    await pool.sync([memoryRow("echo")]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let using!: () => void;
    const inUse = new Promise<void>((resolve) => (using = resolve));
    const use = pool.use("echo", async () => {
      using();
      await held;
    });
    await inUse;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const stopped = pool.stop("echo");
    // The stop waits on the drain: its bound is the one timer armed.
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1));
    release();
    await use;
    await stopped;
    expect(vi.getTimerCount()).toBe(0);
    expect(closes).toEqual([1]);
  });
});
