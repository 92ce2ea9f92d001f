/**
 * The two one-shot timers of a server, each unref'd and never a poll: the idle reap
 * and the revive of an eager server that went down.
 */

/** What the idle reap asks of its server, given once. `T` is what a use was armed for. */
export interface IdleOwner<T> {
  /** Queues `work` on the reconcile queue. */
  schedule(work: () => Promise<void>): Promise<void>;
  /** Whether the server is still idle on `armedFor` (no call in flight, nothing holds it). */
  stillIdle(armedFor: T): boolean;
  reap(): Promise<void>;
}

/**
 * The idle reap, lazily: a use that ends stamps when the server may be reaped,
 * and a use that begins clears the stamp; neither touches a timer while one is pending.
 * The one pending timer, when it fires, re-arms itself for what is left of a later stamp,
 * ends without one, and otherwise queues the reap, which runs on the reconcile queue only if
 * no use stamped or cleared since — so a use that lands between the fire and the queued
 * close keeps the server. A sequential caller costs a clock read a call, not a timer.
 */
export class IdleTimer<T> {
  readonly #owner: IdleOwner<T>;
  #timer: NodeJS.Timeout | undefined;
  /** When the server may be reaped, on performance.now()'s clock; undefined while in use. */
  #due: number | undefined;
  #armedFor: T | undefined;
  /** When the pending timer fires, on the same clock. */
  #firesAt = 0;

  constructor(owner: IdleOwner<T>) {
    this.#owner = owner;
  }

  /** A use began: whatever was armed no longer speaks for the server. */
  cancel(): void {
    this.#due = undefined;
    this.#armedFor = undefined;
  }

  /** The server went away: nothing is armed, and no timer is left to fire. */
  stop(): void {
    this.cancel();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** A use of `armedFor` ended: the server may be reaped `ms` from now. */
  arm(ms: number, armedFor: T): void {
    const due = performance.now() + ms;
    this.#due = due;
    this.#armedFor = armedFor;
    if (this.#timer !== undefined && this.#firesAt <= due) return;
    // None pending, or it fires after this stamp (the row's timeout was shortened).
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#start(ms);
  }

  #start(ms: number): void {
    const timer = setTimeout(() => this.#fired(timer), ms);
    timer.unref();
    this.#timer = timer;
    this.#firesAt = performance.now() + ms;
  }

  #fired(timer: NodeJS.Timeout): void {
    if (this.#timer !== timer) return;
    this.#timer = undefined;
    const due = this.#due;
    if (due === undefined) return;
    const left = due - performance.now();
    // A use since the timer was set pushed the stamp on: wait out the rest of it.
    if (left > 0) return this.#start(Math.ceil(left));
    const armedFor = this.#armedFor as T;
    void this.#owner.schedule(async () => {
      if (this.#due !== due || !this.#owner.stillIdle(armedFor)) return;
      this.#due = undefined;
      this.#armedFor = undefined;
      await this.#owner.reap();
    });
  }
}

/**
 * The revive: armed only while an eager server is down, for at once after a healthy
 * server's crash or its `retryAt` after a failure; re-arming replaces the armed one.
 */
export class ReviveTimer {
  #timer: NodeJS.Timeout | undefined;

  /** Calls `revive` after `delayMs`, unless cancelled or re-armed before. */
  arm(delayMs: number, revive: () => void): void {
    this.cancel();
    const timer = setTimeout(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      revive();
    }, delayMs);
    timer.unref();
    this.#timer = timer;
  }

  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
