/**
 * The daemon's recordings of what it answered each server's first requests (made by its MCP
 * sockets, src/bridge/lean/cold-answers.ts), `<data>/cold-answers/<id>.json`, for an entry
 * that has to start the daemon to answer the same while it starts; and when one may be given. A
 * recording holds while the daemon would still answer the same: the same mcpool build (its version
 * and the digest of its code: another build of one version may answer otherwise), the server's row
 * as the daemon hashes it to trust its tools cache (command, args, env, cwd; url and headers), that
 * cache still the row's and unchanged (tools, era), and the same `"mcpool"` section. Anything else,
 * or anything unreadable, and the entry does as it did without one.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseMcpJson } from "../../config/mcp-json.js";
import { resolvePaths } from "../process/paths.js";
import { createRowFiles } from "./row-files.js";
import { connectionHash } from "../../pool/catalog/tools-cache.js";
import { canonicalJson } from "../../pool/core/fingerprint.js";
import { buildId } from "../../build-id.js";
import { VERSION } from "../../version.js";

/** A request without its id, and the daemon's answer to it as sent. */
interface Exchange {
  request: string;
  answer: string;
}

/** A session's opening exchange and the listings answered after it (the bridge's Opening). */
export interface Opening extends Exchange {
  lists: Exchange[];
}

/** The most openings kept per server: one per host kind and version, most recent first. */
export const MAX_OPENINGS = 8;

/** `opening` merged into `openings`: it first, an older one of the same request folded in. */
export function mergeOpening(openings: readonly Opening[], opening: Opening): Opening[] {
  const older = openings.find((o) => o.request === opening.request && o.answer === opening.answer);
  const lists = [...opening.lists];
  for (const list of older?.lists ?? []) {
    if (!lists.some((l) => l.request === list.request)) lists.push(list);
  }
  const rest = openings.filter((o) => o.request !== opening.request);
  return [{ ...opening, lists }, ...rest].slice(0, MAX_OPENINGS);
}

/** What a recording holds for: each a digest, but the version. */
interface Validity {
  version: string;
  build: string;
  row: string;
  pool: string;
  cache: string;
}

interface ColdRecord {
  validity: Validity;
  openings: Opening[];
}

const digest = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex");

/** Where the daemon on `daemonSocket` keeps its config and data. */
function pathsOf(daemonSocket: string): { configPath: string; dataDir: string } {
  const { configPath, dataDir } = resolvePaths({ socket: daemonSocket });
  return { configPath, dataDir };
}

/** What server `id`'s answers depend on now; undefined when its cache is not its row's own. */
function validityNow(configPath: string, dataDir: string, id: string): Validity | undefined {
  let parsed: ReturnType<typeof parseMcpJson>;
  try {
    parsed = parseMcpJson(readFileSync(configPath, "utf8"));
  } catch {
    return undefined;
  }
  const row = parsed.rows.find((r) => r.id === id);
  const cache = createRowFiles(dataDir, "tools-cache").read(id);
  if (row === undefined || cache === undefined) return undefined;
  const connection = connectionHash(row);
  // The daemon's own rule for trusting its cache: listed over this very connection.
  if (cache.connection !== connection) return undefined;
  const { tools, era } = cache;
  if (cache.private === true || !Array.isArray(tools)) return undefined;
  return {
    version: VERSION,
    build: buildId(),
    row: connection,
    pool: digest(parsed.pool),
    cache: digest({ connection, tools, era: era ?? null }),
  };
}

function parseRecord(value: Record<string, unknown> | undefined): ColdRecord | undefined {
  if (value === undefined || !Array.isArray(value.openings)) return undefined;
  const validity = value.validity as Validity | undefined;
  return typeof validity === "object" && validity !== null
    ? { validity, openings: value.openings as Opening[] }
    : undefined;
}

/**
 * The daemon's side: `remember(id, opening)` keeps what a session of server `id` was
 * answered, with what it holds for, in the daemon's data directory.
 */
export function coldRecorder(
  configPath: string,
  dataDir: string,
  log: (line: string) => void,
): (id: string, opening: Opening) => void {
  const files = createRowFiles(dataDir, "cold-answers");
  const held = new Map<string, ColdRecord>();
  return (id, opening) => {
    const validity = validityNow(configPath, dataDir, id);
    if (validity === undefined) return;
    const before = held.get(id) ?? parseRecord(files.read(id));
    const same = before !== undefined && digest(before.validity) === digest(validity);
    const record = { validity, openings: mergeOpening(same ? before.openings : [], opening) };
    if (before !== undefined && digest(before) === digest(record)) return;
    held.set(id, record);
    files.write(id, record).catch((error: unknown) => {
      log(`mcpool: could not keep ${id}'s first answers: ${(error as Error).message}`);
    });
  };
}

/** The entry's side: the openings recorded for server `id` that still hold, else undefined. */
export function coldOpenings(daemonSocket: string, id: string): Opening[] | undefined {
  const { configPath, dataDir } = pathsOf(daemonSocket);
  const record = parseRecord(createRowFiles(dataDir, "cold-answers").read(id));
  if (record === undefined || record.openings.length === 0) return undefined;
  const validity = validityNow(configPath, dataDir, id);
  if (validity === undefined || digest(validity) !== digest(record.validity)) return undefined;
  return record.openings;
}
