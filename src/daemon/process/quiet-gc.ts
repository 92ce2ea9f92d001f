/**
 * Memory given back when the daemon goes quiet. V8 collects only as it allocates: after a
 * burst of calls the daemon stops allocating, so the garbage of the burst and the young
 * generation it grew (to 32 MB) stay resident for good — 100,000 calls from 8 processes left
 * it at 111 MB, against 62 MB idle, a minute later (bench/memory-return.mjs). One full
 * collection once the burst is over gives it back (65 MB).
 *
 * So: `periodMs` after activity, if the heap has grown by `growthBytes` since the last
 * collection and the event loop was quiet through the period, collect once. Busy, V8
 * collects on its own and the look comes again a period later; quiet and not grown, there is
 * nothing to give back. Activity is V8's own garbage collections (a process that allocates
 * nothing collects nothing), so an idle daemon is never woken by this: after the look that
 * finds it quiet, the next comes only after the next collection. The collector is V8's own,
 * given by the daemon (src/pool/core/collect.ts): without one, nothing runs.
 */
import { performance, PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

export interface QuietGcOptions {
  /** How often the heap and the loop are looked at, ms. Default 10 000. */
  periodMs?: number;
  /** Heap growth since the last collection worth giving back, bytes. Default 16 MiB. */
  growthBytes?: number;
  /** Event-loop utilisation under which a period counts as quiet (0–1). Default 0.02. */
  quietUtilization?: number;
  /** The collector (V8's full `gc()`, core/collect.ts); none: nothing runs. */
  collect?: () => void;
  /** Heap size now, bytes; default V8's total heap size. */
  heapBytes?: () => number;
  /**
   * Calls `wake` on activity and returns how to stop; default: on each of V8's garbage
   * collections (a `gc` performance entry).
   */
  activity?: (wake: () => void) => () => void;
}

/** V8's garbage collections, as performance entries. */
function v8Collections(wake: () => void): () => void {
  const observer = new PerformanceObserver(() => wake());
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}

export interface QuietGc {
  /** Collections run so far. */
  readonly collections: number;
  /** A look is due: false once a look found the loop quiet, until the next activity. */
  readonly waiting: boolean;
  stop(): void;
}

export function startQuietGc(options: QuietGcOptions = {}): QuietGc {
  const collect = options.collect;
  const heapBytes = options.heapBytes ?? (() => v8.getHeapStatistics().total_heap_size);
  const growth = options.growthBytes ?? 16 * 1024 * 1024;
  const quiet = options.quietUtilization ?? 0.02;
  let collections = 0;
  if (collect === undefined) return { collections, waiting: false, stop: () => undefined };
  let floor = heapBytes();
  let last = performance.eventLoopUtilization();
  let pending: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = (): void => {
    pending = undefined;
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const grown = heapBytes() - floor >= growth;
    if (busy >= quiet) return arm();
    if (!grown) return;
    collect();
    collections++;
    floor = heapBytes();
  };
  /** A look `periodMs` from now, unless one is due: the loop is measured from now on. */
  const arm = (): void => {
    if (pending !== undefined || stopped) return;
    last = performance.eventLoopUtilization();
    pending = setTimeout(look, options.periodMs ?? 10_000);
    pending.unref();
  };
  const quietDown = (options.activity ?? v8Collections)(arm);
  arm();
  return {
    get collections() {
      return collections;
    },
    get waiting() {
      return pending !== undefined;
    },
    stop: () => {
      stopped = true;
      clearTimeout(pending);
      quietDown();
    },
  };
}
