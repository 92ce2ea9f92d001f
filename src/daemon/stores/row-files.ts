/**
 * A directory of one JSON file per server row, `<data>/<name>/<id>.json`, each written
 * atomically, one save of a file at a time, with mode 0600 in a 0700 directory: the
 * shape of the daemon's pin store and of its tools cache. A file that is absent, unreadable,
 * not JSON or not an object reads as nothing; what the object must hold is the store's to
 * check. Ids are [A-Za-z0-9_-] once
 * validated; anything else is refused rather than escaped, so no id leaves the directory.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createSaveQueue, writeAtomically } from "../config/source.js";
import { SAVE_EFFECTS, type SaveHealth } from "../process/save-health.js";

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface RowFiles {
  readonly dir: string;
  /** The object in `id`'s file; undefined when there is none to read. */
  read(id: string): Record<string, unknown> | undefined;
  /** Replaces `id`'s file with `value` as JSON; false, writing nothing, for an unsafe id. */
  write(id: string, value: object): Promise<boolean>;
  /**
   * The ids with a file, listed once and kept up to date by `write`: true only while this
   * process is the directory's one writer. A row without a file then costs no failed open.
   */
  listed(): ReadonlySet<string>;
}

/** `health`: where a failed save, and the next good one, is noted for `status`. */
export function createRowFiles(
  dataDir: string,
  name: "pins" | "tools-cache" | "cold-answers" | "cold-answers-pool",
  health?: SaveHealth,
): RowFiles {
  const dir = join(dataDir, name);
  const fileOf = (id: string): string | undefined =>
    SAFE_ID.test(id) ? join(dir, `${id}.json`) : undefined;
  let listed: Set<string> | undefined;
  const queue = createSaveQueue();
  return {
    dir,
    read(id) {
      const file = fileOf(id);
      if (!file) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(readFileSync(file, "utf8"));
      } catch {
        return undefined;
      }
      const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
      return isObject ? (parsed as Record<string, unknown>) : undefined;
    },
    async write(id, value) {
      const file = fileOf(id);
      if (!file) return false;
      const text = `${JSON.stringify(value)}\n`;
      const save = async (): Promise<void> => {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        await queue(file, () => writeAtomically(file, text));
      };
      await (health ? health.track(name, dir, SAVE_EFFECTS[name], save) : save());
      listed?.add(id);
      return true;
    },
    listed() {
      if (listed) return listed;
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        // No directory yet: no file.
      }
      listed = new Set(names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)));
      return listed;
    },
  };
}
