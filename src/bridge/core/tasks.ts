/**
 * A bridge relays its servers' MCP tasks (2025-11-25 "tasks" utility) to each legacy host
 * session: a task-augmented `tools/call` answers the server's CreateTaskResult, and
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` go through the daemon to the
 * connection that created the task — for this session's tasks only (the daemon keys them by
 * the session's owner name). The server's `notifications/tasks/status` reach the session
 * whose task it is; when the session ends, its live tasks are released (cancelled on the
 * server where it can). The 2026-07-28 era has no tasks in its core: a modern host is
 * offered none.
 *
 * A bridge over several servers (or the whole pool) is one session for its host where direct
 * it has one per server: a task's id is its server's own making, and two servers may make the
 * same one. The session knows each task by the id its server gave it unless another of its
 * servers' tasks already goes by that id; then by the id with `@<server>` after it (the
 * spec has a task id opaque to its receiver). Every answer and status that names the task
 * names it by the host's id, and every request the host makes with it reaches the server
 * with the server's. `tasks/list` answers the host's tasks of every server holding some.
 */
import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  RELATED_TASK_META_KEY,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { defined, type PoolClient, type TaskMethod } from "mcpool-client";
import { toMcpError } from "./errors.js";

/** A task as its server knows it. */
export interface ServerTask {
  serverId: string;
  taskId: string;
}

const keyOf = (serverId: string, taskId: string): string => `${serverId}\0${taskId}`;

/**
 * One host session's tasks: the owner name it goes by (the name its entry gave, which it gives
 * again to a daemon that took over; else one of its own), and the tasks it made, by host id.
 */
export class SessionTasks {
  readonly owner: string;
  readonly #byHost = new Map<string, ServerTask>();
  readonly #toHost = new Map<string, string>();
  readonly #client: PoolClient | undefined;
  /**
   * Settles once the session knows again the ids its host knew its tasks by: a host that
   * gives its name again (to a daemon that took over) asks about tasks a previous session
   * named, and the daemon kept each one's id with it.
   */
  readonly restored: Promise<void>;

  constructor(name?: string, client?: PoolClient) {
    this.owner = name ?? randomUUID();
    this.#client = client;
    const known = name === undefined || client === undefined ? [] : client.tasks.names(name);
    this.restored = Promise.resolve(known).then(
      (tasks) => {
        for (const { serverId, taskId, hostId } of tasks) {
          if (this.#byHost.has(hostId) || this.has(serverId, taskId)) continue;
          this.#byHost.set(hostId, { serverId, taskId });
          this.#toHost.set(keyOf(serverId, taskId), hostId);
        }
      },
      () => undefined, // no daemon to ask: its requests fail as they would
    );
  }

  /**
   * The id the host knows task `taskId` of `serverId` by, given the first time the session
   * meets the task (its CreateTaskResult, or a status the server sent before it).
   */
  hostId(serverId: string, taskId: string): string {
    const key = keyOf(serverId, taskId);
    const known = this.#toHost.get(key);
    if (known !== undefined) return known;
    let id = taskId;
    for (let n = 2; this.#byHost.has(id); n++) {
      id = n === 2 ? `${taskId}@${serverId}` : `${taskId}@${serverId}#${n}`;
    }
    this.#byHost.set(id, { serverId, taskId });
    this.#toHost.set(key, id);
    return id;
  }

  /** The host's task `hostId` as its server knows it; undefined when it is not the session's. */
  find(hostId: string): ServerTask | undefined {
    return this.#byHost.get(hostId);
  }

  /** Whether task `taskId` of `serverId` is the session's. */
  has(serverId: string, taskId: string): boolean {
    return this.#toHost.has(keyOf(serverId, taskId));
  }

  /** The servers holding some of the session's tasks, in the order the session met them. */
  get servers(): string[] {
    return [...new Set([...this.#byHost.values()].map((t) => t.serverId))];
  }

  get size(): number {
    return this.#byHost.size;
  }

  /**
   * The id a status of task `taskId` of `serverId` reaches the session by, or undefined when
   * the task is not the session's (`taskOwner`: whom the daemon sent it to; a status sent to
   * another host is never this one's, though it may have a task of the same id: one server's
   * children for two projects each make their own ids). Decided once the session knows its
   * older tasks' ids again, so a new task's id never takes one of theirs.
   */
  async statusId(
    serverId: string,
    taskId: string,
    taskOwner?: string,
  ): Promise<string | undefined> {
    await this.restored;
    const mine = taskOwner === undefined ? this.has(serverId, taskId) : taskOwner === this.owner;
    if (!mine) return undefined;
    return this.hostId(serverId, taskId);
  }

  /**
   * A CreateTaskResult of `serverId` the session was answered: its task is the session's,
   * and the result as the host is given it (its id the host's).
   */
  created<T>(serverId: string, result: T): T {
    const id = (result as { task?: { taskId?: unknown } } | undefined)?.task?.taskId;
    if (typeof id !== "string") return result;
    return renamed(result, "created", id, this.hostId(serverId, id));
  }

  /**
   * created(), once the session's older ids are known again and the daemon keeps the host's
   * id with the task when it is not the server's (so a session made again finds it).
   */
  async told<T>(serverId: string, result: T): Promise<T> {
    await this.restored;
    const answer = this.created(serverId, result);
    const id = (result as { task?: { taskId?: unknown } } | undefined)?.task?.taskId;
    const hostId = (answer as { task?: { taskId?: unknown } } | undefined)?.task?.taskId;
    if (typeof id === "string" && typeof hostId === "string" && id !== hostId) {
      // Kept only for a daemon that takes over: one that cannot keep it (an older build
      // answers "Method not found") leaves the host its task all the same.
      await this.#client?.tasks.name(serverId, id, this.owner, hostId).catch(() => undefined);
    }
    return answer;
  }
}

/**
 * Where the protocol names a task in a message: a task itself (a `tasks/get` or
 * `tasks/cancel` result, an item of `tasks/list`, a status notification's params), a
 * CreateTaskResult (its `task`), or a task's payload (`tasks/result`: the tool's own result,
 * which names its task in its related-task `_meta` only).
 */
export type TaskPlace = "task" | "created" | "payload";

/**
 * `value` with its task's id `from` set to `to` where the protocol puts it (`place`), and in
 * its related-task `_meta`: nowhere else, so a tool's own output that has a `taskId` field
 * reaches the host as the tool made it.
 */
export function renamed<T>(value: T, place: TaskPlace, from: string, to: string): T {
  if (from === to || value === null || typeof value !== "object") return value;
  const out = { ...(value as Record<string, unknown>) };
  const swap = (id: unknown): unknown => (id === from ? to : id);
  if (place === "task" && "taskId" in out) out.taskId = swap(out.taskId);
  const task = out.task as Record<string, unknown> | undefined;
  if (place === "created" && typeof task === "object" && task !== null && "taskId" in task) {
    out.task = { ...task, taskId: swap(task.taskId) };
  }
  const meta = out._meta as Record<string, unknown> | undefined;
  const related = meta?.[RELATED_TASK_META_KEY] as Record<string, unknown> | undefined;
  if (typeof related === "object" && related !== null && "taskId" in related) {
    out._meta = { ...meta, [RELATED_TASK_META_KEY]: { ...related, taskId: swap(related.taskId) } };
  }
  return out as T;
}

/** A status notification naming its task `from` as `to` (in its params, where the protocol puts it). */
export function renamedStatus<T extends { params?: unknown }>(
  notification: T,
  from: string,
  to: string,
): T {
  return { ...notification, params: renamed(notification.params, "task", from, to) };
}

/**
 * A server's error text with each exact token `from` (the id as the server quoted it, not a
 * part of a longer word or id) set to `to`.
 */
export function renamedText(text: string, from: string, to: string): string {
  if (from === to || from === "") return text;
  const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![\\w@#.-])${escaped}(?![\\w@#.-]*\\w)`, "g"), to);
}

/**
 * The session's `tasks/*` handlers, answered by its servers through the daemon: `servers`
 * are those in scope that offer tasks, in scope order (a task the session does not have is
 * asked of the first, which says what it says of a task it never had, as direct).
 */
export function answerTasks(
  server: Server,
  tasks: SessionTasks,
  client: PoolClient,
  servers: readonly string[],
): void {
  const send = (
    serverId: string,
    method: TaskMethod,
    params: { taskId?: string; cursor?: string },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> =>
    client.tasks.request(serverId, method, params, { taskOwner: tasks.owner, signal });

  const about =
    (method: Exclude<TaskMethod, "tasks/list">) =>
    async (request: { params: { taskId: string } }, extra: Extra): Promise<never> => {
      await tasks.restored;
      const hostId = request.params.taskId;
      const task = tasks.find(hostId) ?? { serverId: servers[0] ?? "", taskId: hostId };
      try {
        const result = await send(task.serverId, method, { taskId: task.taskId }, extra.signal);
        const place = method === "tasks/result" ? "payload" : "task";
        return renamed(result, place, task.taskId, hostId) as never;
      } catch (error) {
        // The server's words name the task by its id: the host's, as they would direct.
        const refusal = toMcpError(error);
        refusal.message = renamedText(refusal.message, task.taskId, hostId);
        throw refusal;
      }
    };

  const list = async (
    request: { params?: { cursor?: string | undefined } | undefined },
    extra: Extra,
  ): Promise<never> => {
    const cursor = request.params?.cursor;
    await tasks.restored;
    try {
      // The pool answers a host's own tasks in one page: a cursor it holds was never given,
      // and is the first server's to refuse, as direct.
      if (cursor !== undefined || tasks.size === 0) {
        const first = servers[0];
        if (first === undefined) return { tasks: [] } as never;
        return (await send(first, "tasks/list", defined({ cursor }), extra.signal)) as never;
      }
      let answer: Record<string, unknown> | undefined;
      const all: unknown[] = [];
      for (const serverId of tasks.servers) {
        const page = await send(serverId, "tasks/list", {}, extra.signal);
        answer ??= page;
        for (const task of (page.tasks as { taskId?: unknown }[] | undefined) ?? []) {
          const id = task.taskId;
          all.push(
            typeof id === "string" ? renamed(task, "task", id, tasks.hostId(serverId, id)) : task,
          );
        }
      }
      return { ...answer, tasks: all } as never;
    } catch (error) {
      throw toMcpError(error);
    }
  };

  server.setRequestHandler(GetTaskRequestSchema, about("tasks/get"));
  server.setRequestHandler(GetTaskPayloadRequestSchema, about("tasks/result"));
  server.setRequestHandler(ListTasksRequestSchema, list);
  server.setRequestHandler(CancelTaskRequestSchema, about("tasks/cancel"));
}

interface Extra {
  signal: AbortSignal;
}

/** The task a status notification is about, when it is one. */
export function statusTaskId(notification: ServerNotification): string | undefined {
  if (notification.method !== "notifications/tasks/status") return undefined;
  const id = (notification.params as { taskId?: unknown } | undefined)?.taskId;
  return typeof id === "string" ? id : undefined;
}
