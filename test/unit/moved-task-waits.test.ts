/**
 * A host's request about its tasks that waits for the adoption of moved records: when the
 * host goes meanwhile, the request claims nothing, so the records stay the host's by name and
 * its next connection finds them, whichever of the request and the release runs first.
 */
import { describe, expect, it } from "vitest";
import type { MovedTask } from "../../src/pool/calls/moved-records.js";
import { PoolTasks } from "../../src/pool/calls/tasks.js";
import type { Connection } from "../../src/pool/server/connection.js";
import type { ServerEntry } from "../../src/pool/server/entry.js";

/** A child whose server answers `tasks/get` of any task as working. */
function child(id: string): ServerEntry {
  const request = ({ params }: { params: { taskId: string } }): Promise<unknown> =>
    Promise.resolve({ taskId: params.taskId, status: "working" });
  const connection = { inflight: 0, client: { request } } as unknown as Connection;
  const entry = { id, connection, busy: () => undefined, idle: () => undefined };
  return entry as unknown as ServerEntry;
}

const task: MovedTask = {
  serverId: "s",
  taskId: "t",
  owner: "host",
  status: "working",
  ttl: 3_600_000,
  expiresAt: Date.now() + 3_600_000,
};

/** Records whose stranger's question (a task not the host's) names no row: it is refused. */
function pool(): PoolTasks {
  return new PoolTasks({
    entry: (id) => {
      throw new Error(`a stranger's question to ${id}`);
    },
    timeoutMs: () => undefined,
  });
}

describe("a host gone while its moved records are adopted", () => {
  it("claims nothing for the gone connection; the host's next one finds its task", async () => {
    const tasks = pool();
    const s = child("s");
    tasks.expect([task]);
    const gone = { key: "connection-1\0host", name: "host" };
    const abort = new AbortController();
    const waiting = tasks.request("s", "tasks/get", { taskId: "t" }, gone, {
      signal: abort.signal,
    });
    const failed = expect(waiting).rejects.toThrow(/gone/);
    abort.abort(new Error("the host's connection is gone"));
    const released = tasks.release(gone, true);
    tasks.adopt([task], () => s, 60_000);
    await failed;
    await released;
    const back = { key: "connection-2\0host", name: "host" };
    await expect(tasks.request("s", "tasks/get", { taskId: "t" }, back)).resolves.toEqual({
      taskId: "t",
      status: "working",
    });
    tasks.close();
  });

  it("ends what a request claimed for a connection whose release came while it waited", async () => {
    const tasks = pool();
    const s = child("s");
    tasks.expect([task]);
    const gone = { key: "connection-1\0host", name: "host" };
    // A request with no signal to tell it its host went: it claims the record once taken up.
    const waiting = tasks.request("s", "tasks/get", { taskId: "t" }, gone);
    const released = tasks.release(gone, true);
    tasks.adopt([task], () => s, 60_000);
    await waiting;
    await released;
    // The release came after the request, so it ends what the request claimed.
    expect(tasks.size).toBe(0);
    expect(s.connection?.inflight).toBe(0);
    tasks.close();
  });

  it("stops a gone host's request from waiting before the adoption concludes", async () => {
    const tasks = pool();
    tasks.expect([task]);
    const abort = new AbortController();
    const owner = { key: "connection-1\0host", name: "host" };
    const waiting = tasks.request("s", "tasks/get", { taskId: "t" }, owner, {
      signal: abort.signal,
    });
    abort.abort(new Error("the host's connection is gone"));
    // Nothing concludes the adoption here: the request ends on its abort alone.
    await expect(waiting).rejects.toThrow("the host's connection is gone");
    tasks.close();
  });

  it("says why each moved record it could not take up was left", () => {
    const tasks = pool();
    const s = child("s");
    const noConnection = { ...child("n"), connection: undefined } as unknown as ServerEntry;
    const at = (serverId: string, taskId: string, expiresAt = task.expiresAt): MovedTask => ({
      ...task,
      serverId,
      taskId,
      expiresAt,
    });
    const places = new Map([
      ["s", s],
      ["n", noConnection],
    ]);
    const left = tasks.adopt(
      [at("s", "t"), at("gone", "a"), at("n", "b"), at("s", "c", Date.now() - 1), at("s", "t")],
      (id) => places.get(id),
      60_000,
    );
    expect(left.map(({ task: { taskId }, why }) => [taskId, why])).toEqual([
      ["a", "its child is not served here"],
      ["b", "its child has no connection"],
      ["c", "it expired"],
      ["t", "a record of that task is kept already"],
    ]);
    expect(tasks.size).toBe(1);
    tasks.close();
  });
});
