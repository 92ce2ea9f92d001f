/**
 * The daemon's tools cache on disk: one file per row in `<data>/tools-cache/<id>.json`,
 * written atomically with mode 0600. It holds the connection's digest, the tool list (none
 * for a list its server calls private) and the era the server was found to speak,
 * never a row's env or headers.
 */
import {
  isQuestion,
  type CachedTools,
  type ProfileMemo,
  type ToolsCacheStore,
} from "../../pool/catalog/tools-cache.js";
import { parseVerdict } from "../../pool/core/era.js";
import type { SaveHealth } from "../process/save-health.js";
import { createRowFiles } from "./row-files.js";

export function createFileToolsCache(
  dataDir: string,
  health?: SaveHealth,
): ToolsCacheStore & { dir: string } {
  const files = createRowFiles(dataDir, "tools-cache", health);
  return {
    dir: files.dir,
    load(id) {
      // The ids with a file, listed once: a row without one costs no failed open (a thrown
      // ENOENT each, which made registering 30,000 lazy rows take seconds). This daemon is
      // the only writer (one per user), so what save() writes keeps the list true.
      if (!files.listed().has(id)) return undefined;
      // Absent or unreadable: a cold start costs this row its catalog, nothing else.
      const parsed = files.read(id);
      if (typeof parsed?.connection !== "string" || !Array.isArray(parsed.tools)) return undefined;
      const era = parseVerdict(parsed.era);
      const profiles = parseProfiles(parsed.profiles);
      return {
        connection: parsed.connection,
        tools: parsed.tools as CachedTools["tools"],
        ...(parsed.private === true ? { private: true as const } : {}),
        ...(era ? { era } : {}),
        ...(profiles ? { profiles } : {}),
      };
    },
    async save(id, cached) {
      await files.write(id, {
        connection: cached.connection,
        tools: cached.tools,
        ...(cached.private ? { private: true } : {}),
        ...(cached.era ? { era: cached.era } : {}),
        ...(cached.profiles ? { profiles: cached.profiles } : {}),
      });
    },
  };
}

/** A stored profile memo, or undefined for anything else: it is learnt again. */
function parseProfiles(value: unknown): ProfileMemo | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { same, asks, asksRoots, showsUptake, legacyToo } = value as Record<string, unknown>;
  const memo: ProfileMemo = {};
  if (Array.isArray(same) && same.every((key) => typeof key === "string")) {
    memo.same = same as string[];
  }
  if (Array.isArray(asks) && asks.every(isQuestion)) memo.asks = asks;
  if (typeof asksRoots === "boolean") memo.asksRoots = asksRoots;
  if (showsUptake === true) memo.showsUptake = true;
  if (legacyToo === false) memo.legacyToo = false;
  return Object.keys(memo).length > 0 ? memo : undefined;
}
