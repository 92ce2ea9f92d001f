/**
 * The daemon's identity on disk, against real files and real processes (test/faults.ts, "The socket
 * and the daemon's identity", "Children"): the runtime directory under hostile conditions, the
 * single-instance lock raced by ten processes, and pid records reaped without ever
 * signalling a process that is not ours. Every directory is a fresh mkdtemp.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import {
  acquireInstanceLock,
  processIsLive,
  processStartTime,
  readProcessStat,
} from "../../src/daemon/process/instance-lock.js";
import { DaemonSetupError, prepareDir, prepareRuntimeDir } from "../../src/daemon/process/paths.js";
import { createPidRecords, type PidRecord } from "../../src/daemon/process/pid-records.js";
import { alive, childrenOf, groupMembers, waitFor } from "../helpers/processes.js";

// Every wait in this file is bounded by this, well under vitest's own timeout.
const BOUND_MS = 10_000;

const builtLock = fileURLToPath(
  new URL("../../dist/daemon/process/instance-lock.js", import.meta.url),
);
const sourceLock = fileURLToPath(
  new URL("../../src/daemon/process/instance-lock.ts", import.meta.url),
);

let root: string;
const spawned: ChildProcess[] = [];
/** Process groups a test made outside `spawned`'s own groups. */
const strayGroups: number[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpool-identity-"));
});

afterEach(async () => {
  for (const child of spawned.splice(0)) {
    const pid = child.pid;
    if (pid === undefined) continue;
    // Detached children lead their own group: take the whole group, wrappers' children too.
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await waitFor(() => !alive(pid) && groupMembers(pid).length === 0, BOUND_MS, `${pid} gone`);
  }
  for (const pgid of strayGroups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone.
    }
    await waitFor(() => groupMembers(pgid).length === 0, BOUND_MS, `group ${pgid} gone`);
  }
  rmSync(root, { recursive: true, force: true });
});

function modeOf(path: string): number {
  return statSync(path).mode & 0o7777;
}

function withUmask<T>(mask: number, run: () => T): T {
  const previous = process.umask(mask);
  try {
    return run();
  } finally {
    process.umask(previous);
  }
}

function setupError(run: () => unknown): DaemonSetupError {
  try {
    run();
  } catch (error) {
    if (error instanceof DaemonSetupError) return error;
    throw error;
  }
  throw new Error("expected a DaemonSetupError");
}

/** A process of our own, in its own process group, that lives until killed. */
function spawnSleeper(command = "sleep", args = ["300"]): ChildProcess & { pid: number } {
  const child = spawn(command, args, { detached: true, stdio: "ignore" });
  spawned.push(child);
  if (child.pid === undefined) throw new Error(`could not spawn ${command}`);
  return child as ChildProcess & { pid: number };
}

/** The pid of a process that has exited (and been reaped): nobody runs as it now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  if (child.pid === undefined) throw new Error("could not spawn node");
  return child.pid;
}

describe("prepareRuntimeDir", () => {
  it("creates a missing directory, and the parents it needs, 0700 under umask 000", () => {
    const dir = join(root, "a", "b", "run");
    const result = withUmask(0, () => prepareRuntimeDir(dir));
    expect(result).toEqual({ created: true, tightened: false });
    for (const path of [join(root, "a"), join(root, "a", "b"), dir]) {
      expect(modeOf(path).toString(8)).toBe("700");
      expect(statSync(path).uid).toBe(process.getuid?.());
    }
  });

  it("tightens an existing 0755 directory of ours to 0700 and says so", () => {
    const dir = join(root, "run");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    expect(prepareRuntimeDir(dir)).toEqual({ created: false, tightened: true });
    expect(modeOf(dir).toString(8)).toBe("700");
    expect(prepareRuntimeDir(dir)).toEqual({ created: false, tightened: false });
  });

  it("refuses a symlink without following it, leaving its target untouched", () => {
    const target = join(root, "elsewhere");
    mkdirSync(target);
    chmodSync(target, 0o755);
    const link = join(root, "run");
    symlinkSync(target, link);
    const error = setupError(() => prepareRuntimeDir(link));
    expect(error.code).toBe("symlink-dir");
    expect(error.path).toBe(link);
    expect(error.message).toContain(link);
    expect(modeOf(target).toString(8)).toBe("755");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it("refuses a dangling symlink rather than creating its target", () => {
    const link = join(root, "run");
    symlinkSync(join(root, "nowhere"), link);
    expect(setupError(() => prepareRuntimeDir(link)).code).toBe("symlink-dir");
    expect(existsSync(join(root, "nowhere"))).toBe(false);
  });

  it("refuses a file where the directory should be", () => {
    const path = join(root, "run");
    writeFileSync(path, "");
    expect(setupError(() => prepareRuntimeDir(path)).code).toBe("not-a-directory");
  });

  it("refuses a directory that belongs to another uid, and never chmods it", () => {
    const dir = join(root, "run");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const someoneElse = (process.getuid?.() ?? 0) + 4242;
    const error = setupError(() => prepareRuntimeDir(dir, { uid: someoneElse }));
    expect(error.code).toBe("foreign-dir");
    expect(error.detail.ownerUid).toBe(process.getuid?.());
    expect(error.detail.uid).toBe(someoneElse);
    expect(error.message).toContain(dir);
    expect(modeOf(dir).toString(8)).toBe("755");
  });

  it("refuses a directory chowned to nobody (65534), leaving owner and mode as they were", () => {
    const dir = join(root, "run");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    chownSync(dir, 65534, 65534);
    const error = setupError(() => prepareRuntimeDir(dir));
    expect(error.code).toBe("foreign-dir");
    expect(error.detail.ownerUid).toBe(65534);
    expect(statSync(dir).uid).toBe(65534);
    expect(modeOf(dir).toString(8)).toBe("755");
  });

  it("refuses a shared sticky world-writable directory (like /tmp) instead of chmod'ing it", () => {
    const dir = join(root, "shared");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    expect(setupError(() => prepareRuntimeDir(dir)).code).toBe("shared-dir");
    expect(modeOf(dir).toString(8)).toBe("1777");
  });
});

describe("prepareDir", () => {
  it("creates a data directory with the mode asked for, whatever the umask", () => {
    const dir = join(root, "data", "mcpool");
    expect(withUmask(0, () => prepareDir(dir, 0o700))).toEqual({ created: true, tightened: false });
    expect(modeOf(dir).toString(8)).toBe("700");
    expect(modeOf(join(root, "data")).toString(8)).toBe("700");
  });

  it("refuses a symlinked data directory, naming it, and leaves its target's mode", () => {
    const target = join(root, "real");
    mkdirSync(target, { mode: 0o700 });
    chmodSync(target, 0o750);
    const link = join(root, "data");
    symlinkSync(target, link);
    const error = setupError(() => prepareDir(link, 0o700));
    expect(error.code).toBe("symlink-dir");
    expect(error.message).toContain(link);
    expect(modeOf(target).toString(8)).toBe("750");
  });

  it("never changes the mode of a data directory it did not create", () => {
    const dir = join(root, "mine");
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o755);
    expect(prepareDir(dir, 0o700)).toEqual({ created: false, tightened: false });
    expect(modeOf(dir).toString(8)).toBe("755");
  });
});

describe("processStartTime", () => {
  it("reads the start time of a process whose name holds spaces and parentheses", async () => {
    const child = spawnSleeper(process.execPath, [
      "-e",
      "process.title = 'x) 1 2 (y'; setInterval(() => {}, 60000)",
    ]);
    await waitFor(
      () => readFileSync(`/proc/${child.pid}/stat`, "latin1").includes("(x) 1 2 (y)"),
      BOUND_MS,
      "the new title",
    );
    const stat = readProcessStat(child.pid);
    // Detached: it leads its own group, which only a correctly aligned parse reports.
    expect(stat?.pgrp).toBe(child.pid);
    expect(stat?.state).toMatch(/^[RS]$/);
    const started = processStartTime(child.pid);
    expect(started).toBe(stat?.startTime);
    expect(started).toBeGreaterThanOrEqual(processStartTime(process.pid) ?? Infinity);
    expect(processIsLive(child.pid, started)).toBe(true);
    expect(processIsLive(child.pid, (started ?? 0) + 1)).toBe(false);
  });

  it("says null for a process that does not exist", async () => {
    const pid = await deadPid();
    expect(processStartTime(pid)).toBeNull();
    expect(processIsLive(pid, null)).toBe(false);
  });
});

describe("acquireInstanceLock", () => {
  let lockPath: string;
  const ownStart = (): number | null => processStartTime(process.pid);
  const writeLock = (record: object | string): void =>
    writeFileSync(lockPath, typeof record === "string" ? record : JSON.stringify(record));

  beforeEach(() => {
    mkdirSync(join(root, "run"), { mode: 0o700 });
    lockPath = join(root, "run", "mcpool.lock");
  });

  it("writes {pid, startTime} to a 0600 file under umask 000, and release() removes it", async () => {
    const lock = await withUmask(0, () => acquireInstanceLock(lockPath));
    expect(lock.acquired).toBe(true);
    expect(modeOf(lockPath).toString(8)).toBe("600");
    const record = JSON.parse(readFileSync(lockPath, "utf8")) as Record<string, unknown>;
    expect(record.pid).toBe(process.pid);
    expect(record.startTime).toBe(ownStart());
    if (lock.acquired) lock.release();
    expect(existsSync(lockPath)).toBe(false);
    expect(readdirSync(join(root, "run"))).toEqual([]);
  });

  it("lets exactly one of ten concurrent acquisitions in one process win", async () => {
    const locks = await Promise.all(
      Array.from({ length: 10 }, () => acquireInstanceLock(lockPath)),
    );
    expect(locks.filter((lock) => lock.acquired)).toHaveLength(1);
    for (const lock of locks) {
      if (!lock.acquired) expect(lock.holderPid).toBe(process.pid);
    }
  });

  it("keeps a lock held by a live process and names it", async () => {
    const holder = spawnSleeper();
    const content = JSON.stringify({
      pid: holder.pid,
      startTime: processStartTime(holder.pid),
      nonce: "0123456789abcdef",
    });
    writeLock(content);
    const lock = await acquireInstanceLock(lockPath);
    expect(lock).toEqual({ acquired: false, holderPid: holder.pid });
    expect(readFileSync(lockPath, "utf8")).toBe(content);
    expect(alive(holder.pid)).toBe(true);
  });

  it("recovers a stale lock left by a dead process", async () => {
    writeLock({ pid: await deadPid(), startTime: 1, nonce: "0123456789abcdef" });
    const lock = await acquireInstanceLock(lockPath);
    expect(lock.acquired).toBe(true);
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: process.pid });
    expect(readdirSync(join(root, "run"))).toEqual(["mcpool.lock"]);
  });

  it("treats a live pid with another start time as stale: the pid was reused", async () => {
    writeLock({ pid: process.pid, startTime: (ownStart() ?? 0) + 1, nonce: "0123456789abcdef" });
    const lock = await acquireInstanceLock(lockPath);
    expect(lock.acquired).toBe(true);
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({
      pid: process.pid,
      startTime: ownStart(),
    });
  });

  it("recovers a lock file holding junk", async () => {
    writeLock("not json at all");
    expect((await acquireInstanceLock(lockPath)).acquired).toBe(true);
  });

  it("keeps a stale-looking lock while isDaemonAlive says a daemon still answers", async () => {
    const pid = await deadPid();
    writeLock({ pid, startTime: 1, nonce: "0123456789abcdef" });
    const before = readFileSync(lockPath, "utf8");
    const lock = await acquireInstanceLock(lockPath, { isDaemonAlive: async () => true });
    expect(lock).toEqual({ acquired: false, holderPid: pid });
    expect(readFileSync(lockPath, "utf8")).toBe(before);
  });

  it("release() leaves a lock that is no longer ours, and is idempotent", async () => {
    const lock = await acquireInstanceLock(lockPath);
    if (!lock.acquired) throw new Error("expected the lock");
    const successor = JSON.stringify({ pid: 1, startTime: null, nonce: "fedcba9876543210" });
    writeLock(successor);
    lock.release();
    lock.release();
    expect(readFileSync(lockPath, "utf8")).toBe(successor);
  });

  it("supersedes the recovery claim of a contender that died half-way", async () => {
    const dead = await deadPid();
    writeLock({ pid: dead, startTime: 1, nonce: "0123456789abcdef" });
    const claim = `${lockPath}.recover-n-0123456789abcdef.1`;
    writeFileSync(claim, JSON.stringify({ pid: dead, startTime: 1, nonce: "aaaaaaaaaaaaaaaa" }));
    const lock = await acquireInstanceLock(lockPath);
    expect(lock.acquired).toBe(true);
    expect(readdirSync(join(root, "run"))).toEqual(["mcpool.lock"]);
  });

  it("waits for a live contender's recovery rather than trampling it", async () => {
    writeLock({ pid: await deadPid(), startTime: 1, nonce: "0123456789abcdef" });
    const before = readFileSync(lockPath, "utf8");
    const claim = `${lockPath}.recover-n-0123456789abcdef.1`;
    writeFileSync(
      claim,
      JSON.stringify({ pid: process.pid, startTime: ownStart(), nonce: "aaaaaaaaaaaaaaaa" }),
    );
    const lock = await acquireInstanceLock(lockPath, { recoveryTimeoutMs: 200 });
    expect(lock).toEqual({ acquired: false, holderPid: undefined });
    expect(readFileSync(lockPath, "utf8")).toBe(before);
    expect(existsSync(claim)).toBe(true);
  });

  describe("raced by ten real processes", () => {
    interface Racer {
      child: ChildProcess & { pid: number };
      lines: string[];
    }
    interface Outcome {
      pid: number;
      acquired: boolean;
      holderPid: number | null;
    }

    beforeAll(() => {
      if (!existsSync(builtLock)) {
        throw new Error(`${builtLock} is missing: run \`npm run build\` first`);
      }
      if (statSync(builtLock).mtimeMs < statSync(sourceLock).mtimeMs) {
        throw new Error(`${builtLock} is older than its source: run \`npm run build\` first`);
      }
    });

    /** Ten processes that load the built module, say "ready", and acquire on "go". */
    async function race(): Promise<{ racers: Racer[]; outcomes: Outcome[] }> {
      const script = join(root, "racer.mjs");
      writeFileSync(
        script,
        `const { acquireInstanceLock } = await import(process.argv[2]);
let lock;
process.stdin.on("end", () => {
  if (lock?.acquired) lock.release();
  process.exit(0);
});
process.stdin.once("data", async () => {
  lock = await acquireInstanceLock(process.argv[3]);
  const holderPid = lock.acquired ? null : (lock.holderPid ?? null);
  process.stdout.write(JSON.stringify({ pid: process.pid, acquired: lock.acquired, holderPid }) + "\\n");
  if (!lock.acquired) process.exit(0);
});
process.stdout.write("ready\\n");
`,
      );
      const racers: Racer[] = Array.from({ length: 10 }, () => {
        const child = spawn(process.execPath, [script, pathToFileURL(builtLock).href, lockPath], {
          stdio: ["pipe", "pipe", "inherit"],
        }) as ChildProcess & { pid: number };
        spawned.push(child);
        const racer: Racer = { child, lines: [] };
        let buffered = "";
        child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
          buffered += chunk;
          const parts = buffered.split("\n");
          buffered = parts.pop() ?? "";
          racer.lines.push(...parts);
        });
        return racer;
      });
      await waitFor(
        () => racers.every((racer) => racer.lines.includes("ready")),
        BOUND_MS,
        "ten racers ready",
      );
      for (const racer of racers) racer.child.stdin?.write("go\n");
      await waitFor(
        () => racers.every((racer) => racer.lines.length >= 2),
        BOUND_MS,
        "ten outcomes",
      );
      const outcomes = racers.map((racer) => JSON.parse(racer.lines[1] as string) as Outcome);
      return { racers, outcomes };
    }

    async function endRace(racers: Racer[]): Promise<void> {
      for (const racer of racers) racer.child.stdin?.end();
      await waitFor(
        () => racers.every((racer) => racer.child.exitCode !== null),
        BOUND_MS,
        "racers to exit",
      );
    }

    it("lets exactly one win; the nine others name the winner", async () => {
      const { racers, outcomes } = await race();
      const winners = outcomes.filter((outcome) => outcome.acquired);
      expect(winners).toHaveLength(1);
      const winner = winners[0] as Outcome;
      for (const outcome of outcomes) {
        if (!outcome.acquired) expect(outcome.holderPid).toBe(winner.pid);
      }
      expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: winner.pid });
      await endRace(racers);
      expect(existsSync(lockPath)).toBe(false);
    });

    it("lets exactly one win when they all find a stale lock to recover", async () => {
      // A lost race shows only sometimes; three rounds, each from a fresh stale lock.
      for (let round = 0; round < 3; round++) {
        writeLock({ pid: await deadPid(), startTime: 1, nonce: "0123456789abcdef" });
        const { racers, outcomes } = await race();
        const winners = outcomes.filter((outcome) => outcome.acquired);
        expect(winners).toHaveLength(1);
        const winner = winners[0] as Outcome;
        expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: winner.pid });
        for (const outcome of outcomes) {
          if (!outcome.acquired) expect(outcome.holderPid).toBe(winner.pid);
        }
        await endRace(racers);
        // No claim or temp file left behind by the recovery.
        expect(readdirSync(join(root, "run"))).toEqual([]);
      }
    });
  });
});

describe("pid records", () => {
  let dataDir: string;
  let records: ReturnType<typeof createPidRecords>;

  beforeEach(() => {
    dataDir = join(root, "data");
    records = createPidRecords(dataDir);
  });

  /** A record as a daemon that has since died would have left it. */
  async function predecessorRecord(pid: number, fields: Partial<PidRecord> = {}): Promise<void> {
    const record: PidRecord = {
      pid,
      pgid: pid,
      startTime: processStartTime(pid),
      serverId: "echo",
      daemonPid: await deadPid(),
      daemonStartTime: 1,
      recordedAt: Date.now(),
      ...fields,
    };
    mkdirSync(records.dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(records.dir, `${pid}.json`), JSON.stringify(record), { mode: 0o600 });
  }

  const recorded = (pid: number): boolean => existsSync(join(records.dir, `${pid}.json`));

  it("writes one 0600 file per child, in a 0700 directory, under umask 000", () => {
    const child = spawnSleeper();
    const record = withUmask(0, () => records.add(child.pid, "echo"));
    expect(record).toMatchObject({
      pid: child.pid,
      pgid: child.pid,
      startTime: processStartTime(child.pid),
      serverId: "echo",
      daemonPid: process.pid,
      daemonStartTime: processStartTime(process.pid),
    });
    const path = join(records.dir, `${child.pid}.json`);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(record);
    expect(modeOf(path).toString(8)).toBe("600");
    expect(modeOf(records.dir).toString(8)).toBe("700");
    expect(readdirSync(records.dir)).toEqual([`${child.pid}.json`]);
    records.remove(child.pid);
    expect(recorded(child.pid)).toBe(false);
    records.remove(child.pid);
  });

  it("leaves the records of the current daemon's own children alone", async () => {
    const child = spawnSleeper();
    records.add(child.pid, "echo");
    const result = await records.reapPredecessors();
    expect(result).toEqual({ reaped: [], skipped: [], gone: [] });
    expect(alive(child.pid)).toBe(true);
    expect(recorded(child.pid)).toBe(true);
  });

  it("stops a dead daemon's child by its process group and removes the record", async () => {
    const child = spawnSleeper();
    await predecessorRecord(child.pid);
    const result = await records.reapPredecessors({ graceMs: 5_000 });
    expect(result).toEqual({ reaped: [child.pid], skipped: [], gone: [] });
    expect(alive(child.pid)).toBe(false);
    expect(recorded(child.pid)).toBe(false);
    await waitFor(() => child.signalCode !== null, BOUND_MS, "the exit to be seen");
    expect(child.signalCode).toBe("SIGTERM");
  });

  it("stops a group whose leader exited unreaped: the zombie still holds its id", async () => {
    // The outer shell starts a session leader, then becomes a `sleep` that never reaps it.
    const outer = spawnSleeper("sh", ["-c", 'setsid sh -c "sleep 300 & wait" & exec sleep 400']);
    let leader = 0;
    await waitFor(
      () => {
        leader = childrenOf(outer.pid).find((pid) => groupMembers(pid).length === 2) ?? 0;
        return leader !== 0;
      },
      BOUND_MS,
      "the session leader and its sleep",
    );
    strayGroups.push(leader);
    const [member] = groupMembers(leader).filter((pid) => pid !== leader);
    const startTime = processStartTime(leader);
    process.kill(leader, "SIGKILL");
    await waitFor(() => readProcessStat(leader)?.state === "Z", BOUND_MS, "a zombie leader");
    await predecessorRecord(leader, { startTime });
    const result = await records.reapPredecessors();
    expect(result).toEqual({ reaped: [leader], skipped: [], gone: [] });
    expect(member !== undefined && alive(member)).toBe(false);
    expect(groupMembers(leader)).toEqual([]);
  });

  it("stops the members of a group whose live leader dies on SIGTERM first", async () => {
    const leader = spawnSleeper("sh", ["-c", "(trap '' TERM; exec sleep 300) & wait"]);
    await waitFor(() => groupMembers(leader.pid).length === 2, BOUND_MS, "the wrapped sleep");
    const [member] = groupMembers(leader.pid).filter((pid) => pid !== leader.pid);
    await predecessorRecord(leader.pid);
    const result = await records.reapPredecessors({ graceMs: 300 });
    expect(result.reaped).toEqual([leader.pid]);
    expect(member !== undefined && alive(member)).toBe(false);
    expect(groupMembers(leader.pid)).toEqual([]);
  });

  it("leaves what a vanished leader left in its group: the id can no longer be proven ours", async () => {
    const wrapper = spawnSleeper("sh", ["-c", "sleep 300 & wait"]);
    await waitFor(() => groupMembers(wrapper.pid).length === 2, BOUND_MS, "the wrapped sleep");
    const startTime = processStartTime(wrapper.pid);
    const [orphan] = groupMembers(wrapper.pid).filter((pid) => pid !== wrapper.pid);
    process.kill(wrapper.pid, "SIGKILL");
    // Reaped by this process, so the pid is free and its number could be anyone's next.
    await waitFor(() => readProcessStat(wrapper.pid) === undefined, BOUND_MS, "the wrapper gone");
    await predecessorRecord(wrapper.pid, { startTime });
    const result = await records.reapPredecessors({ graceMs: 100 });
    expect(result).toEqual({ reaped: [], skipped: [], gone: [wrapper.pid] });
    expect(recorded(wrapper.pid)).toBe(false);
    expect(orphan !== undefined && alive(orphan)).toBe(true);
  });

  it("escalates to SIGKILL when a child ignores SIGTERM past the grace period", async () => {
    const stubborn = spawnSleeper("sh", ["-c", "trap '' TERM; exec sleep 300"]);
    await waitFor(
      () =>
        readProcessStat(stubborn.pid) !== undefined &&
        readFileSync(`/proc/${stubborn.pid}/cmdline`, "latin1").startsWith("sleep"),
      BOUND_MS,
      "the exec",
    );
    await predecessorRecord(stubborn.pid);
    const result = await records.reapPredecessors({ graceMs: 200 });
    expect(result.reaped).toEqual([stubborn.pid]);
    expect(alive(stubborn.pid)).toBe(false);
    await waitFor(() => stubborn.signalCode !== null, BOUND_MS, "the exit to be seen");
    expect(stubborn.signalCode).toBe("SIGKILL");
  });

  it("never signals a pid that now names another process, and drops its record", async () => {
    const unrelated = spawnSleeper();
    const startTime = processStartTime(unrelated.pid);
    await predecessorRecord(unrelated.pid, { startTime: (startTime ?? 0) + 1 });
    const result = await records.reapPredecessors({ graceMs: 100 });
    expect(result).toEqual({ reaped: [], skipped: [unrelated.pid], gone: [] });
    expect(recorded(unrelated.pid)).toBe(false);
    expect(alive(unrelated.pid)).toBe(true);
    expect(processStartTime(unrelated.pid)).toBe(startTime);
    expect(unrelated.signalCode).toBeNull();
  });

  it("leaves the children of a daemon that is still running", async () => {
    const otherDaemon = spawnSleeper();
    const child = spawnSleeper();
    await predecessorRecord(child.pid, {
      daemonPid: otherDaemon.pid,
      daemonStartTime: processStartTime(otherDaemon.pid),
    });
    const result = await records.reapPredecessors({ graceMs: 100 });
    expect(result).toEqual({ reaped: [], skipped: [], gone: [] });
    expect(alive(child.pid)).toBe(true);
    expect(recorded(child.pid)).toBe(true);
  });

  it("drops the records of children already gone, and unreadable records", async () => {
    const gone = await deadPid();
    await predecessorRecord(gone, { startTime: 1 });
    writeFileSync(join(records.dir, "4242.json"), "{ not json");
    writeFileSync(join(records.dir, "4243.json"), JSON.stringify({ pid: -1, pgid: -1 }));
    const result = await records.reapPredecessors();
    expect(result).toEqual({ reaped: [], skipped: [], gone: [gone] });
    expect(readdirSync(records.dir)).toEqual([]);
  });

  it("finds nothing to do when no record was ever written", async () => {
    expect(await records.reapPredecessors()).toEqual({ reaped: [], skipped: [], gone: [] });
  });
});
