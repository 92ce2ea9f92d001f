/**
 * The daemon's record of its children (no orphans). Each child is one file,
 * `<dataDir>/children/<pid>.json`, written whole (temp file + rename, 0600): its pid, process
 * group, start time, server and the daemon that spawned it. A daemon that has just taken the
 * instance lock calls `reapPredecessors()`: the children of a daemon no longer running are
 * stopped by process group (SIGTERM, a grace period, SIGKILL). A pid that now names another
 * process (its start time differs) is never signalled, nor are the children of a
 * daemon still running, nor what is left of a group whose leader vanished (its id may have
 * been reused: stragglers are left to stdin EOF). `add()`/`remove()` never throw: a record that cannot be written
 * is logged, and must not fail the spawn it describes.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { serverLog } from "../../pool/core/server-log.js";
import type { PoolLog } from "../../pool/core/types.js";
import {
  HAS_START_TIMES,
  isPid,
  processIsLive,
  processStartTime,
  readProcessStat,
} from "./instance-lock.js";
import { endMarked } from "./marked.js";
import { SAVE_EFFECTS, type SaveHealth } from "./save-health.js";
import { prepareDir } from "./paths.js";

export interface PidRecord {
  pid: number;
  /** The child's process group: its own pid, as children lead their own group. */
  pgid: number;
  /** `/proc/<pid>/stat` field 22; null where there is no /proc. */
  startTime: number | null;
  serverId: string;
  daemonPid: number;
  daemonStartTime: number | null;
  /** Epoch ms. */
  recordedAt: number;
  /** The spawning daemon's mark of its descendants (marked.ts); absent in older records. */
  mark?: string;
}

export interface ReapOptions {
  /** How long a predecessor's child gets between SIGTERM and SIGKILL, in ms. Default 2000. */
  graceMs?: number;
  log?: PoolLog;
  signal?: AbortSignal;
}

export interface ReapResult {
  /** Children of a dead daemon that were stopped (their whole group). */
  reaped: number[];
  /** Records whose pid now names another process, or cannot be proven ours: never signalled. */
  skipped: number[];
  /** Records of children already gone. */
  gone: number[];
}

export interface PidRecords {
  /** Where the records are: `<dataDir>/children`. */
  readonly dir: string;
  /** Records a child just spawned. Undefined (and logged) when the record cannot be written. */
  add(pid: number, serverId: string): PidRecord | undefined;
  remove(pid: number): void;
  /** Stops the recorded children of daemons that are no longer running; call once, holding the lock. */
  reapPredecessors(options?: ReapOptions): Promise<ReapResult>;
}

/** As long as a child's own stop ladder allows between SIGTERM and SIGKILL. */
export const DEFAULT_REAP_GRACE_MS = 2_000;

/** SIGKILL cannot be caught; this bounds only the kernel's teardown of the group. */
const KILL_WAIT_MS = 2_000;

/** Between looks at the process table while a group dies: prompt, not a spin. */
const POLL_MS = 25;

const RECORD_NAME = /^(\d+)\.json$/;

export function createPidRecords(
  dataDir: string,
  options: { log?: PoolLog; mark?: string; health?: SaveHealth } = {},
): PidRecords {
  const dir = join(dataDir, "children");
  const log = options.log;
  let prepared = false;
  let ownStartTime: number | null | undefined;
  const recordPath = (pid: number): string => join(dir, `${pid}.json`);

  return {
    dir,

    add(pid, serverId) {
      try {
        if (!isPid(pid)) throw new Error("not a pid");
        if (!prepared) prepareDir(dir, 0o700);
        prepared = true;
        ownStartTime ??= processStartTime(process.pid);
        const stat = readProcessStat(pid);
        const record: PidRecord = {
          pid,
          pgid: stat?.pgrp ?? pid,
          startTime: stat?.startTime ?? null,
          serverId,
          daemonPid: process.pid,
          daemonStartTime: ownStartTime,
          recordedAt: Date.now(),
          ...(options.mark !== undefined ? { mark: options.mark } : {}),
        };
        writeRecordWhole(recordPath(pid), record);
        options.health?.saved("children");
        return record;
      } catch (error) {
        options.health?.failed("children", dir, error, SAVE_EFFECTS.children);
        serverLog(log ?? {}, serverId).error(
          `could not record its child ${pid}: ${(error as Error).message}`,
        );
        return undefined;
      }
    },

    remove(pid) {
      try {
        unlinkSync(recordPath(pid));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
          log?.error?.(`mcpool: could not remove the record of child ${pid}: ${String(error)}`);
        }
      }
    },

    async reapPredecessors(reapOptions = {}) {
      const { graceMs = DEFAULT_REAP_GRACE_MS, signal } = reapOptions;
      const reapLog = reapOptions.log ?? log;
      const result: ReapResult = { reaped: [], skipped: [], gone: [] };
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return result;
        throw error;
      }

      const targets: PidRecord[] = [];
      // The marks of dead daemons: what holds one left a group of theirs (marked.ts).
      const marks = new Set<string>();
      const groups = groupProbe();
      for (const name of names) {
        const path = join(dir, name);
        if (name.endsWith(".tmp")) {
          // `<pid>.json.<writer>.<hex>.tmp`, left by a daemon that died mid-write.
          const writer = Number(name.split(".").at(-3));
          if (isPid(writer) && writer !== process.pid && !processIsLive(writer, null)) {
            unlinkQuietly(path);
          }
          continue;
        }
        const named = RECORD_NAME.exec(name);
        if (named === null) continue;
        const record = readRecord(path);
        if (record === undefined || record.pid !== Number(named[1])) {
          reapLog?.error?.(`mcpool: removing an unreadable pid record: ${path}`);
          unlinkQuietly(path);
          continue;
        }
        // Ours, or a daemon still running (another socket sharing this data directory).
        if (record.daemonPid === process.pid || record.pid === process.pid) continue;
        if (processIsLive(record.daemonPid, record.daemonStartTime)) continue;
        if (record.mark !== undefined) marks.add(record.mark);
        const verdict = judge(record, groups);
        if (verdict === "ours") {
          targets.push(record);
          continue;
        }
        if (verdict === "other") {
          result.skipped.push(record.pid);
          reapLog?.info?.(
            `mcpool: pid ${record.pid} (${record.serverId}) now names another process; not signalled`,
          );
        } else {
          result.gone.push(record.pid);
        }
        unlinkQuietly(path);
      }
      if (targets.length === 0) return endEscaped(result, marks, graceMs, reapLog);

      const ownGroup = readProcessStat(process.pid)?.pgrp;
      // A target stays ours for as long as it has never been seen gone: live members pin a
      // group's id, so it cannot pass to another process between two looks 25 ms apart. Once
      // seen gone, a target is never signalled again.
      const pending = new Set(targets);
      const settled = (): boolean => {
        const groups = groupProbe();
        for (const record of pending) {
          const there = leadsGroup(record, ownGroup)
            ? groups(record.pgid)
            : processIsLive(record.pid, record.startTime);
          if (!there) pending.delete(record);
        }
        return pending.size === 0;
      };
      const signalPending = (name: NodeJS.Signals): void => {
        settled();
        for (const record of pending) signalChild(record, name, ownGroup, reapLog);
      };

      signalPending("SIGTERM");
      if (!(await waitUntil(settled, graceMs, signal))) {
        signalPending("SIGKILL");
        await waitUntil(settled, KILL_WAIT_MS, signal);
      }
      for (const record of targets) {
        if (pending.has(record)) {
          reapLog?.error?.(`mcpool: child ${record.pid} survived SIGKILL; keeping its record`);
          continue;
        }
        result.reaped.push(record.pid);
        unlinkQuietly(recordPath(record.pid));
      }
      return endEscaped(result, marks, graceMs, reapLog);
    },
  };
}

/**
 * Whether a record names a child of ours with something left to stop: `ours`, `other` (the
 * pid now names a different process, or its identity cannot be proven: never signalled), or
 * `gone`. A group whose leader has vanished altogether is `gone` even if members remain: its
 * id may since have been handed to an unrelated group, and nothing left can tell them apart.
 */
function judge(
  record: PidRecord,
  groupAlive: (pgid: number) => boolean,
): "ours" | "other" | "gone" {
  if (!HAS_START_TIMES) return processIsLive(record.pid, null) ? "ours" : "gone";
  const stat = readProcessStat(record.pid);
  if (stat === undefined) return "gone";
  if (record.startTime === null || stat.startTime !== record.startTime) return "other";
  if (stat.state !== "Z") return "ours";
  // Exited but not reaped: the zombie still holds the pid, so its group id cannot have been
  // reused, and members left in the group are our child's descendants.
  return record.pgid === record.pid && groupAlive(record.pgid) ? "ours" : "gone";
}

/** A child leading its own group is stopped group and all; never our own group. */
function leadsGroup(record: PidRecord, ownGroup: number | undefined): boolean {
  return record.pgid === record.pid && record.pgid !== ownGroup;
}

/** Which process groups have a live member: one scan of /proc, zombies excluded. */
function groupProbe(): (pgid: number) => boolean {
  if (!HAS_START_TIMES) {
    return (pgid) => {
      try {
        process.kill(-pgid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM";
      }
    };
  }
  const live = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcessStat(Number(name));
    if (stat !== undefined && stat.state !== "Z") live.add(stat.pgrp);
  }
  return (pgid) => live.has(pgid);
}

/** Signals the child's whole group when it leads one, else the child alone; never our group. */
function signalChild(
  record: PidRecord,
  name: NodeJS.Signals,
  ownGroup: number | undefined,
  log: PoolLog | undefined,
): void {
  const target = leadsGroup(record, ownGroup) ? -record.pgid : record.pid;
  try {
    process.kill(target, name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ESRCH") log?.error?.(`mcpool: could not ${name} child ${record.pid}: ${code}`);
  }
}

/** After the groups: a dead daemon's descendants that left them, found by its mark. */
async function endEscaped(
  result: ReapResult,
  marks: ReadonlySet<string>,
  graceMs: number,
  log: PoolLog | undefined,
): Promise<ReapResult> {
  for (const mark of marks) {
    const why = "a previous daemon's children started and that left their process group";
    result.reaped.push(...(await endMarked(mark, { graceMs, why, ...(log ? { log } : {}) })));
  }
  return result;
}

async function waitUntil(
  condition: () => boolean,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS, undefined, signal ? { signal } : {});
  }
  return true;
}

/**
 * Writes `record` to `path` whole: a temp file (`<path>.<pid>.<hex>.tmp`, 0600, exclusive)
 * renamed over it, so a reader never sees half a record. Throws what the write threw.
 */
export function writeRecordWhole(path: string, record: unknown): void {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  // A full folder creates the temp file and fails its write: removed on any error.
  try {
    writeFileSync(temp, `${JSON.stringify(record)}\n`, { flag: "wx", mode: 0o600 });
    renameSync(temp, path);
  } catch (error) {
    unlinkQuietly(temp);
    throw error;
  }
}

/** The JSON object at `path`; undefined when it is missing, unreadable or not an object. */
export function readRecordObject(path: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

function readRecord(path: string): PidRecord | undefined {
  const v = readRecordObject(path);
  if (v === undefined) return undefined;
  const startTime = (x: unknown): x is number | null =>
    x === null || (typeof x === "number" && Number.isSafeInteger(x) && x >= 0);
  // pid 1 is init and never our child; signalling group 1 or -1 would reach every process.
  const child = (x: unknown): x is number => isPid(x) && x > 1;
  if (
    !child(v.pid) ||
    !child(v.pgid) ||
    !isPid(v.daemonPid) ||
    !startTime(v.startTime) ||
    !startTime(v.daemonStartTime) ||
    typeof v.serverId !== "string" ||
    typeof v.recordedAt !== "number"
  ) {
    return undefined;
  }
  return {
    pid: v.pid,
    pgid: v.pgid,
    startTime: v.startTime,
    serverId: v.serverId,
    daemonPid: v.daemonPid,
    daemonStartTime: v.daemonStartTime,
    recordedAt: v.recordedAt,
    ...(typeof v.mark === "string" && /^[0-9a-f]{32}$/.test(v.mark) ? { mark: v.mark } : {}),
  };
}

export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or nothing more we can do about it here.
  }
}
