/**
 * The daemon's tools cache on disk: one file per row in `<data>/tools-cache/<id>.json`,
 * written atomically with mode 0600. It holds the connection's digest, the tool list (none
 * for a list its server calls private), the era the server was found to speak and what host
 * profiles taught (the face it shows 2025-11-25 hosts among them), never a row's env or
 * headers.
 */
import {
  isQuestion,
  type CachedTools,
  type ProfileMemo,
  type ToolsCacheStore,
} from "../../pool/catalog/tools-cache.js";
import { parseVerdict } from "../../pool/core/era.js";
import type { ServerFace } from "mcpool-protocol";
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
  const { same, asks, asksRoots, showsUptake, legacyToo, legacyFace } = value as Record<
    string,
    unknown
  >;
  const memo: ProfileMemo = {};
  if (Array.isArray(same) && same.every((key) => typeof key === "string")) {
    memo.same = same as string[];
  }
  if (Array.isArray(asks) && asks.every(isQuestion)) memo.asks = asks;
  if (typeof asksRoots === "boolean") memo.asksRoots = asksRoots;
  if (showsUptake === true) memo.showsUptake = true;
  if (legacyToo === false) memo.legacyToo = false;
  const face = parseFace(legacyFace);
  if (face !== undefined) memo.legacyFace = face;
  return Object.keys(memo).length > 0 ? memo : undefined;
}

/** A stored server face (what a handshake told), or undefined when it is not one. */
function parseFace(value: unknown): ServerFace | undefined {
  if (!isObject(value)) return undefined;
  const { serverInfo, capabilities, instructions } = value;
  const face: ServerFace = {};
  if (isObject(serverInfo) && typeof serverInfo.name === "string") {
    if (typeof serverInfo.version !== "string") return undefined;
    face.serverInfo = serverInfo as ServerFace["serverInfo"] & object;
  }
  if (isObject(capabilities)) face.capabilities = capabilities;
  if (typeof instructions === "string") face.instructions = instructions;
  return face.capabilities !== undefined ? face : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
