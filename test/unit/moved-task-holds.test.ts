/**
 * Task records that moved from a previous daemon hold their child from the idle rule while
 * no host claimed them, each until its own deadline: a later adoption (a second hand-over,
 * or one that came back) neither ends an earlier record's hold early nor has its own ended
 * by an earlier timer.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { MovedTask } from "../../src/pool/calls/moved-records.js";
import { PoolTasks } from "../../src/pool/calls/tasks.js";
import type { Connection } from "../../src/pool/server/connection.js";
import type { ServerEntry } from "../../src/pool/server/entry.js";

/** A child as the records see it: its entry, and the connection a hold counts in flight. */
function child(id: string): { entry: ServerEntry; connection: Connection } {
  const connection = { inflight: 0 } as Connection;
  const entry = { id, connection, busy: () => undefined, idle: () => undefined };
  return { entry: entry as unknown as ServerEntry, connection };
}

function moved(serverId: string, taskId: string): MovedTask {
  const expiresAt = Date.now() + 3_600_000;
  return { serverId, taskId, owner: "host", status: "working", ttl: 3_600_000, expiresAt };
}

function pool(): PoolTasks {
  return new PoolTasks({
    entry: (id) => {
      throw new Error(`no row ${id} asked for here`);
    },
    timeoutMs: () => undefined,
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("moved task records' holds", () => {
  it("ends each adoption's unclaimed holds at its own deadline", () => {
    vi.useFakeTimers();
    const tasks = pool();
    const [a, b] = [child("a"), child("b")];
    tasks.adopt([moved("a", "t1")], (id) => (id === "a" ? a.entry : undefined), 1_000);
    expect(a.connection.inflight).toBe(1);
    vi.advanceTimersByTime(600);
    tasks.adopt([moved("b", "t2")], (id) => (id === "b" ? b.entry : undefined), 1_000);
    expect(b.connection.inflight).toBe(1);
    // The first adoption's deadline: its record lets its child go, the second's holds on.
    vi.advanceTimersByTime(400);
    expect(a.connection.inflight).toBe(0);
    expect(b.connection.inflight).toBe(1);
    vi.advanceTimersByTime(600);
    expect(b.connection.inflight).toBe(0);
    tasks.close();
  });

  it("holds a record its host claimed as any record, past the unclaimed deadline", async () => {
    vi.useFakeTimers();
    const tasks = pool();
    const a = child("a");
    tasks.adopt([moved("a", "t1")], () => a.entry, 1_000);
    // The host's first question claims the record (this child answers nothing: no client).
    const owner = { key: "connection-1", name: "host" };
    await expect(tasks.request("a", "tasks/get", { taskId: "t1" }, owner)).rejects.toThrow();
    vi.advanceTimersByTime(1_000);
    expect(a.connection.inflight).toBe(1);
    tasks.close();
    expect(a.connection.inflight).toBe(0);
  });
});
