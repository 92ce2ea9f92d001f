/**
 * The wire's task methods: `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of
 * one pooled server for one host of this connection (`taskOwner`: a connection may carry
 * many hosts, as the daemon's MCP sockets do), and `tasks/release` when such a host goes. A
 * task's owner is this connection and its `taskOwner`; when the connection ends, every
 * host it carried is gone, and their live tasks are released (pool/calls/tasks.ts).
 */
import type { ServerNotification } from "../../pool/core/types.js";
import type { TaskMethod, TaskOwner, TaskRequestOptions } from "../../pool/calls/tasks.js";
import type { TaskName } from "../../pool/calls/moved-records.js";
import type { HandlerTable, RequestContext } from "../socket/server.js";

/** Exactly what the task handlers use of the pool. */
export interface TasksPool {
  task(
    id: string,
    method: TaskMethod,
    params: Record<string, unknown>,
    owner: TaskOwner,
    options?: TaskRequestOptions,
  ): Promise<Record<string, unknown>>;
  releaseTasks(owner: TaskOwner, disconnected?: boolean): Promise<void>;
  taskNames(name: string, naming?: TaskName): Promise<TaskName[]>;
}

export const TASK_WIRE_METHODS = [
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "tasks/release",
  "tasks/name",
  "tasks/names",
] as const;

export type TaskHandlers = Pick<HandlerTable, (typeof TASK_WIRE_METHODS)[number]>;

export interface WireTasks {
  handlers: TaskHandlers;
  /** The owner of a task-augmented call made on `ctx`'s connection, as the pool keys it. */
  owner(ctx: RequestContext, taskOwner: string | undefined): TaskOwner;
}

export function createTaskHandlers(pool: TasksPool): WireTasks {
  /** Per connection id: the owners its hosts were, by key. */
  const owners = new Map<number, Map<string, TaskOwner>>();

  /** A host's owner key and name (the name finds its tasks moved from a previous daemon). */
  const named = (connectionId: number, taskOwner: string | undefined): TaskOwner => ({
    key: `${connectionId}\0${taskOwner ?? ""}`,
    ...(taskOwner !== undefined ? { name: taskOwner } : {}),
  });

  const keyOf = (ctx: RequestContext, taskOwner: string | undefined): string => {
    const { id, signal } = ctx.connection;
    const owner = named(id, taskOwner);
    let keys = owners.get(id);
    if (keys === undefined) {
      const created = new Map<string, TaskOwner>();
      keys = created;
      owners.set(id, created);
      // The connection ended: every host it carried is gone.
      signal.addEventListener(
        "abort",
        () => {
          owners.delete(id);
          for (const gone of created.values()) void pool.releaseTasks(gone, true);
        },
        { once: true },
      );
    }
    keys.set(owner.key, owner);
    return owner.key;
  };

  const ask =
    (method: TaskMethod) =>
    (
      params: { serverId: string; taskOwner?: string; taskId?: string; cursor?: string },
      ctx: RequestContext,
    ): Promise<Record<string, unknown>> => {
      const { serverId, taskOwner, ...rest } = params;
      return pool.task(serverId, method, rest, ownerOf(ctx, taskOwner), { signal: ctx.signal });
    };

  const ownerOf = (ctx: RequestContext, taskOwner: string | undefined): TaskOwner => ({
    ...named(ctx.connection.id, taskOwner),
    key: keyOf(ctx, taskOwner),
    // The task's status goes to this connection alone, as a server notification naming
    // the host it is for (it may come before the answer that names the task to the host).
    notify: (serverId: string, notification: ServerNotification) =>
      ctx.notify("notification", {
        serverId,
        notification,
        ...(taskOwner !== undefined ? { taskOwner } : {}),
      }),
  });

  return {
    handlers: {
      "tasks/get": ask("tasks/get"),
      "tasks/result": ask("tasks/result"),
      "tasks/list": ask("tasks/list"),
      "tasks/cancel": ask("tasks/cancel"),
      "tasks/name": async ({ taskOwner, ...naming }) => {
        await pool.taskNames(taskOwner, naming);
        return {};
      },
      "tasks/names": async ({ taskOwner }) => ({ tasks: await pool.taskNames(taskOwner) }),
      "tasks/release": async (params, ctx) => {
        const gone = named(ctx.connection.id, params.taskOwner);
        owners.get(ctx.connection.id)?.delete(gone.key);
        await pool.releaseTasks(gone);
        return {};
      },
    },
    owner: ownerOf,
  };
}
