/**
 * Task records of a row whose server runs one child per host profile (a project's roots):
 * each child counts its task ids on its own, so two children make the same id for two
 * hosts. Each record is its child's: a status goes only to the host whose child sent it,
 * each host's `tasks/get` reaches the child that made its task, one host's task never
 * releases the other's hold, and across a hand-over both records move and are taken up.
 */
import { describe, expect, it } from "vitest";
import type { McpServerConfig } from "../../src/config/rows.js";
import type { ServerNotification } from "../../src/pool/core/types.js";
import { PoolTasks, type TaskOwner } from "../../src/pool/calls/tasks.js";
import type { Connection } from "../../src/pool/server/connection.js";
import type { EntryContext } from "../../src/pool/server/context.js";
import { ProfileEntry } from "../../src/pool/server/profile-entry.js";

const row = { id: "x", command: "server-of-projects" } as McpServerConfig;
/** What a child needs of its context here: nothing is dialled, nothing is reaped. */
const context = { log: {}, idleTimeoutMs: 0, schedule: (work) => work() } as EntryContext;

/**
 * A project's child of row `x`, whose server answers `tasks/get` as its project's, and lists
 * tasks `1` and `2` (whoever's they are).
 */
function child(project: string): ProfileEntry {
  const entry = new ProfileEntry(row, context, { roots: [{ uri: `file:///${project}` }] }, project);
  serve(entry, `in ${project}`);
  return entry;
}

/** `entry`'s child has a new process (as after a crash or a reap), whose tasks say `where`. */
function serve(entry: ProfileEntry, where: string): Connection {
  const task = (taskId: string) => ({ taskId, status: "working", statusMessage: where });
  const request = ({ method, params }: { method: string; params: { taskId: string } }) =>
    Promise.resolve(
      method === "tasks/list" ? { tasks: [task("1"), task("2")] } : task(params.taskId),
    );
  const connection = { inflight: 0, client: { request } } as unknown as Connection;
  (entry as unknown as { _connection: Connection })._connection = connection;
  return connection;
}

/** A host that keeps the statuses it is sent. */
function host(key: string): TaskOwner & { heard: string[] } {
  const heard: string[] = [];
  return {
    key,
    name: key,
    heard,
    notify: (_serverId, notification) => heard.push(JSON.stringify(notification.params)),
  };
}

function pool(): PoolTasks {
  return new PoolTasks({
    entry: (id) => {
      throw new Error(`a stranger's question to ${id}`);
    },
    timeoutMs: () => undefined,
  });
}

const status = (statusMessage: string): ServerNotification =>
  ({
    method: "notifications/tasks/status",
    params: { taskId: "1", status: "completed", statusMessage },
  }) as ServerNotification;

const made = { task: { taskId: "1", status: "working", ttl: 60_000 } };

describe("task records of a row's children for two projects", () => {
  it("keeps each host's task on its own child, and sends each child's status to its own host", async () => {
    const tasks = pool();
    const [p, q] = [child("p"), child("q")];
    const [a, b] = [host("a"), host("b")];
    tasks.created(p, p.connection!, made, a);
    tasks.created(q, q.connection!, made, b);
    // B's task of the same id released nothing of A's: both children are held.
    expect([p.connection!.inflight, q.connection!.inflight]).toEqual([1, 1]);
    expect(tasks.size).toBe(2);

    expect(tasks.status("x", status("p's is done"), p.connection!, "p")).toBe(true);
    expect(a.heard).toEqual([JSON.stringify(status("p's is done").params)]);
    expect(b.heard).toEqual([]);
    // P's task ended its hold; Q's task, still working, holds Q's child.
    expect([p.connection!.inflight, q.connection!.inflight]).toEqual([0, 1]);

    expect(await tasks.request("x", "tasks/get", { taskId: "1" }, a)).toMatchObject({
      statusMessage: "in p",
    });
    expect(await tasks.request("x", "tasks/get", { taskId: "1" }, b)).toMatchObject({
      statusMessage: "in q",
    });
    tasks.close();
  });

  it("gives a status a child sent before its answer to that child's task alone", () => {
    const tasks = pool();
    const [p, q] = [child("p"), child("q")];
    const [a, b] = [host("a"), host("b")];
    const answered = [tasks.asking(p), tasks.asking(q)];
    expect(tasks.status("x", status("p's said first"), p.connection!, "p")).toBe(true);
    tasks.created(q, q.connection!, made, b);
    tasks.created(p, p.connection!, made, a);
    expect(b.heard).toEqual([]);
    expect(a.heard).toEqual([JSON.stringify(status("p's said first").params)]);
    for (const done of answered) done();
    tasks.close();
  });

  it("lists a host's tasks on two children, each child's only the ids the host's tasks have there", async () => {
    const [p, q] = [child("p"), child("q")];
    const tasks = new PoolTasks({ entry: () => p, timeoutMs: () => undefined });
    const [a, b] = [host("a"), host("b")];
    tasks.created(p, p.connection!, made, a);
    tasks.created(q, q.connection!, { task: { taskId: "2", status: "working" } }, a);
    // B's tasks of the same ids, each on the other child.
    tasks.created(p, p.connection!, { task: { taskId: "2", status: "working" } }, b);
    tasks.created(q, q.connection!, made, b);
    const listed = (await tasks.request("x", "tasks/list", {}, a)).tasks as unknown[];
    expect(listed).toEqual([
      { taskId: "1", status: "working", statusMessage: "in p" },
      { taskId: "2", status: "working", statusMessage: "in q" },
    ]);
    tasks.close();
  });

  it("moves both records across a hand-over, each taken up on its own child", async () => {
    const before = pool();
    const [p, q] = [child("p"), child("q")];
    before.created(p, p.connection!, made, host("a"));
    before.created(q, q.connection!, made, host("b"));
    const moved = before.handOff((entry) => ({ profileKey: (entry as ProfileEntry).key }));
    expect(moved.map((t) => [t.profileKey, t.owner])).toEqual([
      ["p", "a"],
      ["q", "b"],
    ]);

    const after = pool();
    const [p2, q2] = [child("p"), child("q")];
    after.expect(moved);
    const left = after.adopt(moved, (_id, key) => (key === "p" ? p2 : q2), 60_000);
    expect(left).toEqual([]);
    const [a, b] = [host("a"), host("b")];
    expect(await after.request("x", "tasks/get", { taskId: "1" }, b)).toMatchObject({
      statusMessage: "in q",
    });
    expect(await after.request("x", "tasks/get", { taskId: "1" }, a)).toMatchObject({
      statusMessage: "in p",
    });
    after.status("x", status("q's is done"), q2.connection!, "q");
    expect(b.heard).toEqual([JSON.stringify(status("q's is done").params)]);
    expect(a.heard).toEqual([]);
    after.close();
    before.close();
  });

  it("keeps a task of a child's former process from the new process's task of the same id", async () => {
    const tasks = pool();
    const p = child("p");
    const [a, b] = [host("a"), host("b")];
    tasks.created(p, p.connection!, { task: { taskId: "1", status: "completed" } }, a);
    // The child's process ended; its new one counts its ids from 1 again.
    const later = serve(p, "in p's new process");
    const answered = tasks.asking(p);
    expect(tasks.status("x", status("b's, working"), later, "p")).toBe(true);
    tasks.created(p, later, made, b);
    answered();
    // The new process's status is B's alone; A's record is kept, and B's is its own.
    expect(a.heard).toEqual([]);
    expect(b.heard).toEqual([JSON.stringify(status("b's, working").params)]);
    expect(tasks.size).toBe(2);
    tasks.status("x", status("b's, done"), later, "p");
    expect(a.heard).toEqual([]);

    expect(await tasks.request("x", "tasks/get", { taskId: "1" }, b)).toMatchObject({
      statusMessage: "in p's new process",
    });
    // Direct, A's server process died with its task: asking about it fails, and says why.
    await expect(tasks.request("x", "tasks/get", { taskId: "1" }, a)).rejects.toMatchObject({
      code: "connection-lost",
      message: expect.stringMatching(/task "1" of server "x" is lost: the server process/),
    });
    tasks.close();
  });

  it("answers an empty task list to a host with no live task, starting no child", async () => {
    const p = child("p");
    const idle = {
      id: "x",
      connection: undefined,
      ensure: () => Promise.reject(new Error("a child was started for an empty list")),
    } as unknown as ProfileEntry;
    const tasks = new PoolTasks({ entry: () => idle, timeoutMs: () => undefined });
    const a = host("a");
    expect(await tasks.request("x", "tasks/list", {}, a)).toEqual({ tasks: [] });
    // A task whose process ended is listed no more, and its child's new process is not asked.
    tasks.created(p, p.connection!, made, a);
    serve(p, "in p's new process");
    expect(await tasks.request("x", "tasks/list", {}, a)).toEqual({ tasks: [] });
    tasks.close();
  });

  it("takes the later made of a host's two tasks of one id, also when a child made its id again", async () => {
    const tasks = pool();
    const [p, q] = [child("p"), child("q")];
    const a = host("a");
    tasks.created(p, p.connection!, made, a);
    tasks.created(q, q.connection!, made, a);
    // P's process names task 1 again: that record is the one made last.
    tasks.created(p, p.connection!, made, a);
    expect(tasks.size).toBe(2);
    expect(await tasks.request("x", "tasks/get", { taskId: "1" }, a)).toMatchObject({
      statusMessage: "in p",
    });
    tasks.close();
  });
});
