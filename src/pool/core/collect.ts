/**
 * V8's own collector, for the few places that know better than its heuristics when garbage
 * is due: the daemon gone quiet after a burst (src/daemon/process/quiet-gc.ts), and a
 * reader dropping an oversize message chunk by chunk (transport/stdio-transport.ts), whose
 * 64 KB chunks would otherwise pile up as freed-but-resident allocator memory until V8
 * next collects.
 *
 * Exposed at run time, so the user sets no flag: `v8.setFlagsFromString("--expose-gc")`
 * after start, which Node documents as unsupported ("may result in unpredictable behavior,
 * including crashes"); in practice V8 only adds the `gc` function to new contexts. So only
 * the daemon asks for it, once, as it starts (`mcpool serve`), and hands it to the pool
 * (the `collector` option) and to its quiet-time collection; a pool made by a library user
 * has none, and no flag of that process is touched.
 */
import v8 from "node:v8";
import { runInNewContext } from "node:vm";

export interface Collector {
  /** A full collection: every generation, compacted. */
  full(): void;
  /** A young-generation collection: short-lived buffers freed now. */
  young(): void;
}

type Gc = (options?: { type?: "major" | "minor" }) => void;

/** Turns on V8's `gc` and returns it as a collector; undefined when V8 would not expose it. */
export function exposeV8Collector(): Collector | undefined {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    if (typeof gc !== "function") return undefined;
    return { full: () => (gc as Gc)(), young: () => (gc as Gc)({ type: "minor" }) };
  } catch {
    return undefined;
  }
}
