/**
 * One record of the live daemons of a user: `<dataDir>/daemons/<pid>.json`,
 * `{pid, startTime, socket, version, startedAt, handlesSignals}`, written whole (temp file + rename, 0600)
 * once a daemon serves and handles SIGUSR1, removed when it stops serving. The data folder
 * outlives the runtime folder, so `status`, `shutdown` and `serve` find a daemon whose socket
 * was deleted, and `status` names the daemons serving other sockets (strays). A record whose
 * pid is dead or names another process (its start time differs) is ignored.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isPid, processIsLive, processStartTime } from "./instance-lock.js";
import { prepareDir } from "./paths.js";
import { readRecordObject, unlinkQuietly, writeRecordWhole } from "./pid-records.js";

export interface DaemonRecord {
  pid: number;
  /** `/proc/<pid>/stat` field 22; null where there is no /proc. */
  startTime: number | null;
  /** The socket path it serves. */
  socket: string;
  version: string;
  /** Epoch ms. */
  startedAt: number;
  /** SIGUSR1 re-creates its socket and SIGTERM stops it gracefully (`mcpool serve`). */
  handlesSignals: boolean;
}

const RECORD_NAME = /^(\d+)\.json$/;

export function daemonRecordsDir(dataDir: string): string {
  return join(dataDir, "daemons");
}

/**
 * Records this process as a daemon serving `socket`; the function it returns removes the
 * record (idempotent). Throws when the record cannot be written: the caller logs it.
 */
export function writeDaemonRecord(
  dataDir: string,
  fields: { socket: string; version: string; startedAt: number; handlesSignals: boolean },
): () => void {
  const dir = daemonRecordsDir(dataDir);
  prepareDir(dir, 0o700);
  const record: DaemonRecord = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    ...fields,
  };
  const path = join(dir, `${process.pid}.json`);
  writeRecordWhole(path, record);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    // Only our own record: a successor with our pid cannot exist while we run.
    if (readRecord(path)?.startTime === record.startTime) unlinkQuietly(path);
  };
}

/**
 * The daemons of this user that live now, oldest first. Stale records (a dead pid, or a pid
 * that now names another process) are ignored, and removed when `sweep` is set.
 */
export function liveDaemons(dataDir: string, options: { sweep?: boolean } = {}): DaemonRecord[] {
  const dir = daemonRecordsDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const live: DaemonRecord[] = [];
  for (const name of names) {
    const named = RECORD_NAME.exec(name);
    if (named === null) continue;
    const path = join(dir, name);
    const record = readRecord(path);
    if (record !== undefined && record.pid === Number(named[1])) {
      if (processIsLive(record.pid, record.startTime)) {
        live.push(record);
        continue;
      }
    }
    if (options.sweep === true) unlinkQuietly(path);
  }
  return live.sort((a, b) => a.startedAt - b.startedAt);
}

/** The live daemon recorded as serving `socket`, if any. */
export function daemonServing(dataDir: string, socket: string): DaemonRecord | undefined {
  return liveDaemons(dataDir).find((record) => record.socket === socket);
}

function readRecord(path: string): DaemonRecord | undefined {
  const value = readRecordObject(path);
  if (value === undefined) return undefined;
  const { pid, startTime, socket, version, startedAt, handlesSignals } = value;
  const start = startTime === null || (Number.isSafeInteger(startTime) && Number(startTime) >= 0);
  if (!isPid(pid) || !start || typeof socket !== "string" || typeof version !== "string") {
    return undefined;
  }
  if (typeof startedAt !== "number") return undefined;
  return {
    pid,
    startTime: startTime as number | null,
    socket,
    version,
    startedAt,
    handlesSignals: handlesSignals === true,
  };
}
