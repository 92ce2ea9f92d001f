/**
 * The two one-shot timers of a server, each unref'd and never a poll: the idle reap
 * (SPEC B1) and the revive of an eager server that went down (F1).
 */

/**
 * The idle reap: armed when a use ends and cancelled when one begins. The reap itself runs
 * on the reconcile queue, and only if the timer that fired is still the armed one, so a
 * use that lands between the fire and the queued close keeps the server.
 */
export class IdleTimer {
  #timer: NodeJS.Timeout | undefined;

  /** A use began: whatever timer was armed no longer speaks for the server. */
  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Arms the timer for `ms`. When it fires, `schedule` queues the reap, which calls `reap`
   * if this timer is still the armed one and `stillIdle()` holds.
   */
  arm(
    ms: number,
    schedule: (work: () => Promise<void>) => Promise<void>,
    stillIdle: () => boolean,
    reap: () => Promise<void>,
  ): void {
    this.cancel();
    const timer = setTimeout(() => {
      void schedule(async () => {
        if (this.#timer !== timer || !stillIdle()) return;
        this.#timer = undefined;
        await reap();
      });
    }, ms);
    timer.unref();
    this.#timer = timer;
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
