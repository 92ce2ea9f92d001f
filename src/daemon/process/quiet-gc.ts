/**
 * Memory given back when the daemon goes quiet. V8 collects only as it allocates: after a
 * burst of calls the daemon stops allocating, so the garbage of the burst and the young
 * generation it grew (to 32 MB) stay resident for good — 100,000 calls from 8 processes left
 * it at 111 MB, against 62 MB idle, a minute later (bench/memory-return.mjs). One full
 * collection once the burst is over gives it back (65 MB).
 *
 * So: every `periodMs`, if the heap has grown by `growthBytes` since the last collection
 * and the event loop was quiet through the period, collect once. Busy, V8 collects on its
 * own; quiet and not grown, there is nothing to give back. The collector is V8's own
 * (src/pool/core/collect.ts): the user sets no flag. Where it cannot be had, nothing runs.
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { v8Collector } from "../../pool/core/collect.js";

export interface QuietGcOptions {
  /** How often the heap and the loop are looked at, ms. Default 10 000. */
  periodMs?: number;
  /** Heap growth since the last collection worth giving back, bytes. Default 16 MiB. */
  growthBytes?: number;
  /** Event-loop utilisation under which a period counts as quiet (0–1). Default 0.02. */
  quietUtilization?: number;
  /** The collector; default V8's full `gc()`. */
  collect?: () => void;
  /** Heap size now, bytes; default V8's total heap size. */
  heapBytes?: () => number;
}

export interface QuietGc {
  /** Collections run so far. */
  readonly collections: number;
  stop(): void;
}

export function startQuietGc(options: QuietGcOptions = {}): QuietGc {
  const collect = options.collect ?? v8Collector()?.full;
  const heapBytes = options.heapBytes ?? (() => v8.getHeapStatistics().total_heap_size);
  const growth = options.growthBytes ?? 16 * 1024 * 1024;
  const quiet = options.quietUtilization ?? 0.02;
  let collections = 0;
  if (collect === undefined) return { collections, stop: () => undefined };
  let floor = heapBytes();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const grown = heapBytes() - floor >= growth;
    if (!grown || busy >= quiet) return;
    collect();
    collections++;
    floor = heapBytes();
  }, options.periodMs ?? 10_000);
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    stop: () => clearInterval(timer),
  };
}
