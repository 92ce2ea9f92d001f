/**
 * One daemon per socket: ten daemons started within 50 ms → exactly one
 * serves. The lock is a file beside the socket holding `{pid, startTime, nonce}`, published
 * whole by link(2) from a temp file: exclusive like `open(wx)`, and never seen half-written.
 * It is stale when its holder is dead or its pid now names another process (the Linux start
 * time differs; elsewhere the pid alone is trusted). Exactly one contender removes a given
 * stale lock: first it must create `<lock>.recover-<id>.<n>` exclusively, so two recoverers
 * never both remove-and-recreate, and a recoverer that died half-way is superseded by claim
 * n+1 once its own claim is seen dead. The caller prepares the directory (`paths.ts`).
 *
 * A file can be deleted (a `/tmp` cleaner, `rm -rf` of the runtime folder), so where the
 * platform has them the holder of the file lock also holds an abstract-namespace name
 * (name-lock.ts) that no removal can take; the file is taken first, so contenders
 * for a lock that is there still meet at the file.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, open, readdir, readFile, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { holdName } from "./name-lock.js";

/** Only Linux has /proc start times; elsewhere a pid is trusted alone, pid reuse unguarded. */
export const HAS_START_TIMES = process.platform === "linux";

export interface ProcessStat {
  /** `R`, `S`, `D`, `Z` (exited, not yet reaped), … */
  state: string;
  /** The process group. */
  pgrp: number;
  /** Clock ticks after boot when the process started: with the pid, its identity. */
  startTime: number;
}

/**
 * Fields 3, 5 and 22 of a `/proc/<pid>/stat` line. Counted after the last `)`, since the
 * command name in field 2 may itself hold spaces and parentheses.
 */
export function parseProcStat(text: string): ProcessStat | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(" ");
  const state = fields[0];
  const pgrp = Number(fields[2]);
  const startTime = Number(fields[19]);
  if (!state || !Number.isSafeInteger(pgrp) || !Number.isSafeInteger(startTime)) return undefined;
  return { state, pgrp, startTime };
}

/** `/proc/<pid>/stat`, parsed; undefined when there is no such process or no /proc. */
export function readProcessStat(pid: number): ProcessStat | undefined {
  if (!HAS_START_TIMES || !isPid(pid)) return undefined;
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    // Gone (ENOENT, ESRCH mid-read), or hidden from us: either way nothing to say about it.
    return undefined;
  }
}

/** Field 22 of `/proc/<pid>/stat` (clock ticks after boot); null without /proc or process. */
export function processStartTime(pid: number): number | null {
  return readProcessStat(pid)?.startTime ?? null;
}

/**
 * Whether the process that started at `startTime` still runs as `pid`. A zombie has exited
 * (here PID 1 does not reap orphans, so they linger). A null start time, or no /proc, trusts
 * the pid alone. When /proc cannot tell, the answer errs on "live": the lock is never taken
 * from a holder that might be running.
 */
export function processIsLive(pid: number, startTime: number | null): boolean {
  if (!isPid(pid)) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, as someone else's process.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = readProcessStat(pid);
  if (stat === undefined) return true;
  if (stat.state === "Z") return false;
  return startTime === null || stat.startTime === startTime;
}

export function isPid(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

export interface InstanceLockOptions {
  /**
   * Asked before a lock that looks stale is removed: `true` keeps it (a daemon still answers
   * on the socket, say from another pid namespace). It can keep a lock, never take one.
   */
  isDaemonAlive?: () => Promise<boolean>;
  /**
   * How long to wait while another contender recovers a stale lock, in ms. Default
   * `DEFAULT_RECOVERY_TIMEOUT_MS` (2000). Past it the lock is reported as not acquired.
   */
  recoveryTimeoutMs?: number;
  /**
   * The abstract socket name held with the file (name-lock.ts `lockName()`), where the
   * platform has abstract sockets. Taken by a process of ours: the lock is not acquired,
   * whatever the file said.
   */
  name?: string;
  /** Told when `name` is held by a process that is not ours: the file lock stands alone. */
  onNameSquatted?: (name: string) => void;
  signal?: AbortSignal;
}

export type InstanceLock =
  | {
      acquired: true;
      release(): void;
      /** Writes the lock file again if it was removed (its folder deleted); ours, same nonce. */
      restore(): Promise<void>;
    }
  | { acquired: false; holderPid: number | undefined };

/** A recovery takes a contender a few milliseconds; two seconds covers a loaded machine. */
export const DEFAULT_RECOVERY_TIMEOUT_MS = 2_000;

/** Between looks while another contender recovers a stale lock: prompt, not a spin. */
const RECOVERY_POLL_MS = 20;

interface LockRecord {
  pid: number;
  startTime: number | null;
  nonce: string;
}

/** A lock file as read: its identity (the nonce, or a digest of junk) and its record. */
interface SeenLock {
  identity: string;
  record: LockRecord | undefined;
}

/**
 * Takes the lock at `lockPath`, or reports who holds it. `release()` removes the file only
 * while it is still ours (by nonce), so a stopping daemon never removes its successor's lock.
 */
export async function acquireInstanceLock(
  lockPath: string,
  options: InstanceLockOptions = {},
): Promise<InstanceLock> {
  const { isDaemonAlive, recoveryTimeoutMs = DEFAULT_RECOVERY_TIMEOUT_MS, signal } = options;
  const { name, onNameSquatted } = options;
  const me: LockRecord = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    nonce: randomBytes(8).toString("hex"),
  };
  const deadline = Date.now() + recoveryTimeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    if (await createWhole(lockPath, me)) {
      // Best effort: litter never stops a daemon that holds the lock from serving.
      await sweepLitter(lockPath).catch(() => undefined);
      const releaseFile = releaser(lockPath, me.nonce);
      let releaseName = (): void => undefined;
      if (name !== undefined) {
        const held = await holdName(name);
        if (held.held) releaseName = held.release;
        else if (held.holderPid !== undefined) {
          // A daemon of ours serves this path although its lock file is gone.
          releaseFile();
          return { acquired: false, holderPid: held.holderPid };
        } else onNameSquatted?.(name);
      }
      return {
        acquired: true,
        release: () => {
          releaseFile();
          releaseName();
        },
        restore: async () => {
          await createWhole(lockPath, me);
        },
      };
    }
    const seen = await readLock(lockPath);
    // Released between our create and our read: create again.
    if (seen === undefined) continue;
    const holder = seen.record;
    if (holder && processIsLive(holder.pid, holder.startTime)) {
      return { acquired: false, holderPid: holder.pid };
    }
    if (isDaemonAlive !== undefined && (await isDaemonAlive())) {
      return { acquired: false, holderPid: holder?.pid };
    }
    const claim = await claimRecovery(lockPath, seen.identity, me);
    if (claim === undefined) {
      // Another live contender is recovering this lock: it will serve, or fail and we retry.
      if (Date.now() >= deadline) return { acquired: false, holderPid: undefined };
      await sleep(RECOVERY_POLL_MS, undefined, signal ? { signal } : {});
      continue;
    }
    try {
      // Under the claim nobody else may remove this lock; check it is still the stale one.
      const again = await readLock(lockPath);
      if (again?.identity === seen.identity) await unlink(lockPath).catch(ignoreMissing);
    } finally {
      await unlink(claim).catch(ignoreMissing);
    }
  }
}

function releaser(lockPath: string, nonce: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    let text: string;
    try {
      text = readFileSync(lockPath, "utf8");
    } catch (error) {
      ignoreMissing(error);
      return;
    }
    if (parseRecord(text)?.nonce !== nonce) return;
    try {
      unlinkSync(lockPath);
    } catch (error) {
      ignoreMissing(error);
    }
  };
}

/**
 * Claims the right to remove the stale lock `identity`: creates claim n+1 when claim n (if
 * any) belongs to a process no longer live. Undefined when a live contender holds the claim.
 */
async function claimRecovery(
  lockPath: string,
  identity: string,
  me: LockRecord,
): Promise<string | undefined> {
  const dir = dirname(lockPath);
  const prefix = `${basename(lockPath)}.recover-${identity}.`;
  let top = 0;
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix)) continue;
    const n = Number(name.slice(prefix.length));
    if (Number.isSafeInteger(n) && n > top) top = n;
  }
  if (top > 0) {
    const claimer = await readRecord(join(dir, `${prefix}${top}`));
    if (claimer && processIsLive(claimer.pid, claimer.startTime)) return undefined;
  }
  const claim = join(dir, `${prefix}${top + 1}`);
  return (await createWhole(claim, me)) ? claim : undefined;
}

/**
 * After winning: removes the claims and temp files of contenders that died half-way. Only a
 * dead process's litter goes: a live contender's claim names a lock that is no longer there,
 * and its temp file is about to be linked or removed by itself.
 */
async function sweepLitter(lockPath: string): Promise<void> {
  const dir = dirname(lockPath);
  const base = `${basename(lockPath)}.`;
  for (const name of await readdir(dir)) {
    if (!name.startsWith(base)) continue;
    const path = join(dir, name);
    if (name.endsWith(".tmp")) {
      const writer = Number(name.split(".").at(-3));
      if (isPid(writer) && !processIsLive(writer, null)) await unlink(path).catch(ignoreMissing);
    } else if (name.startsWith(`${base}recover-`)) {
      const claimer = await readRecord(path);
      if (!claimer || !processIsLive(claimer.pid, claimer.startTime)) {
        await unlink(path).catch(ignoreMissing);
      }
    }
  }
}

/** Creates `path` holding `record`, exclusively and whole; false when it already exists. */
async function createWhole(path: string, record: LockRecord): Promise<boolean> {
  const temp = `${path}.${record.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, `${JSON.stringify(record)}\n`, { flag: "wx", mode: 0o600 });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(ignoreMissing);
  }
}

async function readLock(path: string): Promise<SeenLock | undefined> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    ignoreMissing(error);
    return undefined;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const text = await handle.readFile("utf8");
    const record = parseRecord(text);
    if (record) return { identity: `n-${record.nonce}`, record };
    // Junk has no nonce: the file's inode and mtime, with its text, name this one instance.
    const digest = createHash("sha256")
      .update(`${stat.ino}:${stat.mtimeNs}:${text}`)
      .digest("hex")
      .slice(0, 16);
    return { identity: `g-${digest}`, record: undefined };
  } finally {
    await handle.close();
  }
}

async function readRecord(path: string): Promise<LockRecord | undefined> {
  try {
    return parseRecord(await readFile(path, "utf8"));
  } catch (error) {
    ignoreMissing(error);
    return undefined;
  }
}

const NONCE = /^[0-9a-f]{8,64}$/;

function parseRecord(text: string): LockRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, startTime, nonce } = value as Record<string, unknown>;
  if (!isPid(pid) || typeof nonce !== "string" || !NONCE.test(nonce)) return undefined;
  if (startTime !== null && !(Number.isSafeInteger(startTime) && (startTime as number) >= 0)) {
    return undefined;
  }
  return { pid, startTime: startTime as number | null, nonce };
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "ENOENT") throw error;
}
