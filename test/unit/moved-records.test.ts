/**
 * The records a hand-over moves, as the new daemon expects them before it serves: a host's
 * request that may be about one waits for the adoption's conclusion, is told why when the
 * adoption failed, and a request of anyone else does not wait at all.
 */
import { describe, expect, it } from "vitest";
import { MovedRecords, type MovedTask } from "../../src/pool/calls/moved-records.js";

const task: MovedTask = {
  serverId: "s",
  taskId: "t1",
  owner: "host",
  status: "working",
  ttl: 60_000,
  expiresAt: Number.MAX_SAFE_INTEGER,
};

/** Whether `promise` has settled once everything queued before this look has run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe("moved records awaited", () => {
  it("holds the owner's request until the adoption concludes, and no one else's", async () => {
    const moved = new MovedRecords();
    moved.expect([task]);
    const owners = moved.settled("s", "host");
    expect(await settledYet(owners)).toBe(false);
    expect(await settledYet(moved.settled("s", "someone else"))).toBe(true);
    expect(await settledYet(moved.settled("other server", "host"))).toBe(true);
    expect(await settledYet(moved.settled("s", undefined))).toBe(true);
    moved.conclude();
    await expect(owners).resolves.toBeUndefined();
    // Concluded: nothing is awaited any more.
    expect(await settledYet(moved.settled("s", "host"))).toBe(true);
  });

  it("tells the waiting request why when the adoption failed", async () => {
    const moved = new MovedRecords();
    moved.expect([task]);
    const owners = moved.settled("s", "host");
    moved.conclude("could not adopt s (pid 7): gone; the old daemon serves on");
    await expect(owners).rejects.toMatchObject({
      code: "handover-failed",
      message: expect.stringContaining("could not adopt s") as unknown,
    });
  });

  it("keeps the last status of an expected task for its record, and forgets it on conclusion", () => {
    const moved = new MovedRecords();
    moved.expect([task]);
    const status = (s: string) => ({
      method: "notifications/tasks/status",
      params: { taskId: "t1", status: s },
    });
    expect(moved.keep({ serverId: "other server" }, "t1", status("working"))).toBe(false);
    expect(moved.keep({ serverId: "s" }, "t2", status("working"))).toBe(false);
    expect(moved.keep({ serverId: "s" }, "t1", status("working"))).toBe(true);
    expect(moved.keep({ serverId: "s" }, "t1", status("completed"))).toBe(true);
    expect(moved.unclaimed("host", { serverId: "s", taskId: "t1" }).missed).toEqual(
      status("completed"),
    );
    expect(moved.unclaimed("host", { serverId: "s", taskId: "t1" }).missed).toBeUndefined();
  });

  it("keeps two servers' tasks of the same id apart", () => {
    const moved = new MovedRecords();
    moved.expect([task, { ...task, serverId: "other server" }]);
    const status = (s: string) => ({
      method: "notifications/tasks/status",
      params: { taskId: "t1", status: s },
    });
    expect(moved.keep({ serverId: "s" }, "t1", status("working"))).toBe(true);
    expect(moved.keep({ serverId: "other server" }, "t1", status("completed"))).toBe(true);
    expect(moved.unclaimed("host", { serverId: "s", taskId: "t1" }).missed).toEqual(
      status("working"),
    );
    expect(moved.unclaimed("host", { serverId: "other server", taskId: "t1" }).missed).toEqual(
      status("completed"),
    );
  });

  it("keeps two children of one server's tasks of the same id apart", () => {
    const moved = new MovedRecords();
    moved.expect([
      { ...task, profileKey: "p" },
      { ...task, profileKey: "q" },
    ]);
    const status = (s: string) => ({
      method: "notifications/tasks/status",
      params: { taskId: "t1", status: s },
    });
    // The row's own child has no task t1 moving: only the projects' children have.
    expect(moved.keep({ serverId: "s" }, "t1", status("working"))).toBe(false);
    expect(moved.keep({ serverId: "s", profileKey: "p" }, "t1", status("working"))).toBe(true);
    expect(moved.keep({ serverId: "s", profileKey: "q" }, "t1", status("completed"))).toBe(true);
    const of = (profileKey: string) =>
      moved.unclaimed("host", { serverId: "s", profileKey, taskId: "t1" }).missed;
    expect(of("p")).toEqual(status("working"));
    expect(of("q")).toEqual(status("completed"));
  });
});
