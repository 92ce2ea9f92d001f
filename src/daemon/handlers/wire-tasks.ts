/**
 * The wire's task methods: `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` of
 * one pooled server for one host of this connection (`taskOwner`: a connection may carry
 * many hosts, as the daemon's MCP sockets do), and `tasks/release` when such a host goes. A
 * task's owner is this connection and its `taskOwner`; when the connection ends, every
 * host it carried is gone, and their live tasks are released (pool/calls/tasks.ts).
 */
import type { ServerNotification } from "../../pool/core/types.js";
import type { TaskMethod, TaskOwner, TaskRequestOptions } from "../../pool/calls/tasks.js";
import type { HandlerTable, RequestContext } from "../socket/server.js";

/** Exactly what the task handlers use of the pool. */
export interface TasksPool {
  task(
    id: string,
    method: TaskMethod,
    params: Record<string, unknown>,
    owner: string,
    options?: TaskRequestOptions,
  ): Promise<Record<string, unknown>>;
  releaseTasks(owner: string): Promise<void>;
}

export const TASK_WIRE_METHODS = [
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "tasks/release",
] as const;

export type TaskHandlers = Pick<HandlerTable, (typeof TASK_WIRE_METHODS)[number]>;

export interface WireTasks {
  handlers: TaskHandlers;
  /** The owner of a task-augmented call made on `ctx`'s connection, as the pool keys it. */
  owner(ctx: RequestContext, taskOwner: string | undefined): TaskOwner;
}

export function createTaskHandlers(pool: TasksPool): WireTasks {
  /** Per connection id: the owner keys its hosts used. */
  const owners = new Map<number, Set<string>>();

  const keyOf = (ctx: RequestContext, taskOwner: string | undefined): string => {
    const { id, signal } = ctx.connection;
    const key = `${id}\0${taskOwner ?? ""}`;
    let keys = owners.get(id);
    if (keys === undefined) {
      const created = new Set<string>();
      keys = created;
      owners.set(id, created);
      // The connection ended: every host it carried is gone.
      signal.addEventListener(
        "abort",
        () => {
          owners.delete(id);
          for (const owner of created) void pool.releaseTasks(owner);
        },
        { once: true },
      );
    }
    keys.add(key);
    return key;
  };

  const ask =
    (method: TaskMethod) =>
    (
      params: { serverId: string; taskOwner?: string; taskId?: string; cursor?: string },
      ctx: RequestContext,
    ): Promise<Record<string, unknown>> => {
      const { serverId, taskOwner, ...rest } = params;
      return pool.task(serverId, method, rest, keyOf(ctx, taskOwner), { signal: ctx.signal });
    };

  return {
    handlers: {
      "tasks/get": ask("tasks/get"),
      "tasks/result": ask("tasks/result"),
      "tasks/list": ask("tasks/list"),
      "tasks/cancel": ask("tasks/cancel"),
      "tasks/release": async (params, ctx) => {
        const key = `${ctx.connection.id}\0${params.taskOwner}`;
        owners.get(ctx.connection.id)?.delete(key);
        await pool.releaseTasks(key);
        return {};
      },
    },
    owner: (ctx, taskOwner) => ({
      key: keyOf(ctx, taskOwner),
      // The task's status goes to this connection alone, as a server notification naming
      // the host it is for (it may come before the answer that names the task to the host).
      notify: (serverId: string, notification: ServerNotification) =>
        ctx.notify("notification", {
          serverId,
          notification,
          ...(taskOwner !== undefined ? { taskOwner } : {}),
        }),
    }),
  };
}
