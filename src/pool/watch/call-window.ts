/**
 * Recent calls of one server: calls and errors in the last minute, calls per
 * minute over the last ten (a sparkline), and p50/p99 latency over the last five minutes.
 * Fed from the pool's `call` events; bounded whatever the call rate; no timers — old
 * buckets are dropped when a call is recorded or the figures are read.
 */

/** Width of one counting bucket: the last minute is its last 6, to within 10 s. */
const BUCKET_MS = 10_000;

/** Minutes the sparkline spans. */
export const SPARK_MINUTES = 10;

const BUCKETS = (SPARK_MINUTES * 60_000) / BUCKET_MS;

/** Latency is reported over this span. */
const LATENCY_SPAN_MS = 5 * 60_000;

/** Latencies kept per server: enough for stable percentiles, bounded at any call rate. */
const MAX_LATENCIES = 2048;

export interface WindowFigures {
  callsLastMinute: number;
  errorsLastMinute: number;
  /** Calls per minute over the last SPARK_MINUTES minutes, oldest first. */
  callsPerMinute: number[];
  p50Ms?: number;
  p99Ms?: number;
}

export class CallWindow {
  /** Bucket index (at / BUCKET_MS) → [calls, errors]. */
  readonly #buckets = new Map<number, [number, number]>();
  /**
   * A ring of each call's time and latency, as numbers in place: a pair allocated per call
   * outlived the young generation (the ring held it) and made every scavenge copy it.
   */
  readonly #at = new Float64Array(MAX_LATENCIES);
  readonly #ms = new Float64Array(MAX_LATENCIES);
  /** Slots of the ring filled so far (MAX_LATENCIES once it went round). */
  #filled = 0;
  #next = 0;

  record(at: number, ms: number, ok: boolean): void {
    const index = Math.floor(at / BUCKET_MS);
    let bucket = this.#buckets.get(index);
    if (bucket === undefined) {
      // A new bucket is the only time an old one can fall out of the window.
      this.#prune(index);
      this.#buckets.set(index, (bucket = [0, 0]));
    }
    bucket[0] += 1;
    if (!ok) bucket[1] += 1;
    this.#at[this.#next] = at;
    this.#ms[this.#next] = ms;
    this.#filled = Math.max(this.#filled, this.#next + 1);
    this.#next = (this.#next + 1) % MAX_LATENCIES;
  }

  figures(now: number): WindowFigures {
    const current = Math.floor(now / BUCKET_MS);
    this.#prune(current);
    const perMinute = 60_000 / BUCKET_MS;
    let callsLastMinute = 0;
    let errorsLastMinute = 0;
    const callsPerMinute = new Array<number>(SPARK_MINUTES).fill(0);
    for (const [index, [calls, errors]] of this.#buckets) {
      const age = current - index;
      if (age < 0 || age >= BUCKETS) continue;
      if (age < perMinute) {
        callsLastMinute += calls;
        errorsLastMinute += errors;
      }
      callsPerMinute[SPARK_MINUTES - 1 - Math.floor(age / perMinute)]! += calls;
    }
    const recent: number[] = [];
    for (let i = 0; i < this.#filled; i++) {
      if (now - this.#at[i]! <= LATENCY_SPAN_MS) recent.push(this.#ms[i]!);
    }
    recent.sort((a, b) => a - b);
    return {
      callsLastMinute,
      errorsLastMinute,
      callsPerMinute,
      ...(recent.length > 0
        ? { p50Ms: percentile(recent, 0.5), p99Ms: percentile(recent, 0.99) }
        : {}),
    };
  }

  #prune(current: number): void {
    for (const index of this.#buckets.keys()) {
      if (current - index >= BUCKETS) this.#buckets.delete(index);
    }
  }
}

/** Nearest-rank percentile of sorted values, rounded to 0.1 ms. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return Math.round(sorted[rank]! * 10) / 10;
}
