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
import type { McpServerConfig } from "../../config/rows.js";
import { resolvePaths } from "../process/paths.js";
import { createRowFiles, type RowFiles } from "./row-files.js";
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

/**
 * The pool's own scopes that are recorded, by the name an entry gives them, and their file
 * in `<data>/cold-answers-pool/`: the whole pool (`@pool`) and its catalogue (`--catalog`).
 * Not `--catalog=auto`: its list follows the calls made, which no cache says.
 */
export const POOL_COLD_SCOPES = { "@pool": "pool", "@catalog": "catalog" } as const;
type PoolScope = keyof typeof POOL_COLD_SCOPES;

const poolFileOf = (scope: string): string | undefined =>
  Object.hasOwn(POOL_COLD_SCOPES, scope) ? POOL_COLD_SCOPES[scope as PoolScope] : undefined;

/** Where scope `scope`'s recording is kept: its row files, and its name there. */
function recordFile(dataDir: string, scope: string): { files: RowFiles; id: string } {
  const pool = poolFileOf(scope);
  return pool === undefined
    ? { files: createRowFiles(dataDir, "cold-answers"), id: scope }
    : { files: createRowFiles(dataDir, "cold-answers-pool"), id: pool };
}

/** Row `row`'s cache as its answers depend on it; undefined when it is not the row's own. */
function ownCache(caches: RowFiles, row: McpServerConfig): Record<string, unknown> | undefined {
  const cache = caches.read(row.id);
  const connection = connectionHash(row);
  // The daemon's own rule for trusting its cache: listed over this very connection.
  if (cache === undefined || cache.connection !== connection) return undefined;
  const { tools, era } = cache;
  if (cache.private === true || !Array.isArray(tools)) return undefined;
  return { connection, tools, era: era ?? null };
}

/**
 * What scope `scope`'s answers depend on now (a server id, or one of POOL_COLD_SCOPES: every
 * row, each as written, and each one's cache); undefined when a cache is not its row's own.
 */
function validityNow(
  configPath: string,
  dataDir: string,
  scope: string,
  build = buildId(),
): Validity | undefined {
  let parsed: ReturnType<typeof parseMcpJson>;
  try {
    parsed = parseMcpJson(readFileSync(configPath, "utf8"));
  } catch {
    return undefined;
  }
  const pool = poolFileOf(scope) !== undefined;
  const rows = pool ? parsed.rows : parsed.rows.filter((r) => r.id === scope);
  const caches = createRowFiles(dataDir, "tools-cache");
  const owned = rows.map((row) => ownCache(caches, row));
  if (rows.length === 0 || owned.some((cache) => cache === undefined)) return undefined;
  return {
    version: VERSION,
    build,
    row: pool ? digest(parsed.rows) : connectionHash(rows[0]!),
    pool: digest(parsed.pool),
    cache: digest(pool ? owned : owned[0]),
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
  const held = new Map<string, ColdRecord>();
  // The code this daemon loaded, read now: an install over it later must not lend its id to
  // answers this code gives.
  const build = buildId();
  return (id, opening) => {
    const validity = validityNow(configPath, dataDir, id, build);
    if (validity === undefined) return;
    const { files, id: file } = recordFile(dataDir, id);
    const before = held.get(id) ?? parseRecord(files.read(file));
    const same = before !== undefined && digest(before.validity) === digest(validity);
    const record = { validity, openings: mergeOpening(same ? before.openings : [], opening) };
    if (before !== undefined && digest(before) === digest(record)) return;
    held.set(id, record);
    files.write(file, record).catch((error: unknown) => {
      log(`mcpool: could not keep ${id}'s first answers: ${(error as Error).message}`);
    });
  };
}

/**
 * The entry's side: the openings recorded for scope `id` (a server, or one of
 * POOL_COLD_SCOPES) that still hold, else undefined.
 */
export function coldOpenings(daemonSocket: string, id: string): Opening[] | undefined {
  const { configPath, dataDir } = pathsOf(daemonSocket);
  const { files, id: file } = recordFile(dataDir, id);
  const record = parseRecord(files.read(file));
  if (record === undefined || record.openings.length === 0) return undefined;
  const validity = validityNow(configPath, dataDir, id);
  if (validity === undefined || digest(validity) !== digest(record.validity)) return undefined;
  return record.openings;
}
