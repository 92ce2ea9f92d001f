/**
 * A hand-over runs as one turn of the pool's reconcile queue (McpPool.handingOver()): a
 * reconcile asked for meanwhile waits for it; it runs after a hand-over that failed, and does
 * nothing after one that went through (the servers are the new daemon's). A real pool whose
 * rows (none) are read by load(): each read is a reconcile.
 */
import { afterEach, describe, expect, it } from "vitest";
import { McpPool } from "../../src/pool/pool.js";

const pools: McpPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

/** A pool after its first reconcile, and the steps: each later reconcile adds "reconcile". */
async function recordedPool(): Promise<{ pool: McpPool; steps: string[] }> {
  const steps: string[] = [];
  const pool = new McpPool({
    clientName: "hand-over test",
    syncDebounceMs: 0,
    load: () => {
      steps.push("reconcile");
      return [];
    },
  });
  pools.push(pool);
  await pool.sync();
  steps.splice(0);
  return { pool, steps };
}

describe("a hand-over's turn of the reconcile queue", () => {
  it("runs a reconcile asked for meanwhile after a hand-over that failed", async () => {
    const { pool, steps } = await recordedPool();
    let asked: Promise<void> | undefined;
    const failed = await pool
      .handingOver(async () => {
        asked = pool.sync();
        void pool.syncSoon();
        // A reconcile not queued behind this turn would read its rows while this awaits.
        await pool.ready();
        steps.push("hand-over failed");
        throw new Error("the new daemon did not take over");
      })
      .catch((error: unknown) => (error as Error).message);
    expect(failed).toBe("the new daemon did not take over");
    await asked;
    await pool.flush();
    expect(steps).toEqual(["hand-over failed", "reconcile", "reconcile"]);
  });

  it("reconciles nothing after a hand-over that went through", async () => {
    const { pool, steps } = await recordedPool();
    let asked: Promise<void> | undefined;
    const handed = await pool.handingOver(async () => {
      asked = pool.sync();
      void pool.syncSoon();
      steps.push("handed over");
      return "handed";
    });
    expect(handed).toBe("handed");
    await expect(asked).rejects.toThrow("the pool's servers were handed over to a new daemon");
    await pool.flush();
    await expect(pool.sync()).rejects.toThrow("handed over to a new daemon");
    expect(steps).toEqual(["handed over"]);
  });
});
