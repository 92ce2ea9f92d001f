/**
 * Task records that moved from a previous daemon in a hand-over (tasks.ts keeps them): the
 * server's child moved, its tasks live on in it, and each record is its host's by name until
 * a connection of that host asks about it.
 *
 * Decided by order, not by time:
 * - the new daemon knows from the snapshot, before it serves anyone, which records will move
 *   (`expect`); a host's request that may be about one of them waits until the adoption is
 *   concluded (the records taken up, or none), so no host hears "not found" of its own task;
 * - a status the server sends of a moved task before its host claimed it (or before the
 *   record was taken up) is kept, the last one, and sent to the host when it claims it;
 * - an unclaimed live record holds its child from the idle rule until its own deadline, so a
 *   later adoption (or a hand-over that came back) never ends an earlier one's hold early.
 */
import { McpPoolError } from "../core/errors.js";
import type { CallSignal, ServerNotification } from "../core/types.js";
import type { ServerEntry } from "../server/entry.js";
import { taskKey, type TaskChild } from "./task-holds.js";

/**
 * A task record as it moves to the next daemon across a hand-over (the server's child moves
 * too, and the task lives on in it): the child by its row and its profile key (none: the
 * row's own), the owning host by its name, what was last seen of the task, and until when
 * the record is kept (epoch ms).
 */
export interface MovedTask {
  serverId: string;
  profileKey?: string;
  taskId: string;
  /** The id its host knows it by, when not the server's. */
  hostId?: string;
  owner: string;
  status: string;
  ttl: number | null;
  expiresAt: number;
}

/** A host's task: its server's id and the id the host knows it by. */
export interface TaskName {
  serverId: string;
  taskId: string;
  hostId: string;
}

/** Where a moved task lives in this pool: its row's own entry, or a profile's child. */
export type TaskPlace = (
  serverId: string,
  profileKey: string | undefined,
) => ServerEntry | undefined;

/** What a moved record keeps while no connection of its host has claimed it. */
export interface Unclaimed {
  /** The host's name, which claims it. */
  readonly name: string;
  /** The last status the server sent of the task meanwhile, for its host when it claims it. */
  missed?: ServerNotification;
  /** Ends the record's hold on its child at the record's own deadline. */
  unhold?: NodeJS.Timeout;
}

export class MovedRecords {
  /** The records the snapshot says will move, by child and task id (taskKey), until the adoption concludes. */
  readonly #expected = new Map<string, MovedTask>();
  /** Resolves once the adoption is concluded: with why no record was taken up, if none was. */
  /** The last status of an expected task that came before its record was taken up. */
  readonly #early = new Map<string, ServerNotification>();
  #concluded: Promise<string | undefined> = Promise.resolve(undefined);
  #conclude: (failed: string | undefined) => void = () => undefined;
  /** Called as the first request waits for the adoption (the daemon logs it), then dropped. */
  #onWait: (() => void) | undefined;

  /** The records a previous daemon hands over, known before this pool serves anyone. */
  expect(tasks: readonly MovedTask[], onWait?: () => void): void {
    if (tasks.length === 0) return;
    this.#onWait = onWait;
    if (this.#expected.size === 0) {
      this.#concluded = new Promise((resolve) => (this.#conclude = resolve));
    }
    for (const task of tasks) this.#expected.set(taskKey(task, task.taskId), task);
  }

  /** Whether a record still expected is `name`'s (on `serverId`, or on any server). */
  expects(name: string | undefined, serverId?: string): boolean {
    if (name === undefined) return false;
    return [...this.#expected.values()].some(
      (task) => task.owner === name && (serverId === undefined || task.serverId === serverId),
    );
  }

  /**
   * Resolves once no record still expected may be `name`'s on `serverId` (any server when
   * none is named): at once for a host with no name, or none of whose tasks move. Throws
   * `handover-failed` when the adoption failed (the host's records stay with the old daemon,
   * which serves on), and the asking request's abort reason as soon as it is aborted.
   */
  async settled(
    serverId: string | undefined,
    name: string | undefined,
    signal?: CallSignal,
  ): Promise<void> {
    if (!this.expects(name, serverId)) return;
    const onWait = this.#onWait;
    this.#onWait = undefined;
    onWait?.();
    const failed = await untilAborted(this.#concluded, signal);
    if (failed !== undefined) {
      throw new McpPoolError("handover-failed", failed, serverId ? { serverId } : {});
    }
  }

  /** Keeps the last status of `child`'s expected task; false when the task is not expected. */
  keep(child: TaskChild, taskId: string, notification: ServerNotification): boolean {
    const key = taskKey(child, taskId);
    if (!this.#expected.has(key)) return false;
    this.#early.set(key, notification);
    return true;
  }

  /** A record is `name`'s by name from now on, with the last status kept of `task` if any. */
  unclaimed(name: string, task?: TaskChild & { taskId: string }): Unclaimed {
    const key = task === undefined ? undefined : taskKey(task, task.taskId);
    const missed = key === undefined ? undefined : this.#early.get(key);
    if (key !== undefined) this.#early.delete(key);
    return missed === undefined ? { name } : { name, missed };
  }

  /** While `moved` is unclaimed, `release` (its hold on its child) is called in `holdMs`. */
  holdFor(moved: Unclaimed, release: () => void, holdMs: number): void {
    clearTimeout(moved.unhold);
    moved.unhold = setTimeout(release, holdMs);
    moved.unhold.unref();
  }

  /** Its host claimed a moved record (or it is dropped): the status it missed, if any. */
  claimed(moved: Unclaimed): ServerNotification | undefined {
    clearTimeout(moved.unhold);
    return moved.missed;
  }

  /**
   * The adoption is concluded: the records are taken up, or (`failed`: why) none is. The
   * requests that waited go on, or fail with why.
   */
  conclude(failed?: string): void {
    this.#onWait = undefined;
    this.#expected.clear();
    this.#early.clear();
    this.#conclude(failed);
  }
}

/** `promise`, or its asker's abort reason thrown as soon as `signal` is aborted. */
async function untilAborted<T>(promise: Promise<T>, signal: CallSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) throw signal.reason;
  let stop = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason as Error);
    signal.addEventListener("abort", stop, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", stop);
  }
}
