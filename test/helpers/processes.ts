/** Process-table helpers for tests: liveness from the kernel, waits bounded and event-free. */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildProcess } from "node:child_process";
import type { TestContext } from "vitest";

export const fixturesDir = fileURLToPath(new URL("../fixtures/", import.meta.url));
export const fixture = (name: string): string => join(fixturesDir, name);

/**
 * Sends `pid` SIGCONT when the test ends — also when it ran past its bound — before its fleet
 * is taken down (call it after testFleet: finish hooks run last-first), so a stopped child
 * can act on the SIGTERM that stops it.
 */
export function continueAtEnd(
  { onTestFinished }: Pick<TestContext, "onTestFinished">,
  pid: number,
): void {
  onTestFinished(() => {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  });
}

/**
 * Ends `child` with `signal` when the test ends, if it still runs, and waits for its exit;
 * called after testFleet, so before the fleet is taken down (finish hooks run last-first).
 */
export function endAtEnd(
  { onTestFinished }: Pick<TestContext, "onTestFinished">,
  child: ChildProcess,
  signal: NodeJS.Signals = "SIGKILL",
): void {
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead, only not yet reaped by its parent.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/**
 * Live processes (zombies excluded) whose /proc stat field `field` (counted after the
 * state: 1 the parent, 2 the process group) is `value`.
 */
function liveWhere(field: 1 | 2, value: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && Number(fields[field]) === value) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Members of a process group that are still alive. */
export function groupMembers(pgid: number): number[] {
  return liveWhere(2, pgid);
}

/**
 * Polls `condition` (which may ask the daemon) until true or the bound runs out; the only
 * wait tests use for the process table. `everyMs`: the pause between looks; a condition
 * that costs the daemon real work (a 200-row catalog) is asked less often, so the looking
 * does not slow down what it waits for.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Resolves with the first value `subscribe` delivers that matches, or rejects after the bound. */
export function nextMatching<T>(
  subscribe: (listener: (value: T) => void) => () => void,
  match: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for a matching value`));
    }, timeoutMs);
    const stop = subscribe((value) => {
      if (!match(value)) return;
      clearTimeout(timer);
      stop();
      resolve(value);
    });
  });
}

/** Live direct children of a process, from /proc (zombies excluded). */
export function childrenOf(pid: number): number[] {
  return liveWhere(1, pid);
}

/**
 * Live `mcpool serve` processes started for `socketPath` (an auto-started daemon carries it
 * as MCPOOL_SOCKET, daemon-start.ts), of any user: how a test counts the daemons of a socket.
 */
export function daemonsFor(socketPath: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
      const argv = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0");
      if (environ.includes(`MCPOOL_SOCKET=${socketPath}`) && argv.includes("serve")) {
        out.push(Number(name));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** SIGTERMs each of `pids` and waits (bounded) until none is left. */
export async function stopAll(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  await waitFor(() => pids.every((pid) => !alive(pid)), 20_000, "the daemons to stop");
}

/** The entry script of a reference server in devDependencies (`server-everything`, …). */
export function referenceServer(name: string): string {
  const manifest = createRequire(import.meta.url).resolve(
    `@modelcontextprotocol/${name}/package.json`,
  );
  return join(dirname(manifest), "dist/index.js");
}

/**
 * server-everything (its `alwaysLoad` as given) and server-memory (its file in `dataDir`) as
 * mcp.json rows.
 */
export function referenceRows(dataDir: string, alwaysLoad?: string[]) {
  const node = process.execPath;
  return {
    everything: {
      command: node,
      args: [referenceServer("server-everything")],
      ...(alwaysLoad !== undefined ? { alwaysLoad } : {}),
    },
    memory: {
      command: node,
      args: [referenceServer("server-memory")],
      env: { MEMORY_FILE_PATH: join(dataDir, "memory.jsonl") },
    },
  };
}
