/**
 * A new daemon's adoption that ends early still concludes the moved task records, so a
 * host's request that waited for them is told why rather than waiting on until the pool is
 * closed: one that throws part way (a pool step rejects), and one the old daemon calls off
 * while the pool's first reconcile is still dialling — that one concludes at once, without
 * waiting for the dial, that this daemon serves nothing.
 */
import { describe, expect, it } from "vitest";
import { concludeAdoption } from "../../src/daemon/handover/adoption.js";
import type { Predecessor } from "../../src/daemon/handover/predecessor.js";
import type { DaemonLog } from "../../src/daemon/process/logger.js";
import { PoolTasks } from "../../src/pool/calls/tasks.js";
import type { McpPool } from "../../src/pool/pool.js";

/** Task records expected from a hand-over, and a host's request waiting for them. */
function waitingHost(): { tasks: PoolTasks; waiting: Promise<unknown> } {
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
  return { tasks, waiting };
}

describe("an adoption that ends early", () => {
  it("forgoes the moved task records when it throws, so a host's waiting request is told why", async () => {
    const { tasks, waiting } = waitingHost();
    const told = expect(waiting).rejects.toMatchObject({
      code: "handover-failed",
      message: expect.stringMatching(/the adoption failed: the pool could not settle/),
    });
    // Only what the adoption reaches before the throw: the snapshot, then the pool's flush.
    const pool = {
      flush: () => Promise.reject(new Error("the pool could not settle")),
      forgoTasks: (why: string) => tasks.forgo(why),
    } as unknown as McpPool;
    const predecessor = {
      snapshot: { servers: [] },
      calledOff: new AbortController().signal,
    } as unknown as Predecessor;
    await expect(concludeAdoption(pool, predecessor, {} as DaemonLog)).rejects.toThrow(
      "the pool could not settle",
    );
    await told;
    tasks.close();
  });

  it("concludes at once when called off in the middle of the pool's dials, and tells who waited", async () => {
    const { tasks, waiting } = waitingHost();
    const told = expect(waiting).rejects.toMatchObject({
      code: "handover-failed",
      message: expect.stringMatching(/called the hand-over off.*did not answer within 1 ms/),
    });
    // The first reconcile dials a handed child that never answers: only the word ends it.
    let flushing: () => void = () => undefined;
    const flushed = new Promise<void>((resolve) => (flushing = resolve));
    const pool = {
      flush: () => {
        flushing();
        return new Promise<void>(() => undefined);
      },
      forgoTasks: (why: string) => tasks.forgo(why),
    } as unknown as McpPool;
    const off = new AbortController();
    const predecessor = {
      snapshot: { servers: [] },
      calledOff: off.signal,
    } as unknown as Predecessor;
    const lines: string[] = [];
    const log = { info: () => undefined, error: (line: string) => lines.push(line) };
    const concluded = concludeAdoption(pool, predecessor, log as unknown as DaemonLog);
    await flushed;
    off.abort(new Error("the new daemon did not answer within 1 ms"));
    expect(await concluded).toEqual({
      serve: false,
      why: "the old daemon called the hand-over off and serves on: the new daemon did not answer within 1 ms",
    });
    expect(lines.join("\n")).toContain("every child it handed is let go of, none signalled");
    await told;
    tasks.close();
  });
});
