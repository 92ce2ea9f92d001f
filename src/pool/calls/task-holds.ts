/**
 * What the pool's task records read of a task (its id, status and ttl as a server's answer or
 * status notification names them), and the hold a live task keeps on its connection.
 */
import type { Connection } from "../server/connection.js";
import type { ServerEntry } from "../server/entry.js";

/** A task as a server's CreateTaskResult, `tasks/get` or status notification has it. */
export function taskOf(
  value: unknown,
): { taskId: string; status?: string; ttl?: number | null } | undefined {
  const task = value as { taskId?: unknown; status?: unknown; ttl?: unknown } | undefined;
  if (typeof task?.taskId !== "string") return undefined;
  return {
    taskId: task.taskId,
    ...(typeof task.status === "string" ? { status: task.status } : {}),
    ...(typeof task.ttl === "number" || task.ttl === null ? { ttl: task.ttl } : {}),
  };
}

/** Counts `connection` in flight until the returned function is called (once). */
export function hold(entry: ServerEntry, connection: Connection): () => void {
  connection.inflight += 1;
  entry.busy();
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    connection.inflight -= 1;
    if (connection.inflight === 0) connection.drained?.();
    entry.idle();
  };
}
