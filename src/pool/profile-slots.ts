/**
 * The cap on a row's children for host profiles (per project, per capability set): a
 * laptop must not run one server-filesystem per made-up root. A child that would start past
 * the cap takes the place of its row's least recently used child with nothing in flight;
 * when every one is busy, it waits for one to be done, and past the row's connect budget
 * is refused with an error naming the cap — never served by the row's own connection.
 */
import { McpPoolError } from "./core/errors.js";
import { serverLog } from "./core/server-log.js";
import type { PoolLog } from "./core/types.js";
import type { ProfileEntry } from "./server/profile-entry.js";

/** Children for host profiles per row, by default: a laptop's share of servers. */
export const DEFAULT_MAX_CHILDREN_PER_SERVER = 8;

/** How long a child waits for a slot when its row sets no connect budget, ms. */
const SLOT_WAIT_MS = 60_000;

export class ProfileSlots {
  readonly #max: number;
  readonly #log: PoolLog;
  /** Children granted a slot whose dial has not begun yet: counted as live. */
  readonly #granted = new Set<ProfileEntry>();
  /** Row id → the wakes of children waiting for a slot. */
  readonly #waiting = new Map<string, Set<() => void>>();

  constructor(max: number | undefined, log: PoolLog) {
    this.#max = Math.max(1, max ?? DEFAULT_MAX_CHILDREN_PER_SERVER);
    this.#log = log;
  }

  get max(): number {
    return this.#max;
  }

  /**
   * Resolves once `child` may start among `siblings` (its row's children, itself included)
   * and `others` more of its row's processes (opened ahead for other hosts: prepared-children.ts);
   * `start` runs in the same turn, so no other child takes the slot in between.
   */
  async take<T>(
    child: ProfileEntry,
    siblings: () => readonly ProfileEntry[],
    others: () => number,
    boundMs: number | undefined,
    start: () => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + (boundMs ?? SLOT_WAIT_MS);
    for (;;) {
      const live = siblings().filter((other) => other !== child && this.#live(other));
      if (live.length + others() < this.#max) return this.#start(child, start);
      const idle = live
        .filter((other) => other.ready && other.connection?.inflight === 0 && !other.inUse)
        .sort((a, b) => a.usedAt - b.usedAt)[0];
      if (idle !== undefined) {
        serverLog(this.#log, child.id).info(
          `${this.#max} children for host profiles (mcpool.maxChildrenPerServer): the least recently used one (pid ${idle.connection?.pid ?? "?"}) ends for a new one`,
        );
        await idle.close("idle");
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || !(await this.#wait(child.id, left))) throw this.#full(child.id);
    }
  }

  /**
   * Whether one more process fits beside `children` (a row's) and `others` more of its
   * processes (opened ahead: prepared-children.ts) without ending one.
   */
  room(children: readonly ProfileEntry[], others: number): boolean {
    return children.filter((child) => this.#live(child)).length + others < this.#max;
  }

  /**
   * A child of row `id` ended, went idle or finished dialling, or a process opened ahead
   * ended: a waiting one may start.
   */
  changed(id: string): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    for (const wake of waiting) wake();
  }

  #start<T>(child: ProfileEntry, start: () => Promise<T>): Promise<T> {
    this.#granted.add(child);
    try {
      return start();
    } finally {
      this.#granted.delete(child);
    }
  }

  #live(child: ProfileEntry): boolean {
    return child.connection !== undefined || child.connecting || this.#granted.has(child);
  }

  /** Resolves true when woken, false after `ms`. */
  #wait(id: string, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      let waiting = this.#waiting.get(id);
      if (waiting === undefined) {
        waiting = new Set();
        this.#waiting.set(id, waiting);
      }
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiting.get(id)?.delete(wake);
        resolve(false);
      }, ms);
      timer.unref();
      waiting.add(wake);
    });
  }

  #full(id: string): McpPoolError {
    return new McpPoolError(
      "pool-full",
      `server "${id}" already runs ${this.#max} children for other hosts' projects and capabilities, all busy (mcpool.maxChildrenPerServer is ${this.#max}); try again when one is done, or raise the cap`,
      { serverId: id },
    );
  }
}
