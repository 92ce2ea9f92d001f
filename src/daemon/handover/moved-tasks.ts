/**
 * The pool's task records across a hand-over (MCP 2025-11-25 tasks): the server's child
 * moves and its tasks live on in it, so the records of which host owns which task on which
 * child move in the snapshot too. The new daemon takes up the records of the children it
 * took, and a host whose entry dials again asks about its older tasks as before. It knows
 * from the snapshot which records move before it serves anyone, so a host that asks while
 * the children are still being adopted waits for its records rather than hearing "not found".
 */
import type { McpPool } from "../../pool/pool.js";
import type { DaemonLog } from "../process/logger.js";
import type { MovedTask } from "../../pool/calls/moved-records.js";
import { childName } from "./snapshot.js";
import { KEPT_SUBSCRIPTIONS_MS } from "./subscriptions.js";

/**
 * How long a moved live task no host claimed yet keeps its child from the idle rule, ms: the
 * window in which an entry comes back (it dials again for 60 s, then replays its session),
 * as for the subscriptions. Its owner may still claim it after, until it expires.
 */
export const UNCLAIMED_TASK_HOLD_MS = KEPT_SUBSCRIPTIONS_MS;

/** One moved record as the snapshot must hold it; anything else is not read. */
function isMovedTask(value: unknown): value is MovedTask {
  const task = value as Partial<MovedTask> | null;
  if (typeof task !== "object" || task === null) return false;
  return (
    typeof task.serverId === "string" &&
    (task.profileKey === undefined || typeof task.profileKey === "string") &&
    typeof task.taskId === "string" &&
    typeof task.owner === "string" &&
    typeof task.status === "string" &&
    (task.ttl === null || typeof task.ttl === "number") &&
    typeof task.expiresAt === "number"
  );
}

/** The snapshot's moved records that live on a child the new daemon took (`taken`: childName()s). */
export function takenTasks(tasks: unknown, taken: ReadonlySet<string>): MovedTask[] {
  if (!Array.isArray(tasks)) return [];
  return tasks
    .filter(isMovedTask)
    .filter((task) => taken.has(childName(task.serverId, task.profileKey)));
}

/**
 * The new daemon, before it serves: the snapshot's moved records, awaited by any host's
 * request that may be about one until the adoption concludes (adoptTasks()). The first such
 * request that waits is logged.
 */
export function expectTasks(pool: McpPool, tasks: unknown, log: DaemonLog): void {
  if (!Array.isArray(tasks)) return;
  pool.expectTasks(tasks.filter(isMovedTask), () =>
    log.info("mcpool: a host's request about its moved tasks waits for the adoption to conclude"),
  );
}
