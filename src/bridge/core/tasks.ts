/**
 * A one-server bridge relays its server's MCP tasks (2025-11-25 "tasks" utility) to each
 * legacy host session: a task-augmented `tools/call` answers the server's CreateTaskResult,
 * and `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` go through the daemon to
 * the connection that created the task — for this session's tasks only (the daemon keys
 * them by the session's owner name). The server's `notifications/tasks/status` reach the
 * session whose task it is; when the session ends, its live tasks are released (cancelled
 * on the server where it can). The 2026-07-28 era has no tasks in its core: a modern host
 * is offered none.
 */
import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { defined, type PoolClient, type TaskMethod } from "mcpool-client";
import { toMcpError } from "./errors.js";

/**
 * One host session's tasks: the owner name it goes by (the name its entry gave, which it gives
 * again to a daemon that took over; else one of its own), and the ids of the tasks it made.
 */
export class SessionTasks {
  readonly owner: string;
  readonly #ids = new Set<string>();

  constructor(name?: string) {
    this.owner = name ?? randomUUID();
  }

  /** A CreateTaskResult the session was answered: its task is the session's. */
  created(result: unknown): void {
    const id = (result as { task?: { taskId?: unknown } } | undefined)?.task?.taskId;
    if (typeof id === "string") this.#ids.add(id);
  }

  /** The daemon named this session as the owner of task `taskId` (its status came first). */
  adopt(taskId: string): void {
    this.#ids.add(taskId);
  }

  has(taskId: string): boolean {
    return this.#ids.has(taskId);
  }

  get size(): number {
    return this.#ids.size;
  }
}

/** The session's `tasks/*` handlers, answered by server `serverId` through the daemon. */
export function answerTasks(
  server: Server,
  tasks: SessionTasks,
  client: PoolClient,
  serverId: string,
): void {
  const ask =
    (method: TaskMethod) =>
    async (
      request: {
        params?: { taskId?: string | undefined; cursor?: string | undefined } | undefined;
      },
      extra: Extra,
    ) => {
      const { taskId, cursor } = request.params ?? {};
      const params = method === "tasks/list" ? defined({ cursor }) : defined({ taskId });
      try {
        return (await client.tasks.request(serverId, method, params, {
          taskOwner: tasks.owner,
          signal: extra.signal,
        })) as never;
      } catch (error) {
        throw toMcpError(error);
      }
    };
  server.setRequestHandler(GetTaskRequestSchema, ask("tasks/get"));
  server.setRequestHandler(GetTaskPayloadRequestSchema, ask("tasks/result"));
  server.setRequestHandler(ListTasksRequestSchema, ask("tasks/list"));
  server.setRequestHandler(CancelTaskRequestSchema, ask("tasks/cancel"));
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
