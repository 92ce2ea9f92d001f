/**
 * A bridge session's tasks over several servers: each known to the host by its server's id
 * unless another of the session's tasks already goes by it, then by `<id>@<server>`; every
 * task the host is told of named by the host's id, and found again from it.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { renamed, renamedStatus, renamedText, SessionTasks } from "../../src/bridge/core/tasks.js";

describe("a session's tasks of several servers", () => {
  it("keeps a server's own id while no other task of the session has it", () => {
    const tasks = new SessionTasks();
    expect(tasks.hostId("a", "task-1")).toBe("task-1");
    expect(tasks.hostId("b", "task-2")).toBe("task-2");
    expect(tasks.find("task-2")).toEqual({ serverId: "b", taskId: "task-2" });
  });

  it("tells apart two servers' tasks of the same id, the same way every time", () => {
    const tasks = new SessionTasks();
    expect(tasks.hostId("a", "task-1")).toBe("task-1");
    expect(tasks.hostId("b", "task-1")).toBe("task-1@b");
    expect(tasks.hostId("b", "task-1")).toBe("task-1@b");
    expect(tasks.find("task-1")).toEqual({ serverId: "a", taskId: "task-1" });
    expect(tasks.find("task-1@b")).toEqual({ serverId: "b", taskId: "task-1" });
    expect(tasks.has("b", "task-1")).toBe(true);
    expect(tasks.has("c", "task-1")).toBe(false);
    expect(tasks.servers).toEqual(["a", "b"]);
  });

  it("finds a free id when the made-up one is itself a server's id", () => {
    const tasks = new SessionTasks();
    tasks.hostId("a", "x");
    tasks.hostId("c", "x@b");
    expect(tasks.hostId("b", "x")).toBe("x@b#3");
    expect(tasks.find("x@b#3")).toEqual({ serverId: "b", taskId: "x" });
  });

  it("names the task by the host's id in a CreateTaskResult and a task's result", () => {
    const tasks = new SessionTasks();
    tasks.created("a", { task: { taskId: "1", status: "working" } });
    const answer = tasks.created("b", { task: { taskId: "1", status: "working" } });
    expect(answer).toEqual({ task: { taskId: "1@b", status: "working" } });
    const result = {
      content: [{ type: "text", text: "1" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "1" } },
    };
    expect(renamed(result, "payload", "1", "1@b")).toEqual({
      content: [{ type: "text", text: "1" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "1@b" } },
    });
  });

  it("leaves a tool's own output that has a taskId field as the tool made it", () => {
    const result = {
      content: [{ type: "text", text: '{"taskId":"1"}' }],
      structuredContent: { taskId: "1", rows: [{ taskId: "1" }] },
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "1" } },
    };
    const renamedResult = renamed(result, "payload", "1", "1@b");
    expect(renamedResult.structuredContent).toEqual({ taskId: "1", rows: [{ taskId: "1" }] });
    expect(renamedResult._meta["io.modelcontextprotocol/related-task"].taskId).toBe("1@b");
    const tasks = new SessionTasks();
    tasks.hostId("a", "1");
    const created = tasks.created("b", {
      task: { taskId: "1", status: "working" },
      structuredContent: { taskId: "1" },
    });
    expect(created).toEqual({
      task: { taskId: "1@b", status: "working" },
      structuredContent: { taskId: "1" },
    });
    const status = {
      method: "notifications/tasks/status",
      params: { taskId: "1", status: "working", extra: { taskId: "1" } },
    };
    expect(renamedStatus(status, "1", "1@b").params).toEqual({
      taskId: "1@b",
      status: "working",
      extra: { taskId: "1" },
    });
  });

  it("renames in a server's error text only the exact id it quoted", () => {
    expect(renamedText("Task not found: task-1", "task-1", "task-1@b")).toBe(
      "Task not found: task-1@b",
    );
    expect(renamedText('Task "task-1" expired. Try task-10.', "task-1", "task-1@b")).toBe(
      'Task "task-1@b" expired. Try task-10.',
    );
    expect(renamedText("subtask-1 of task-1@a failed", "task-1", "task-1@b")).toBe(
      "subtask-1 of task-1@a failed",
    );
  });
});

/** A daemon client as a session sees it: only the two task-name methods, answered by the test. */
function daemonWith(names: () => Promise<unknown[]>, name: () => Promise<void>): PoolClient {
  return { tasks: { names, name } } as unknown as PoolClient;
}

describe("a named session's tasks across a daemon that took over", () => {
  it("gives a status its id only once the older tasks' ids are known again", async () => {
    let known: (tasks: unknown[]) => void = () => undefined;
    const names = new Promise<unknown[]>((resolve) => (known = resolve));
    const tasks = new SessionTasks(
      "host-name",
      daemonWith(
        () => names,
        async () => undefined,
      ),
    );
    // A new task of b goes by "t" at its server, as an older task of a did for the host.
    const id = tasks.statusId("b", "t", "host-name");
    known([{ serverId: "a", taskId: "t", hostId: "t" }]);
    expect(await id).toBe("t@b");
    expect(tasks.find("t")).toEqual({ serverId: "a", taskId: "t" });
  });

  it("gives no id to a status of a task that is another host's", async () => {
    const tasks = new SessionTasks(
      "host-name",
      daemonWith(
        async () => [],
        async () => undefined,
      ),
    );
    expect(await tasks.statusId("a", "t", "another-host")).toBeUndefined();
  });

  it("gives no id to another host's status of a task whose id the session's task has too", async () => {
    const tasks = new SessionTasks(
      "host-name",
      daemonWith(
        async () => [],
        async () => undefined,
      ),
    );
    // This host's task "t" of server a; another project's child of a made its own "t".
    tasks.created("a", { task: { taskId: "t", status: "working" } });
    expect(await tasks.statusId("a", "t", "another-host")).toBeUndefined();
    expect(await tasks.statusId("a", "t", "host-name")).toBe("t");
    // A status naming no host (a daemon that names none) is the session's task's.
    expect(await tasks.statusId("a", "t")).toBe("t");
  });

  it("answers the host its task when the daemon cannot keep its id (an older build)", async () => {
    const refused = async (): Promise<void> => {
      throw new Error("MCP error -32601: Method not found");
    };
    const tasks = new SessionTasks(
      "host-name",
      daemonWith(async () => [], refused),
    );
    tasks.hostId("a", "t");
    const answer = await tasks.told("b", { task: { taskId: "t", status: "working" } });
    expect(answer).toEqual({ task: { taskId: "t@b", status: "working" } });
  });
});
