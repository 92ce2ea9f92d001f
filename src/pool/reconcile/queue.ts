/**
 * The reconcile queue: one run at a time, so two syncs never both spawn a child
 * for the same edited server. `soon()` debounces, `flush()` pays a pending debounce off now.
 */

/** Long enough to coalesce an editor's write-then-rename, short enough to feel immediate. */
export const DEFAULT_DEBOUNCE_MS = 100;

export class ReconcileQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #soon: Promise<void> | undefined;
  #resolveSoon: (() => void) | undefined;
  readonly #debounceMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #onFire: (() => void) | undefined;

  /** `onFire` hears each debounced run as it is queued, before it waits for its turn. */
  constructor(options: {
    debounceMs?: number;
    onError: (error: unknown) => void;
    onFire?: () => void;
  }) {
    this.#debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.#onError = options.onError;
    this.#onFire = options.onFire;
  }

  /** Runs `work` after everything queued before it, and never beside another run. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work, work);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Schedules `work` after the debounce; calls within it share one run. */
  soon(work: () => Promise<unknown>): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#soon ??= new Promise((resolve) => (this.#resolveSoon = resolve));
    this.#timer = setTimeout(() => this.#fire(work), this.#debounceMs);
    this.#pending = work;
    return this.#soon;
  }

  #pending: (() => Promise<unknown>) | undefined;

  #fire(work: () => Promise<unknown>): void {
    this.#timer = undefined;
    this.#pending = undefined;
    const resolve = this.#resolveSoon;
    this.#soon = undefined;
    this.#resolveSoon = undefined;
    this.#onFire?.();
    this.run(work)
      .catch(this.#onError)
      .finally(() => resolve?.());
  }

  /** Runs a pending debounced reconcile now, then waits for the queue to drain. */
  async flush(): Promise<void> {
    if (this.#timer && this.#pending) {
      clearTimeout(this.#timer);
      this.#fire(this.#pending);
    }
    await this.#tail;
  }

  /** Drops a pending debounce; the queue itself finishes what it started. */
  cancel(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    this.#resolveSoon?.();
    this.#soon = undefined;
    this.#resolveSoon = undefined;
  }
}
