/**
 * A new daemon's adoption that throws part way (a pool step rejects) still concludes the
 * moved task records: a host's request that waited for them is told the adoption failed,
 * rather than waiting on until the pool is closed.
 */
import { describe, expect, it } from "vitest";
import { concludeAdoption } from "../../src/daemon/handover/adoption.js";
import type { Predecessor } from "../../src/daemon/handover/predecessor.js";
import type { DaemonLog } from "../../src/daemon/process/logger.js";
import { PoolTasks } from "../../src/pool/calls/tasks.js";
import type { McpPool } from "../../src/pool/pool.js";

describe("an adoption that throws", () => {
  it("forgoes the moved task records, so a host's waiting request is told why", async () => {
    const tasks = new PoolTasks({
      entry: (id) => {
        throw new Error(`no row ${id} asked for here`);
      },
      timeoutMs: () => undefined,
    });
    const expiresAt = Date.now() + 3_600_000;
    tasks.expect([
      { serverId: "s", taskId: "t", owner: "host", status: "working", ttl: null, expiresAt },
    ]);
    const waiting = tasks.request("s", "tasks/get", { taskId: "t" }, { key: "k", name: "host" });
    const told = expect(waiting).rejects.toMatchObject({
      code: "handover-failed",
      message: expect.stringMatching(/the adoption failed: the pool could not settle/),
    });
    // Only what the adoption reaches before the throw: the snapshot, then the pool's flush.
    const pool = {
      flush: () => Promise.reject(new Error("the pool could not settle")),
      forgoTasks: (why: string) => tasks.forgo(why),
    } as unknown as McpPool;
    const predecessor = { snapshot: { servers: [] } } as unknown as Predecessor;
    await expect(concludeAdoption(pool, predecessor, {} as DaemonLog)).rejects.toThrow(
      "the pool could not settle",
    );
    await told;
    tasks.close();
  });
});
