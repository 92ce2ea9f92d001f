/**
 * A task's status said before its task was: a server may send `notifications/tasks/status`
 * for a task before its answer to the task-augmented call that made it (the SDK's task store
 * does, when the tool updates the task at once), and the pool learns whose task it is from
 * that answer. So while a child (a row's own, or a host profile's: its key, childKey()) has
 * task-augmented calls in flight, a status about a task the pool has no record of is kept, and
 * handed to the task's owner when an answer from that child names the task; once no such call
 * is in flight, none of the kept ones can be claimed and they go. Bounded by the calls, not by
 * a clock; and by a count, so a server cannot fill the pool.
 */
import type { ServerNotification } from "../core/types.js";

/** The most statuses kept for one child at once; past it the oldest goes. */
const MAX_KEPT = 256;

interface Waiting {
  /** Task-augmented calls in flight on the child. */
  calls: number;
  /** The statuses no record claimed yet, oldest first, each with its task id. */
  kept: { taskId: string; notification: ServerNotification }[];
}

export class EarlyStatuses {
  readonly #children = new Map<string, Waiting>();

  /** A task-augmented call to `child` is sent; the returned function says it is over (once). */
  asking(child: string): () => void {
    let waiting = this.#children.get(child);
    if (waiting === undefined) {
      waiting = { calls: 0, kept: [] };
      this.#children.set(child, waiting);
    }
    const mine = waiting;
    mine.calls += 1;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      mine.calls -= 1;
      if (mine.calls === 0 && this.#children.get(child) === mine) this.#children.delete(child);
    };
  }

  /** Keeps a status of `child`'s task `taskId` no record has; false when no call could claim it. */
  keep(child: string, taskId: string, notification: ServerNotification): boolean {
    const waiting = this.#children.get(child);
    if (waiting === undefined) return false;
    if (waiting.kept.length >= MAX_KEPT) waiting.kept.shift();
    waiting.kept.push({ taskId, notification });
    return true;
  }

  /** The statuses kept for task `taskId` of `child`, in the order they came; forgotten. */
  claim(child: string, taskId: string): ServerNotification[] {
    const waiting = this.#children.get(child);
    if (waiting === undefined) return [];
    const mine = waiting.kept.filter((k) => k.taskId === taskId);
    if (mine.length === 0) return [];
    waiting.kept = waiting.kept.filter((k) => k.taskId !== taskId);
    return mine.map((k) => k.notification);
  }
}
