/**
 * Passes that run one at a time, a burst of requests being one pass: a request while a pass
 * is queued and not yet begun is that pass. A pass that fails is its caller's to report and
 * over: the next one runs all the same, and `settled()` never rejects.
 */
export interface Passes {
  /** Queues a pass (or joins the queued one); settles with that pass's outcome. */
  run(): Promise<void>;
  /** Resolves once every pass queued so far is over, however it ended. */
  settled(): Promise<void>;
}

export function passesInTurn(pass: () => Promise<void>): Passes {
  let chain = Promise.resolve(); // never left rejected
  let next: Promise<void> = chain;
  let queued = false;
  return {
    run() {
      if (queued) return next;
      queued = true;
      next = chain.then(() => {
        queued = false;
        return pass();
      });
      chain = next.catch(() => undefined);
      return next;
    },
    settled: () => chain,
  };
}
