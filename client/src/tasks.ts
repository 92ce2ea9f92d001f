/**
 * MCP tasks through the daemon (2025-11-25 "tasks"): a task-augmented call is `call()` with
 * `task` (and `raw`), answered with the server's CreateTaskResult; the requests about its
 * task go to the connection that created it, for the host that owns it. One client
 * connection may carry many hosts (a bridge's sessions): each names itself as `taskOwner`,
 * and another host's task is, to it, a task the server does not have. A call that names no
 * owner is this client's own (`owner`): a name kept across the client's reconnects, so its
 * tasks are found again on a daemon that took over from the last (`mcpool restart`).
 */
import { randomUUID } from "node:crypto";
import type { MethodName, ParamsOf, ResultOf } from "mcpool-protocol";

export type TaskMethod = "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel";

export interface TaskOptions {
  /** Which host of this connection asks (the `taskOwner` its task-augmented calls named). */
  taskOwner?: string;
  signal?: AbortSignal;
}

type Run = <M extends MethodName>(
  method: M,
  params: ParamsOf<M>,
  signal?: AbortSignal,
) => Promise<ResultOf<M>>;

/** The task requests of one client connection. */
export class TaskRequests {
  readonly #run: Run;
  /** The name this client's tasks go by when a call or request names no `taskOwner`. */
  readonly owner = randomUUID();

  constructor(run: Run) {
    this.#run = run;
  }

  /** `tasks/get`, `tasks/result`, `tasks/cancel` (`taskId`) or `tasks/list` (`cursor`) of a server. */
  request(
    serverId: string,
    method: TaskMethod,
    params: { taskId?: string; cursor?: string },
    options: TaskOptions = {},
  ): Promise<Record<string, unknown>> {
    const sent = { ...params, taskOwner: options.taskOwner ?? this.owner, serverId };
    if (method === "tasks/list") return this.#run(method, sent, options.signal);
    return this.#run(method, { ...sent, taskId: params.taskId ?? "" }, options.signal);
  }

  /** Host `taskOwner` knows task `taskId` of `serverId` by `hostId`: kept with the task, across a restart. */
  async name(serverId: string, taskId: string, taskOwner: string, hostId: string): Promise<void> {
    await this.#run("tasks/name", { serverId, taskId, taskOwner, hostId });
  }

  /** Host `taskOwner`'s tasks, each by its server's id and the host's (its own when never named). */
  async names(taskOwner: string): Promise<{ serverId: string; taskId: string; hostId: string }[]> {
    return (await this.#run("tasks/names", { taskOwner })).tasks;
  }

  /** Host `taskOwner` is gone: its live tasks are cancelled where the server can. */
  async release(taskOwner: string): Promise<void> {
    await this.#run("tasks/release", { taskOwner });
  }
}
