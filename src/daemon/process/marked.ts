/**
 * Children that left their process group. Every stdio child is
 * started with `MCPOOL_DAEMON=<mark>`, a random word per daemon, and inherits it to what it
 * spawns; a grandchild that calls setsid() leaves the group the stop ladder signals, but not
 * its environment. At shutdown, and when a successor reaps a dead daemon's children, every
 * process of this user whose environment holds the mark is ended (SIGTERM, a grace, SIGKILL).
 * Linux only (`/proc/<pid>/environ`); a process that clears its environment, or a platform
 * without /proc, escapes this: there the service's cgroup (systemd KillMode=control-group)
 * is what ends it.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { PoolLog } from "../../pool/core/types.js";

/** The variable that marks a daemon's descendants. */
export const MARK_VARIABLE = "MCPOOL_DAEMON";

/** Between SIGTERM and SIGKILL, ms: as long as a child's own stop ladder allows. */
export const MARKED_GRACE_MS = 2_000;

/** Between looks at the process table while the marked die: prompt, not a spin. */
const POLL_MS = 25;

/** A new daemon's mark: 16 random bytes, hex, so no other daemon's can match it. */
export function newMark(): string {
  return randomBytes(16).toString("hex");
}

/** The live processes of this user, other than this one, whose environment holds `mark`. */
export function markedProcesses(mark: string): number[] {
  const needle = Buffer.from(`${MARK_VARIABLE}=${mark}\0`);
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${name}`).uid !== uid) continue;
      const environ = readFileSync(`/proc/${name}/environ`);
      const at = environ.indexOf(needle);
      // The whole variable: at the start, or just after another one's NUL.
      if (at === 0 || (at > 0 && environ[at - 1] === 0)) found.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * Ends every process holding `mark`: SIGTERM, up to `graceMs` to go, then SIGKILL. Resolves
 * with the pids it signalled; logs them, as each is something that left its group.
 */
export async function endMarked(
  mark: string,
  options: { log?: PoolLog; graceMs?: number; why?: string } = {},
): Promise<number[]> {
  const { log, graceMs = MARKED_GRACE_MS, why = "left its server's process group" } = options;
  const first = markedProcesses(mark);
  if (first.length === 0) return [];
  log?.info?.(`mcpool: ending ${first.length} process(es) that ${why}: ${first.join(", ")}`);
  const signal = (name: NodeJS.Signals): void => {
    for (const pid of markedProcesses(mark)) {
      try {
        process.kill(pid, name);
      } catch {
        // Gone already.
      }
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (markedProcesses(mark).length > 0 && Date.now() < deadline) await sleep(POLL_MS);
  if (markedProcesses(mark).length > 0) {
    signal("SIGKILL");
    const killDeadline = Date.now() + graceMs;
    while (markedProcesses(mark).length > 0 && Date.now() < killDeadline) await sleep(POLL_MS);
  }
  return first;
}
