/**
 * An edit of mcp.json while a hand-over is under way is not reconciled in the middle of it:
 * the hand-over holds the old daemon's reconcile queue from its first step to its last. Here
 * the new daemon is held at a gate while the old one has handed everything, and mcp.json
 * loses one row and changes another's args; the gate opens only once the old daemon has
 * come to the edit — its log says the reconcile waits, or says it read the file (what an old
 * daemon that reconciles in the middle of a hand-over does), whichever comes first. If the
 * new daemon fails, the old one serves on and reconciles the edit only then; if it takes
 * over, it reads the edit itself, and the old one stops none of the children it adopted (the
 * unchanged row's counter counts on). The edited row's children are started only by the
 * daemon that serves after the hand-over: each writes its parent's pid as it starts.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import type { RunningDaemon, TestHome } from "../helpers/daemon.js";
import { cleanupsAtEnd, gatedDaemon, heldRestart, type restart } from "../helpers/handover-gate.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };
const rows = { kept: counter, gone: counter, changed: counter };
/**
 * The edit made while the hand-over is held: `gone` removed, `changed` given other args —
 * a shell that appends its parent's pid (the daemon that starts it) to `started`, then runs
 * the counter.
 */
function edited(started: string) {
  const script = `echo "$PPID" >> "$0"; exec "$1" "$2" edited`;
  const args = ["-c", script, started, process.execPath, fixture("counter.mjs")];
  return { kept: counter, changed: { command: "/bin/sh", args } };
}

/** What the old daemon logs when a reconcile asked for during the hand-over waits for it. */
const WAITS = "asked for during the hand-over waits for it to end";
/** What a daemon logs as it reads mcp.json again: a reconcile under way. */
const RELOADED = "mcpool: reloaded";

/**
 * The pids of the daemons that started a child of the edited row, each once (a daemon may
 * start more than one: a first dial's probe of the server's era, then the child it keeps).
 */
function startedBy(started: string): number[] {
  if (!existsSync(started)) return [];
  const pids = readFileSync(started, "utf8").split("\n").filter(Boolean).map(Number);
  return [...new Set(pids)];
}

/** Row `id`'s child: its count and pid after one more `count` (`counter.mjs`). */
async function count(agent: PoolClient, id: string): Promise<[number, number]> {
  const [n, pid] = (await agent.call(`${id}__count`, {})).split(" ");
  return [Number(n), Number(pid)];
}

/** The process is gone, reaped: a signal to it fails with ESRCH. */
function reaped(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** What `agent`'s daemon runs: each row's args and pid. */
async function running(agent: PoolClient): Promise<Map<string, { args: string; pid?: number }>> {
  const state = await agent.state();
  return new Map(
    state.map((s) => [
      s.id,
      {
        args: JSON.stringify((s.config as { args?: string[] }).args),
        ...(s.pid !== undefined ? { pid: s.pid } : {}),
      },
    ]),
  );
}

/**
 * Each row counted once (so each child runs, and `kept` holds a count of 1), then a restart
 * held at the gate once the old daemon has let go, and mcp.json edited then. Returns once the
 * old daemon has come to the edit: the first of its log lines that say so after the edit must
 * be that its reconcile waits for the hand-over.
 */
async function editedWhileHeld(
  fleet: Fleet,
  h: TestHome,
  old: RunningDaemon,
  started: Promise<Socket>,
): Promise<{
  pids: Record<string, number>;
  restarting: ReturnType<typeof restart>;
  gate: Socket;
  edit: string;
}> {
  const before = await fleet.agent(h, "before");
  const pids: Record<string, number> = {};
  for (const id of Object.keys(rows)) {
    const [n, pid] = await count(before, id);
    expect(n).toBe(1);
    pids[id] = pid;
  }
  const { restarting, gate } = await heldRestart(h, old, started);
  const edit = join(h.dir, "edited-row-started");
  const from = old.stderr().length;
  h.writeConfig(edited(edit));
  const seen = (): string[] =>
    old
      .stderr()
      .slice(from)
      .split("\n")
      .filter((line) => line.includes(WAITS) || line.includes(RELOADED));
  await waitFor(() => seen().length > 0, 20_000, "the old daemon to come to the edit");
  expect(seen()[0]).toContain(WAITS);
  expect(startedBy(edit)).toEqual([]);
  return { pids, restarting, gate, edit };
}

// Each test its own home, daemon and gate: they run side by side, each with a longer bound.
describe.concurrent("an edit of mcp.json while a hand-over is held", { timeout: 90_000 }, () => {
  it("is reconciled by the old daemon once it serves again, when the new one fails", async (context) => {
    const fleet = testFleet(context);
    const cleanups = cleanupsAtEnd(context);
    const h = fleet.home();
    h.writeConfig(rows);
    const { old, started } = await gatedDaemon(h, cleanups);
    try {
      const { pids, restarting, gate, edit } = await editedWhileHeld(fleet, h, old, started);
      gate.end("fail\n");

      const done = await restarting;
      expect(done.code).toBe(1);
      expect(done.stderr).toContain("the new daemon did not take over");
      const after = await fleet.agent(h, "after");
      expect((await after.status()).pid).toBe(old.pid);
      // The edit is read after the hand-over failed, never in the middle of it.
      // The changed row's new child replaces the first once it serves.
      const applied = async (): Promise<boolean> => {
        const now = await running(after);
        const changed = now.get("changed")?.pid;
        return !now.has("gone") && changed !== undefined && changed !== pids.changed;
      };
      await waitFor(applied, 20_000, "the old daemon to reconcile the edit");
      const log = old.stderr();
      expect(log.indexOf(RELOADED)).toBeGreaterThan(log.indexOf("the hand-over failed"));
      await waitFor(() => reaped(pids.gone as number), 20_000, "the removed row's child to go");
      // The unchanged row's child served on: same process, its count goes on.
      expect(await count(after, "kept")).toEqual([2, pids.kept]);
      const [n, changedPid] = await count(after, "changed");
      expect([n, changedPid === pids.changed]).toEqual([1, false]);
      expect((await running(after)).get("changed")?.args).toContain("edited");
      expect(startedBy(edit)).toEqual([old.pid]);
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);

  it("is read by the new daemon, and the old one stops none of the children it adopted", async (context) => {
    const fleet = testFleet(context);
    const cleanups = cleanupsAtEnd(context);
    const h = fleet.home();
    h.writeConfig(rows);
    const { old, started } = await gatedDaemon(h, cleanups);
    try {
      const { pids, restarting, gate, edit } = await editedWhileHeld(fleet, h, old, started);
      gate.end("go\n");

      const done = await restarting;
      expect(done.stderr).toBe("");
      expect(done.code).toBe(0);
      const handed = JSON.parse(done.stdout) as { pid: number; adopted: string[] };
      expect(handed.adopted).toEqual(["kept"]);
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");
      // The old daemon read none of the edit; a reload in the log (the new daemon's, sharing
      // its stderr) comes only after the hand-over went through.
      const log = old.stderr();
      const reload = log.indexOf(RELOADED);
      expect(reload === -1 || reload > log.indexOf("mcpool: handed over to pid")).toBe(true);
      const after = await fleet.agent(h, "after");
      expect((await after.status()).pid).toBe(handed.pid);
      const now = await running(after);
      expect([...now.keys()].sort()).toEqual(["changed", "kept"]);
      expect(now.get("changed")?.args).toContain("edited");
      // Adopted, and not stopped by the old daemon's exit: same process, its count goes on.
      expect(await count(after, "kept")).toEqual([2, pids.kept]);
      const [n, changedPid] = await count(after, "changed");
      expect([n, changedPid === pids.changed]).toEqual([1, false]);
      expect(startedBy(edit)).toEqual([handed.pid]);
      await waitFor(() => !alive(pids.gone as number), 20_000, "the removed row's child to stop");
      await waitFor(
        () => !alive(pids.changed as number),
        20_000,
        "the changed row's first child to stop",
      );
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);
});
