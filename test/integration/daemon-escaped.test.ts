/**
 * Escaped grandchildren: a server whose child calls setsid()
 * leaves the process group the stop ladder signals. The daemon marks every child's
 * environment (MCPOOL_DAEMON) and ends what holds its mark at `mcpool shutdown`, and a
 * successor ends what holds a dead daemon's mark when it reaps that daemon's children.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  client as poolClient,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** The pids the fixture wrote, one per start of the server. */
function grandchildren(file: string): number[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process's group, from /proc/<pid>/stat field 5. */
function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

describe("a server's grandchild that left its process group", () => {
  let home: TestHome | undefined;
  const daemons: RunningDaemon[] = [];
  let pidFile = "";

  afterEach(async () => {
    for (const daemon of daemons.splice(0)) await daemon.stop();
    for (const pid of grandchildren(pidFile)) if (alive(pid)) process.kill(pid, "SIGKILL");
    home?.remove();
  });

  /**
   * The daemon and the serving child's grandchild. On a row's first-ever dial a spare child
   * is asked the server's era first: it runs the fixture too, so its grandchild
   * escapes as well, and must be ended alike; `all` holds every escaped grandchild so far.
   */
  async function started(): Promise<{ daemon: RunningDaemon; grandchild: number; all: number[] }> {
    home = testHome("mcpool-escape-");
    pidFile = join(home.dir, "grandchildren");
    home.writeConfig({
      escape: {
        command: process.execPath,
        args: [fixture("escape.mjs")],
        env: { ESCAPE_PID_FILE: pidFile },
      },
    });
    const daemon = await startDaemon(home);
    daemons.push(daemon);
    const pool = await poolClient(home);
    let serverPid: number | undefined;
    try {
      await waitFor(
        async () => {
          const [server] = await pool.state();
          serverPid = server?.pid;
          return server?.status === "ready";
        },
        30_000,
        "the server to be ready",
      );
    } finally {
      await pool.close();
    }
    await waitFor(() => grandchildren(pidFile).length > 0, 10_000, "the grandchild's pid");
    // The serving child's is the last one written: it started after the spare's was gone.
    const all = grandchildren(pidFile);
    const grandchild = all[all.length - 1]!;
    expect(alive(grandchild)).toBe(true);
    // It did leave: another group than its server's, which the stop ladder signals.
    expect(groupOf(grandchild)).not.toBe(groupOf(serverPid!));
    return { daemon, grandchild, all };
  }

  it("is ended by `mcpool shutdown`", async () => {
    const { daemon, grandchild, all } = await started();
    expect(runCli(home!, "shutdown").code).toBe(0);
    await daemon.stop();
    await waitFor(() => !alive(grandchild), 10_000, "the grandchild to be ended");
    for (const pid of all) expect(alive(pid)).toBe(false);
    // Named in the line that ends them (with the spare's, when there was one).
    const ended = /left its server's process group: ([\d, ]+)/.exec(daemon.stderr())?.[1];
    expect(ended?.split(", ").map(Number)).toContain(grandchild);
  });

  it("is ended by the next daemon when the one that started it was killed", async () => {
    const { daemon, grandchild, all } = await started();
    await daemon.kill9();
    expect(alive(grandchild)).toBe(true);
    const next = await startDaemon(home!);
    daemons.push(next);
    await waitFor(() => all.every((pid) => !alive(pid)), 10_000, "the grandchildren to be reaped");
    // The server's next start (its era now known: no spare) has its own grandchild, which
    // the next shutdown ends.
    await waitFor(
      () => grandchildren(pidFile).length === all.length + 1,
      30_000,
      "the next grandchild",
    );
  });
});
