/**
 * The daemon's tools cache on disk: one file per row in `<data>/tools-cache/<id>.json`,
 * written atomically with mode 0600. It holds the connection's digest and the tool list,
 * never a row's env or headers.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CachedTools, ToolsCacheStore } from "../pool/tools-cache.js";
import { writeAtomically } from "./config-source.js";

/** Ids are [A-Za-z0-9_-] once validated; anything else is refused rather than escaped. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function createFileToolsCache(dataDir: string): ToolsCacheStore & { dir: string } {
  const dir = join(dataDir, "tools-cache");
  const fileOf = (id: string): string | undefined =>
    SAFE_ID.test(id) ? join(dir, `${id}.json`) : undefined;
  // The ids with a file, listed once: a row without one costs no failed open (a thrown
  // ENOENT each, which made registering 30,000 lazy rows take seconds). This daemon is the
  // only writer (one per user), so adding what save() writes keeps the list true.
  let listed: Set<string> | undefined;
  const present = (): Set<string> => {
    if (listed) return listed;
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      // No directory yet: nothing cached.
    }
    listed = new Set(names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)));
    return listed;
  };
  return {
    dir,
    load(id) {
      if (!present().has(id)) return undefined;
      const file = fileOf(id);
      if (!file) return undefined;
      try {
        const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<CachedTools>;
        if (typeof parsed.connection !== "string" || !Array.isArray(parsed.tools)) return undefined;
        return { connection: parsed.connection, tools: parsed.tools };
      } catch {
        // Absent or unreadable: a cold start costs this row its catalogue, nothing else.
        return undefined;
      }
    },
    async save(id, cached) {
      const file = fileOf(id);
      if (!file) return;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      await writeAtomically(
        file,
        `${JSON.stringify({ connection: cached.connection, tools: cached.tools })}\n`,
      );
      listed?.add(id);
    },
  };
}
