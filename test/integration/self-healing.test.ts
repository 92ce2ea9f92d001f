/**
 * Self-healing in the pool, with real children killed and stopped for real:
 * a healthy server that dies comes back at once and keeps its tools offered; one that dies
 * right after each start backs off; a read cut off by a crash is sent again once; a hung
 * server is found by a ping and replaced; a call made before the first reconcile waits.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { McpPool, McpPoolError, type McpServerConfig, type PoolEvent } from "../../src/index.js";
import { nodeRow, poolMaker } from "../helpers/stdio-pool.js";
import { alive, nextMatching, waitFor } from "../helpers/processes.js";

const { pool, made: pools } = poolMaker();
const node = nodeRow;
const stopped: number[] = [];
/** Starts of a child that dies at once, each of which must be explained alike. */
const STARTS = 8;

function stateOf(p: McpPool, id: string) {
  const state = p.state().find((s) => s.id === id);
  if (!state) throw new Error(`no server ${id}`);
  return state;
}

function pidOf(p: McpPool, id: string): number {
  const pid = stateOf(p, id).pid;
  if (pid === undefined) throw new Error(`${id} has no pid`);
  return pid;
}

function next(p: McpPool, match: (event: PoolEvent) => boolean): Promise<PoolEvent> {
  return nextMatching<PoolEvent>((listener) => p.onEvent(listener), match);
}

afterEach(async () => {
  // A stopped process would never see its stop ladder's SIGTERM: wake it first.
  for (const pid of stopped.splice(0)) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  }
  const pids = pools.flatMap((p) => p.state().flatMap((s) => (s.pid ? [s.pid] : [])));
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const pid of pids) await waitFor(() => !alive(pid), 10_000, `pid ${pid} to be gone`);
});

describe("crash recovery", () => {
  it("brings a healthy eager server back at once after each SIGKILL, its tools offered all along", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("echo", "crash.mjs")]);
    for (let round = 0; round < 3; round += 1) {
      // Healthy: it answered a call since it started.
      expect(await p.call("echo__echo", { text: `round ${round}` })).toBe(`round ${round}`);
      const before = pidOf(p, "echo");
      const crashed = next(p, (e) => e.type === "close" && e.reason === "crash");
      const back = next(p, (e) => e.type === "connect" && e.recovered === true);
      process.kill(before, "SIGKILL");
      await crashed;
      // Between the crash and the redial the last-known tools stay in the catalog.
      expect(p.tools().map((t) => t.function.name)).toContain("echo__echo");
      expect(p.search("echo").flatMap((s) => s.tools.map((t) => t.name))).toContain("echo__echo");
      await back;
      const state = stateOf(p, "echo");
      expect(state.status).toBe("ready");
      expect(state.pid).not.toBe(before);
      // No penalty grows with the number of crashes of a server that ran fine in between.
      expect(state.retryAt).toBeUndefined();
      expect(state.stale).toBeUndefined();
    }
  });

  it("makes a call to a server that is coming back wait for the redial instead of failing", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("echo", "crash.mjs")]);
    expect(await p.call("echo__echo", { text: "warm" })).toBe("warm");
    const before = pidOf(p, "echo");
    const crashed = next(p, (e) => e.type === "close" && e.reason === "crash");
    process.kill(before, "SIGKILL");
    await crashed;
    expect(stateOf(p, "echo").stale).toBe(true);
    expect(await p.call("echo__echo", { text: "after" })).toBe("after");
    expect(pidOf(p, "echo")).not.toBe(before);
  });

  it("brings a lazy row back on its next use, not by itself", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("echo", "crash.mjs", { lazy: true })]);
    expect(await p.call("echo__echo", { text: "wake" })).toBe("wake");
    const crashed = next(p, (e) => e.type === "close" && e.reason === "crash");
    process.kill(pidOf(p, "echo"), "SIGKILL");
    await crashed;
    const state = stateOf(p, "echo");
    expect(state.pid).toBeUndefined();
    expect(state.retryAt).toBeUndefined();
    expect(p.tools().map((t) => t.function.name)).toContain("echo__echo");
    expect(await p.call("echo__echo", { text: "again" })).toBe("again");
  });

  it("backs off a server that dies right after each start, retries by itself, and says crash-loop", async () => {
    const p = pool({ crashBackoffMs: 50 });
    const failures: PoolEvent[] = [];
    p.onEvent((event) => {
      if (event.type === "connect-failed") failures.push(event);
    });
    await p.sync([node("dies", "crash.mjs", { env: { CRASH_ON_START: "1" } })]);
    // Nobody calls: the pool retries on its own, each time later (50, 100, 200 ms…).
    await waitFor(() => stateOf(p, "dies").status === "crash-loop", 15_000, "crash-loop");
    const state = stateOf(p, "dies");
    expect(state.error).toMatch(/no module named fixture_missing/);
    expect(state.retryAt).toBeGreaterThan(Date.now());
    expect(failures.length).toBeGreaterThanOrEqual(3);
    const refused = await p.call("dies__echo", {}).catch((e: unknown) => e);
    expect((refused as McpPoolError).code).toBe("backoff");
  });
});

/**
 * Holds this process (and the pool in it) until `pid` has exited — a zombie, not yet reaped,
 * since reaping needs the event loop held here: what a pool on a loaded machine does when a
 * child dies at once and the pool's first write comes after.
 */
function holdUntilExited(pid: number, boundMs = 10_000): void {
  const deadline = Date.now() + boundMs;
  const state = (): string | undefined => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    } catch {
      return undefined; // reaped: gone
    }
  };
  while (Date.now() < deadline) {
    const now = state();
    if (now === undefined || now === "Z") return;
  }
  throw new Error(`pid ${pid} did not exit within ${boundMs} ms`);
}

describe("a server that dies before the pool writes to it", () => {
  it("says the child's exit and stderr, not the EPIPE of the handshake's write", async () => {
    const p = pool({
      crashBackoffMs: 60_000,
      onChild: (event) => {
        if (event.type === "spawn") holdUntilExited(event.pid);
      },
    });
    const script = `echo 'boom: no module named fixture_missing' >&2; exit 1`;
    const row = { id: "dies", transport: "stdio", command: "/bin/sh", args: ["-c", script] };
    await p.sync([row as McpServerConfig]);
    // Whether the failed write or the child's end is seen first is the event loop's to pick:
    // each start must say the same.
    const errors: (string | undefined)[] = [];
    for (let start = 0; start < STARTS; start += 1) {
      if (start > 0) await p.reconnect("dies").catch(() => undefined);
      await waitFor(() => stateOf(p, "dies").status !== "connecting", 15_000, "the failed start");
      errors.push(stateOf(p, "dies").error);
    }
    for (const error of errors) {
      expect(error).toMatch(/exited with code 1/);
      expect(error).toMatch(/no module named fixture_missing/);
    }
  });
});

describe("calls cut off by a crash", () => {
  it("sends a trusted read-only call again, once, to the new child", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("crashy", "crash.mjs", { trustAnnotations: true })]);
    const before = pidOf(p, "crashy");
    const pending = p.call("crashy__read", { ms: 5_000 });
    await waitFor(() => (stateOf(p, "crashy").inflight ?? 0) > 0, 10_000, "the call in flight");
    process.kill(before, "SIGKILL");
    const answer = await pending;
    expect(answer).toMatch(/^read by \d+$/);
    expect(answer).not.toBe(`read by ${before}`);
  }, 60_000);

  it("fails any other cut-off call with server-crashed, saying the tool may have run", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("crashy", "crash.mjs")]);
    const before = pidOf(p, "crashy");
    // read-only, but the row does not trust annotations: not sent again.
    const pending = p.call("crashy__read", { ms: 30_000 }).catch((e: unknown) => e);
    await waitFor(() => (stateOf(p, "crashy").inflight ?? 0) > 0, 10_000, "the call in flight");
    process.kill(before, "SIGKILL");
    const error = (await pending) as McpPoolError;
    expect(error).toBeInstanceOf(McpPoolError);
    expect(error.code).toBe("server-crashed");
    expect(error.message).toMatch(/crashy.*may have run/);
  });
});

describe("calls written to a child that just died", () => {
  /**
   * Kills the child and returns once the kernel has it dead, without yielding to the event
   * loop: the pool has not yet heard of the exit, so the next call's write meets a closed pipe.
   */
  function killUnheard(pid: number): void {
    process.kill(pid, "SIGKILL");
    const deadline = Date.now() + 10_000;
    while (alive(pid)) {
      if (Date.now() > deadline) throw new Error(`pid ${pid} outlived SIGKILL`);
    }
  }

  it("sends a trusted read whose write found the pipe broken again, to the new child", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("crashy", "crash.mjs", { trustAnnotations: true })]);
    expect(await p.call("crashy__echo", { text: "warm" })).toBe("warm");
    const before = pidOf(p, "crashy");
    killUnheard(before);
    const answer = await p.call("crashy__read", { ms: 1 });
    expect(answer).toMatch(/^read by \d+$/);
    expect(answer).not.toBe(`read by ${before}`);
  });

  it("fails any other call whose write found the pipe broken with server-crashed", async () => {
    const p = pool({ crashBackoffMs: 60_000 });
    await p.sync([node("crashy", "crash.mjs", { trustAnnotations: true })]);
    expect(await p.call("crashy__echo", { text: "warm" })).toBe("warm");
    killUnheard(pidOf(p, "crashy"));
    const error = await p.call("crashy__echo", { text: "lost" }).catch((e: unknown) => e);
    expect((error as McpPoolError).code).toBe("server-crashed");
    // The crash was taken as one: the server is back by itself and serves the next call.
    expect(await p.call("crashy__echo", { text: "again" })).toBe("again");
  });
});

describe("hung servers", () => {
  it("finds a SIGSTOPped server by a ping after a timeout, shows it unresponsive, replaces it", async () => {
    const p = pool({ crashBackoffMs: 60_000, pingTimeoutMs: 300 });
    await p.sync([node("frozen", "crash.mjs"), node("other", "echo.mjs")]);
    expect(await p.call("frozen__echo", { text: "warm" })).toBe("warm");
    const before = pidOf(p, "frozen");
    const otherPid = pidOf(p, "other");
    const seen: PoolEvent[] = [];
    p.onEvent((event) => {
      if (event.serverId === "frozen") seen.push(event);
    });
    const unresponsive = next(p, (e) => e.type === "unresponsive");
    const back = next(p, (e) => e.type === "connect" && e.recovered === true);
    process.kill(before, "SIGSTOP");
    stopped.push(before);
    // A second call in flight on the hung child: it fails with timeout too.
    const other = p.call("frozen__echo", { text: "b" }, { timeoutMs: 60_000 }).catch((e) => e);
    const error = await p.call("frozen__echo", { text: "a" }, { timeoutMs: 300 }).catch((e) => e);
    expect((error as McpPoolError).code).toBe("timeout");
    await unresponsive;
    expect((await other).code).toBe("timeout");
    await back;
    expect(seen.map((e) => e.type)).toEqual(
      expect.arrayContaining(["unresponsive", "close", "connect"]),
    );
    expect(stateOf(p, "frozen").status).toBe("ready");
    expect(pidOf(p, "frozen")).not.toBe(before);
    expect(await p.call("frozen__echo", { text: "served" })).toBe("served");
    // The stop ladder reached SIGKILL, which a stopped process cannot ignore.
    await waitFor(() => !alive(before), 15_000, "the stopped child to be killed");
    expect(pidOf(p, "other")).toBe(otherPid);
  }, 60_000);

  it("leaves a server that is only slow alone: it answers the ping", async () => {
    const p = pool({ pingTimeoutMs: 5_000 });
    await p.sync([node("slow", "crash.mjs")]);
    const before = pidOf(p, "slow");
    const error = await p.call("slow__sleep", { ms: 2_000 }, { timeoutMs: 100 }).catch((e) => e);
    expect((error as McpPoolError).code).toBe("timeout");
    expect(await p.call("slow__echo", { text: "still here" })).toBe("still here");
    expect(stateOf(p, "slow").status).toBe("ready");
    expect(pidOf(p, "slow")).toBe(before);
  });
});

describe("readiness", () => {
  it("answers a call made before the first reconcile has finished, instead of unknown-tool", async () => {
    const p = pool();
    const syncing = p.sync([node("a", "echo.mjs"), node("b", "echo.mjs"), node("c", "echo.mjs")]);
    const answers = await Promise.all([
      p.call("a__echo", { text: "1" }),
      p.call("b__echo", { text: "2" }),
      p.call("c__echo", { text: "3" }),
    ]);
    expect(answers).toEqual(["1", "2", "3"]);
    await syncing;
  });

  it("makes ready() wait for the first reconcile, so a listing holds every eager server", async () => {
    const p = pool();
    void p.sync([node("a", "echo.mjs"), node("b", "crash.mjs")]);
    await p.ready();
    const names = p.tools().map((t) => t.function.name);
    expect(names).toContain("a__echo");
    expect(names).toContain("b__read");
  });

  it("still refuses a name nothing offers once the pool is ready", async () => {
    const p = pool();
    await p.sync([node("a", "echo.mjs")]);
    const error = await p.call("a__nope", {}).catch((e: unknown) => e);
    expect((error as McpPoolError).code).toBe("unknown-tool");
  });
});
