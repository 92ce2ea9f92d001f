/**
 * The pool's call counts on disk: one small file, `<data>/usage.json`, written
 * atomically with mode 0600. It names servers and tools and counts calls; it holds no
 * arguments, results or secrets.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { UsageStore } from "../../pool/watch/usage.js";
import { createSaveQueue, writeAtomically } from "../config/source.js";
import { SAVE_EFFECTS, type SaveHealth } from "../process/save-health.js";

export function createFileUsageStore(
  dataDir: string,
  health?: SaveHealth,
): UsageStore & { path: string } {
  const path = join(dataDir, "usage.json");
  // One save at a time: the last counts asked to be saved are the ones kept.
  const queue = createSaveQueue();
  return {
    path,
    load() {
      try {
        return JSON.parse(readFileSync(path, "utf8")) as unknown;
      } catch {
        // Absent or unreadable: counting starts afresh, nothing else is lost.
        return undefined;
      }
    },
    async save(data) {
      const text = `${JSON.stringify(data)}\n`;
      const save = (): Promise<void> => queue(path, () => writeAtomically(path, text));
      await (health ? health.track("usage", dataDir, SAVE_EFFECTS.usage, save) : save());
    },
  };
}
