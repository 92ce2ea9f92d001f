/**
 * What a stdio server's process group costs: the CPU time and resident memory of
 * every process in the group its child leads (children are started as group leaders,
 * so a server that forks a helper is counted whole). Linux reads /proc; macOS asks `ps`.
 * Nothing here runs unless asked: the caller samples while someone looks or a memory limit
 * is set, so an idle daemon stays idle.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

/** One process group at one moment. */
export interface GroupSample {
  /** CPU time (user + system) of the group's live processes, seconds. */
  cpuSeconds: number;
  rssBytes: number;
  processes: number;
  /**
   * The group's leader, the server itself, is stopped (SIGSTOP, SIGTSTP, a debugger): it
   * reads nothing and answers nothing until it is continued.
   */
  stopped: boolean;
  /** Epoch ms the sample was taken. */
  at: number;
}

/**
 * Ticks per second of /proc's utime/stime: USER_HZ, which the kernel fixes at 100 for every
 * userspace ABI whatever its internal HZ (see proc(5), "clock ticks").
 */
const USER_HZ = 100;

/** Fields of /proc/PID/stat counted from the one after `(comm)`. */
const STAT = { state: 0, pgrp: 2, utime: 11, stime: 12 } as const;

/** A process state that means stopped: by a signal (`T`), or at a tracer's stop (`t`). */
const isStoppedState = (state: string | undefined): boolean => /^[Tt]/.test(state ?? "");

/** `ps` answers in well under this on any machine; a hung `ps` must not hang a status. */
const PS_TIMEOUT_MS = 5_000;

/** Samples the groups led by `pgids`; a group with no live process is left out. */
export async function sampleGroups(pgids: readonly number[]): Promise<Map<number, GroupSample>> {
  if (pgids.length === 0) return new Map();
  if (process.platform === "linux") return sampleProc(new Set(pgids));
  if (process.platform === "darwin") return samplePs(new Set(pgids));
  return new Map();
}

async function sampleProc(wanted: ReadonlySet<number>): Promise<Map<number, GroupSample>> {
  const at = Date.now();
  const names = await readdir("/proc").catch(() => [] as string[]);
  const out = new Map<number, GroupSample>();
  await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        // A process may be gone between readdir and read: it is simply not counted.
        const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => undefined);
        if (stat === undefined) return;
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const pgrp = Number(fields[STAT.pgrp]);
        if (!wanted.has(pgrp)) return;
        const ticks = Number(fields[STAT.utime]) + Number(fields[STAT.stime]);
        const rssKb = await residentKb(name);
        const group = out.get(pgrp) ?? emptyGroup(at);
        if (Number(name) === pgrp) group.stopped = isStoppedState(fields[STAT.state]);
        group.cpuSeconds += ticks / USER_HZ;
        group.rssBytes += rssKb * 1024;
        group.processes += 1;
        out.set(pgrp, group);
      }),
  );
  return out;
}

function emptyGroup(at: number): GroupSample {
  return { cpuSeconds: 0, rssBytes: 0, processes: 0, stopped: false, at };
}

/** VmRSS from /proc/PID/status: in kB whatever the page size (stat's rss is in pages). */
async function residentKb(pid: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) : 0;
}

async function samplePs(wanted: ReadonlySet<number>): Promise<Map<number, GroupSample>> {
  const at = Date.now();
  const text = await new Promise<string>((resolve) => {
    execFile(
      "ps",
      ["-A", "-o", "pid=,pgid=,rss=,time=,stat="],
      { timeout: PS_TIMEOUT_MS },
      (error, stdout) => resolve(error ? "" : stdout),
    );
  });
  const out = new Map<number, GroupSample>();
  for (const line of text.split("\n")) {
    const [pid, pgid, rss, time, state] = line.trim().split(/\s+/);
    const pgrp = Number(pgid);
    if (!wanted.has(pgrp)) continue;
    const group = out.get(pgrp) ?? emptyGroup(at);
    if (Number(pid) === pgrp) group.stopped = isStoppedState(state);
    group.cpuSeconds += psSeconds(time ?? "");
    group.rssBytes += Number(rss) * 1024;
    group.processes += 1;
    out.set(pgrp, group);
  }
  return out;
}

/** `ps`'s cumulative time, `[[dd-]hh:]mm:ss.cc`, in seconds. */
export function psSeconds(time: string): number {
  const [days, rest] = time.includes("-") ? time.split("-") : ["0", time];
  const parts = (rest ?? "").split(":").map(Number);
  const seconds = parts.reduce((total, part) => total * 60 + part, 0);
  const total = Number(days) * 86_400 + seconds;
  return Number.isFinite(total) ? total : 0;
}

/**
 * CPU % of one core between two samples of the same group; without an earlier sample, the
 * average since the process started (`startedAt`), which a one-shot `status` can show.
 */
export function cpuPercent(
  now: GroupSample,
  before: GroupSample | undefined,
  startedAt: number | undefined,
): number | undefined {
  if (before !== undefined && now.at > before.at && now.cpuSeconds >= before.cpuSeconds) {
    return round1((100 * (now.cpuSeconds - before.cpuSeconds) * 1000) / (now.at - before.at));
  }
  if (startedAt === undefined || now.at <= startedAt) return undefined;
  return round1((100 * now.cpuSeconds * 1000) / (now.at - startedAt));
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
