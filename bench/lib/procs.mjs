/**
 * The process table from /proc (Linux): trees, RSS, context switches, and the cleanup net.
 * Every process a bench starts carries BENCH_MARK in its environment (children inherit
 * it), so whatever a failed run leaves behind is found by that mark and killed by pid.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

const MARK_NAME = "MCPOOL_BENCH_RUN";
/** Set once per bench process; inherited by every process it starts. */
process.env[MARK_NAME] ??= randomUUID();
export const BENCH_MARK = `${MARK_NAME}=${process.env[MARK_NAME]}`;

function readStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

function allPids() {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

export function alive(pid) {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== "Z";
}

/** Live descendants of `root` (not root itself), by parent links. */
export function descendants(root) {
  const children = new Map();
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (!stat || stat.state === "Z") continue;
    if (!children.has(stat.ppid)) children.set(stat.ppid, []);
    children.get(stat.ppid).push(pid);
  }
  const out = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift();
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

function statusField(pid, field) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "latin1");
    const match = new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(text);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Resident set size in MB (VmRSS). 0 for a process that is gone. */
export function rssMB(pid) {
  return statusField(pid, "VmRSS") / 1024;
}

/** Sum of VmRSS over `pids`, MB. */
export function totalRssMB(pids) {
  return pids.reduce((sum, pid) => sum + rssMB(pid), 0);
}

/**
 * Proportional set size in MB (`Pss:` of /proc/<pid>/smaps_rollup): each shared page
 * counted once across the processes sharing it, so a sum over processes is what they
 * cost together. 0 for a process that is gone.
 */
export function pssMB(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "latin1");
    return Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Sum of Pss over `pids`, MB. */
export function totalPssMB(pids) {
  return pids.reduce((sum, pid) => sum + pssMB(pid), 0);
}

/**
 * Context switches (voluntary + involuntary) and scheduler timeslices over every thread
 * of `pid`: /proc/<pid>/status alone counts only the main thread, and libuv's and V8's
 * threads wake too.
 */
export function wakeups(pid) {
  let voluntary = 0;
  let involuntary = 0;
  let timeslices = 0;
  let runNs = 0;
  let threads = 0;
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tasks) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "latin1");
      voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const [run, , slices] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "latin1")
        .trim()
        .split(" ")
        .map(Number);
      runNs += run;
      timeslices += slices;
      threads += 1;
    } catch {
      // a thread that ended while we looked
    }
  }
  return { voluntary, involuntary, switches: voluntary + involuntary, timeslices, runNs, threads };
}

/** Processes other than this one that carry this run's mark. */
export function marked() {
  const out = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
      if (environ.split("\0").includes(BENCH_MARK) && alive(pid)) out.push(pid);
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

export function kill(pid, signal = "SIGKILL") {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs every live process carrying this run's mark; returns their pids. */
export function sweep() {
  const left = marked();
  for (const pid of left) kill(pid);
  return left;
}

/** Polls `condition` every `everyMs` until true or `timeoutMs` passes; false on timeout. */
export async function until(condition, timeoutMs, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return true;
}

/** The CPU time `pid`'s threads have run so far, µs: schedstat counts it in ns, not ticks. */
export function cpuUs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "latin1").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1000;
}
