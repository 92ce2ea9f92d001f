/**
 * What the pool's task records read of a task (its id, status and ttl as a server's answer or
 * status notification names them), which child a task is kept by, and the hold a live task
 * keeps on its connection.
 */
import { McpPoolError } from "../core/errors.js";
import type { Connection } from "../server/connection.js";
import type { ServerEntry } from "../server/entry.js";
import { isProfileEntry } from "../server/profile-entry.js";

/**
 * The child a task lives in: its row, and for a host profile's child (a project's roots, a
 * host's capabilities) the profile's key; none for the row's own child. Each child's server
 * makes its task ids on its own (two projects' children may both count from `1`), so a task
 * is known by its child and its id.
 */
export interface TaskChild {
  serverId: string;
  profileKey?: string | undefined;
}

/** The child `entry` is, as its tasks are kept. */
export function childOf(entry: ServerEntry): TaskChild {
  return isProfileEntry(entry)
    ? { serverId: entry.id, profileKey: entry.key }
    : { serverId: entry.id };
}

/** A child's key (unambiguous whatever its row id and profile key hold). */
export function childKey(child: TaskChild): string {
  return JSON.stringify([child.serverId, child.profileKey ?? null]);
}

/** Each connection's number, in the order the pool's task records first met them. */
const numbers = new WeakMap<Connection, number>();
let counted = 0;

/** A task's key: its child's and its id (a record moving between daemons is known so). */
export function taskKey(child: TaskChild, taskId: string): string {
  return JSON.stringify([child.serverId, child.profileKey ?? null, taskId]);
}

/**
 * A task record's key: its child's, the connection's (one process of the child: a crash, a
 * reap or a swap makes a new one, whose server counts its ids afresh) and its id.
 */
export function recordKey(child: TaskChild, connection: Connection, taskId: string): string {
  let number = numbers.get(connection);
  if (number === undefined) {
    counted += 1;
    number = counted;
    numbers.set(connection, number);
  }
  return JSON.stringify([child.serverId, child.profileKey ?? null, number, taskId]);
}

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

/** The process that made a task on `connection` is no longer `entry`'s (crashed, reaped, swapped). */
export function ended({
  entry,
  connection,
}: {
  entry: ServerEntry;
  connection: Connection;
}): boolean {
  return entry.connection !== connection;
}

/** What a host hears of its task whose process ended: direct, its server died with it. */
export function lostTask(serverId: string, taskId: string): McpPoolError {
  return new McpPoolError(
    "connection-lost",
    `task "${taskId}" of server "${serverId}" is lost: the server process that ran it ended`,
    { serverId },
  );
}
