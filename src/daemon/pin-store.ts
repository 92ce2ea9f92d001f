/**
 * The daemon's pin store (SPEC C18): the tool list each server's pin was approved for, one
 * file per row in `<data>/pins/<id>.json` holding `{fingerprint, tools}`, written
 * atomically with mode 0600 by `mcpool approve`. It is what lets a daemon that restarted
 * still say what changed since the approval; losing it costs the difference, never the
 * withholding, which needs only the row's pin.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PinnedList, PinStore } from "../pool/pinning.js";
import { writeAtomically } from "./config-source.js";

/** Ids are [A-Za-z0-9_-] once validated; anything else is refused rather than escaped. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function createFilePinStore(dataDir: string): PinStore & { dir: string } {
  const dir = join(dataDir, "pins");
  const fileOf = (id: string): string | undefined =>
    SAFE_ID.test(id) ? join(dir, `${id}.json`) : undefined;
  return {
    dir,
    load(id) {
      const file = fileOf(id);
      if (!file) return undefined;
      let parsed: Partial<PinnedList>;
      try {
        parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<PinnedList>;
      } catch {
        // Absent or unreadable: the difference is unknown, the pin still holds.
        return undefined;
      }
      if (typeof parsed.fingerprint !== "string" || !Array.isArray(parsed.tools)) return undefined;
      return { fingerprint: parsed.fingerprint, tools: parsed.tools };
    },
    async save(id, list) {
      const file = fileOf(id);
      if (!file) throw new Error(`cannot keep a pin for the id "${id}"`);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      await writeAtomically(
        file,
        `${JSON.stringify({ fingerprint: list.fingerprint, tools: list.tools })}\n`,
      );
    },
  };
}
