/**
 * V8's own collector, for the few places that know better than its heuristics when garbage
 * is due: the daemon gone quiet after a burst (src/daemon/process/quiet-gc.ts), and a
 * reader dropping an oversize message chunk by chunk (mcp/stdio-transport.ts), whose
 * 64 KB chunks would otherwise pile up as freed-but-resident allocator memory until V8
 * next collects. Exposed at run time: the user sets no flag. Undefined where it cannot be.
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

let collector: Collector | null | undefined;

/** The process's collector, made once; undefined when V8 would not expose it. */
export function v8Collector(): Collector | undefined {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString("--expose-gc");
      const gc = runInNewContext("gc") as unknown;
      collector =
        typeof gc === "function"
          ? { full: () => (gc as Gc)(), young: () => (gc as Gc)({ type: "minor" }) }
          : null;
    } catch {
      collector = null;
    }
  }
  return collector ?? undefined;
}
