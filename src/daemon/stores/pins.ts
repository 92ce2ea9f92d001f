/**
 * The daemon's pin store: the tool list each server's pin was approved for, one
 * file per row in `<data>/pins/<id>.json` holding `{fingerprint, tools}`, written
 * atomically with mode 0600 by `mcpool approve`. It is what lets a daemon that restarted
 * still say what changed since the approval; losing it costs the difference, never the
 * withholding, which needs only the row's pin.
 */
import type { PinnedList, PinStore } from "../../pool/catalog/pinning.js";
import type { SaveHealth } from "../process/save-health.js";
import { createRowFiles } from "./row-files.js";

export function createFilePinStore(
  dataDir: string,
  health?: SaveHealth,
): PinStore & { dir: string } {
  const files = createRowFiles(dataDir, "pins", health);
  return {
    dir: files.dir,
    load(id) {
      // Absent or unreadable: the difference is unknown, the pin still holds.
      const parsed = files.read(id);
      if (typeof parsed?.fingerprint !== "string" || !Array.isArray(parsed.tools)) return undefined;
      return { fingerprint: parsed.fingerprint, tools: parsed.tools as PinnedList["tools"] };
    },
    async save(id, list) {
      const kept = await files.write(id, { fingerprint: list.fingerprint, tools: list.tools });
      if (!kept) throw new Error(`cannot keep a pin for the id "${id}"`);
    },
  };
}
