/**
 * Fault promises no other test proved (test/faults.ts maps every promise to its tests),
 * each through a real daemon: a socket path too long for sun_path, ten daemons started at
 * once, a child SIGKILLed under several agents' calls or SIGSTOPped beside a busy neighbour,
 * a child flooding stderr or writing one endless stdout line, a remote that stays down,
 * atomic saves in a row, and a burst of edits. Measured with the process table, exit codes,
 * the daemon's status, log and RSS, never with sleeps.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, type TestContext } from "vitest";
import type { PoolClient, PoolEvent } from "mcpool-client";
import { cliPath } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, fixture, nextMatching, waitFor } from "../helpers/processes.js";

// Every wait in this file is bounded by this, well under vitest's own timeout.
const BOUND_MS = 20_000;
// sun_path is 108 bytes on Linux, its NUL included (104 on macOS).
const SOCKET_PATH_LIMIT = process.platform === "darwin" ? 103 : 107;
// How many daemons the identity race starts at once (ten daemons within 50 ms → exactly one serves).
const RACERS = 10;
// Ten cold node starts on a loaded 2-core machine take seconds each before the lock decides.
const RACE_BOUND_MS = 50_000;
// What the flooding child writes to stderr, against the growth the daemon may show for it:
// without a capped tail, the daemon would hold the whole flood.
const FLOOD_MIB = 384;
const RSS_GROWTH_BOUND_MIB = 128;
// A child's stdout line cap (stdio-transport.ts), and a line far past it.
const LINE_CAP_MIB = 64;
const HUGE_LINE_MIB = 768;
// Attempts on a remote that stays down, its backoff doubling from 50 ms: ~6 s in all.
const REMOTE_ATTEMPTS = 7;

/** `child` ended (SIGTERM) when the test ends, before its fleet is taken down (hooks run last-first). */
function endAtEnd({ onTestFinished }: TestContext, child: ChildProcess): void {
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  });
}

const echoRow = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [fixture("echo.mjs")],
  ...extra,
});

/** Polls state() until every id in `ids` is ready; resolves with their pids. */
async function ready(c: PoolClient, ids: string[]): Promise<Record<string, number>> {
  let pids: Record<string, number> = {};
  await waitFor(
    async () => {
      const state = await c.state();
      pids = Object.fromEntries(
        state.filter((s) => s.status === "ready" && s.pid).map((s) => [s.id, s.pid!]),
      );
      return ids.every((id) => pids[id] !== undefined);
    },
    BOUND_MS,
    `${ids.join(", ")} ready`,
  );
  return pids;
}

/** Live processes whose environment holds `marker`, from /proc. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(marker))
        found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "latin1").match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for ${pid}`);
  return Number(line[1]) * 1024;
}

// Each test its own home and daemon: the tests of a block run side by side, each with a longer
// bound. The configuration tests run one at a time: their subject is how the daemon follows
// edits in a burst, and their counts of restarts should not meet other daemons' starts.
describe.concurrent("the socket and the daemon's identity", { timeout: 90_000 }, () => {
  it("refuses a socket path longer than sun_path before listening, naming it, and creates nothing", (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    const socketPath = join(h.dir, "s".repeat(SOCKET_PATH_LIMIT), "mcpool.sock");
    const run = spawnSync(process.execPath, [cliPath, "serve"], {
      env: { ...h.env, MCPOOL_SOCKET: socketPath },
      encoding: "utf8",
      timeout: BOUND_MS,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(socketPath);
    expect(run.stderr).toMatch(
      new RegExp(`${Buffer.byteLength(socketPath)} bytes, over the ${SOCKET_PATH_LIMIT}-byte`),
    );
    // Neither the directory nor a socket at the path the kernel would have cut it to.
    expect(existsSync(join(h.dir, "s".repeat(SOCKET_PATH_LIMIT)))).toBe(false);
    expect(existsSync(socketPath.slice(0, SOCKET_PATH_LIMIT))).toBe(false);
  });

  it("refuses a runtime directory that is a symlink, naming it, and leaves its target as it was", (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    const target = join(h.dir, "elsewhere");
    mkdirSync(target, { mode: 0o755 });
    chmodSync(target, 0o755);
    symlinkSync(target, join(h.dir, "run"));
    const run = spawnSync(process.execPath, [cliPath, "serve"], {
      env: h.env,
      encoding: "utf8",
      timeout: BOUND_MS,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(join(h.dir, "run"));
    expect(statSync(target).mode & 0o777).toBe(0o755);
    expect(readdirSync(target)).toEqual([]);
  });

  it("tightens a runtime directory of ours from 0755 to 0700 before it serves", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    h.writeConfig({});
    const runtime = join(h.dir, "run");
    mkdirSync(runtime);
    chmodSync(runtime, 0o755);
    const d = await fleet.daemon(h);
    expect(statSync(runtime).mode & 0o777).toBe(0o700);
    expect(d.stderr()).toContain(`tightened ${runtime} to 0700`);
    // The line comes before the one that says it serves.
    expect(d.stderr().indexOf("tightened")).toBeLessThan(d.stderr().indexOf("serving "));
  });

  it(
    "lets exactly one of ten `mcpool serve` started at once serve; the nine others exit 0 naming it",
    async (context) => {
      const fleet = testFleet(context);
      const h = fleet.home("mcpool-faults-");
      h.writeConfig({});
      const racers = Array.from({ length: RACERS }, () => {
        const child = spawn(process.execPath, [cliPath, "serve"], {
          env: h.env,
          stdio: ["ignore", "ignore", "pipe"],
        });
        endAtEnd(context, child);
        const racer = { child, stderr: "", code: undefined as number | null | undefined };
        child.stderr.on("data", (chunk: Buffer) => (racer.stderr += chunk.toString()));
        child.once("exit", (code) => (racer.code = code));
        return racer;
      });
      await waitFor(
        () => racers.filter((r) => r.code !== undefined).length === RACERS - 1,
        RACE_BOUND_MS,
        "nine racers to give way",
      );
      const [winner, ...others] = racers.filter((r) => r.code === undefined);
      expect(others).toEqual([]);
      const c = await fleet.agent(h);
      expect((await c.status()).pid).toBe(winner!.child.pid);
      for (const loser of racers.filter((r) => r !== winner)) {
        expect(loser.code, loser.stderr).toBe(0);
        expect(loser.stderr).toMatch(/already running/);
        expect(loser.stderr).toContain(String(winner!.child.pid));
      }
      // The winner is this test's own daemon, not the fleet's: it stops here, before the
      // fleet removes the home (a running daemon re-creates a removed socket folder, and the
      // removal then meets a folder that is not empty).
      await c.close();
      const exited = new Promise((resolve) => winner!.child.once("exit", resolve));
      winner!.child.kill("SIGTERM");
      await exited;
    },
    2 * RACE_BOUND_MS,
  );
});

describe.concurrent("children", { timeout: 90_000 }, () => {
  it("fails each agent's call in flight once when its child is SIGKILLed, with its stderr tail, other servers untouched", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    // crash.mjs, after a line on stderr that must come back with the crash.
    const wrapper = join(h.dir, "say-then-serve.mjs");
    writeFileSync(
      wrapper,
      `process.stderr.write("last words of the killed child\\n");\n` +
        `await import(${JSON.stringify(pathToFileURL(fixture("crash.mjs")).href)});\n`,
    );
    h.writeConfig(
      { victim: { command: process.execPath, args: [wrapper] }, bystander: echoRow() },
      { mcpool: { crashBackoffMs: 60_000 } },
    );
    await fleet.daemon(h);
    const observer = await fleet.agent(h, "observer");
    const before = await ready(observer, ["victim", "bystander"]);
    const callers = await Promise.all([1, 2, 3].map((i) => fleet.agent(h, `caller-${i}`)));
    const calls = callers.map((c) =>
      c.call("victim__sleep", { ms: 60_000 }).then(
        (answer) => answer,
        (error: unknown) => error,
      ),
    );
    await waitFor(
      async () => (await observer.state()).find((s) => s.id === "victim")?.inflight === 3,
      BOUND_MS,
      "three calls in flight",
    );
    const crash = nextMatching<PoolEvent>(
      (l) => observer.onEvent(l),
      (e) => e.type === "close" && e.serverId === "victim" && e.reason === "crash",
      BOUND_MS,
    );
    process.kill(before.victim!, "SIGKILL");
    const closed = (await crash) as Extract<PoolEvent, { type: "close" }>;
    expect(closed.error).toMatch(/killed by SIGKILL/);
    expect(closed.error).toContain("last words of the killed child");

    for (const outcome of await Promise.all(calls)) {
      expect(outcome).toMatchObject({ code: "server-crashed" });
      expect((outcome as Error).message).toMatch(/"victim"/);
    }
    expect((await observer.state()).find((s) => s.id === "victim")?.inflight ?? 0).toBe(0);
    // The other server never noticed.
    expect((await ready(observer, ["bystander"])).bystander).toBe(before.bystander);
    expect(await observer.call("bystander__echo", { text: "unharmed" })).toBe("unharmed");
  }, 60_000);

  it("answers other servers while a SIGSTOPped one holds a call", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    h.writeConfig({
      frozen: echoRow({ callTimeoutMs: 60_000 }),
      other: echoRow(),
    });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const pids = await ready(c, ["frozen", "other"]);
    process.kill(pids.frozen!, "SIGSTOP");
    try {
      const held = c.call("frozen__echo", { text: "held" });
      await waitFor(
        async () => (await c.state()).find((s) => s.id === "frozen")?.inflight === 1,
        BOUND_MS,
        "the call to the stopped child in flight",
      );
      for (let i = 0; i < 20; i++)
        expect(await c.call("other__echo", { text: `free ${i}` })).toBe(`free ${i}`);
      // Still held: the other server was served while this call waited on its stopped child.
      expect((await c.state()).find((s) => s.id === "frozen")?.inflight).toBe(1);
      process.kill(pids.frozen!, "SIGCONT");
      expect(await held).toBe("held");
    } finally {
      process.kill(pids.frozen!, "SIGCONT");
    }
  });

  it("gives up on a stdout line past the cap, keeping the daemon's memory bounded", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    h.writeConfig(
      {
        huge: { command: process.execPath, args: [fixture("stderr-flood.mjs")] },
        other: echoRow(),
      },
      { mcpool: { crashBackoffMs: 60_000 } },
    );
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const before = await ready(c, ["huge", "other"]);
    const rssBefore = rssBytes(d.pid);
    const crash = nextMatching<PoolEvent>(
      (l) => c.onEvent(l),
      (e) => e.type === "close" && e.serverId === "huge",
      BOUND_MS * 3,
    );
    const error = await c.call("huge__line", { mb: HUGE_LINE_MIB }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "server-crashed" });
    await crash;
    const growth = rssBytes(d.pid) - rssBefore;
    expect(growth).toBeLessThan((LINE_CAP_MIB + RSS_GROWTH_BOUND_MIB) * 1024 * 1024);
    expect((await ready(c, ["other"])).other).toBe(before.other);
    expect(await c.call("other__echo", { text: "unharmed" })).toBe("unharmed");
  }, 120_000);

  it("keeps the daemon's memory bounded while a child writes hundreds of MiB to stderr", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    h.writeConfig({
      flood: {
        command: process.execPath,
        args: [fixture("stderr-flood.mjs")],
        callTimeoutMs: 120_000,
      },
    });
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    await ready(c, ["flood"]);
    expect(await c.call("flood__echo", { text: "warm" })).toBe("warm");
    const rssBefore = rssBytes(d.pid);
    // The answer comes only once the daemon has read every byte of the flood.
    expect(await c.call("flood__flood", { mb: FLOOD_MIB })).toBe("flooded");
    const growth = rssBytes(d.pid) - rssBefore;
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND_MIB * 1024 * 1024);
    expect(await c.call("flood__echo", { text: "after" })).toBe("after");
  }, 120_000);
});

describe.concurrent("remote servers", { timeout: 90_000 }, () => {
  it("backs off a remote that stays down, logging each attempt once", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    // A loopback port nobody listens on: every dial is refused at once.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    h.writeConfig(
      { down: { type: "http", url: `http://127.0.0.1:${port}/mcp` } },
      { mcpool: { crashBackoffMs: 50 } },
    );
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const failures: PoolEvent[] = [];
    let heardAt = 0;
    c.onEvent((e) => {
      if (e.type !== "connect-failed" || e.serverId !== "down") return;
      failures.push(e);
      heardAt = Date.now();
    });
    await waitFor(() => failures.length >= REMOTE_ATTEMPTS, BOUND_MS * 2, "repeated attempts");
    const state = (await c.state()).find((s) => s.id === "down")!;
    // A URL is unreachable, never in a crash loop; the cause is named by its code.
    expect(state.status).toBe("unreachable");
    expect(state.error).toMatch(/could not connect to server "down": .*ECONNREFUSED/);
    // Each wait twice the last (3.2 s after the seventh): far more than the first 50 ms,
    // with room for a loaded machine between the failure and our reading of it.
    expect(state.retryAt! - heardAt).toBeGreaterThan(50 * 2 ** (REMOTE_ATTEMPTS - 4));
    const lines = d
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"down"'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length, lines.join("\n")).toBeLessThanOrEqual(failures.length + 2);
  }, 60_000);
});

describe("configuration", () => {
  it("applies every one of several atomic saves in a row, the watch following each rename", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    const rows = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i + 1}`, echoRow()]));
    h.writeConfig(rows(1));
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const first = (await ready(c, ["s1"])).s1;
    // One save at a time, each seen: a watch on the replaced inode would miss the second.
    for (const n of [2, 3]) {
      h.writeConfig(rows(n));
      await ready(c, Object.keys(rows(n)));
    }
    // Then two saves back to back.
    h.writeConfig(rows(4));
    h.writeConfig(rows(5));
    const pids = await ready(c, ["s1", "s2", "s3", "s4", "s5"]);
    expect(pids.s1).toBe(first);
    expect((await c.status()).servers.map((s) => s.id)).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    expect((await c.status()).config.ok).toBe(true);
  }, 60_000);

  it("keeps the running pool when the file is deleted, and says so in status", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    h.writeConfig({ echo: echoRow() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const before = await ready(c, ["echo"]);
    rmSync(h.configPath);
    // No reload: the watch sees the deletion by itself.
    await waitFor(
      async () => /missing/.test((await c.status()).config.error ?? ""),
      BOUND_MS,
      "status to report the missing file",
    );
    expect((await c.status()).config.ok).toBe(false);
    expect((await ready(c, ["echo"])).echo).toBe(before.echo);
    expect(await c.call("echo__echo", { text: "kept" })).toBe("kept");
  });

  it("debounces ten edits in a burst to a couple of restarts, and leaves no old child behind", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-faults-");
    const marker = `MCPOOL_FAULTS_RUN=${randomUUID()}`;
    const [key, value] = marker.split("=") as [string, string];
    const edited = (edit: number) =>
      echoRow({ env: { [key]: value, EDIT: String(edit) }, callTimeoutMs: 30_000 });
    h.writeConfig({ x: edited(0), y: echoRow() });
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const before = await ready(c, ["x", "y"]);
    const connects: PoolEvent[] = [];
    c.onEvent((e) => {
      if (e.type === "connect" && e.serverId === "x") connects.push(e);
    });
    for (let edit = 1; edit <= 10; edit++) h.writeConfig({ x: edited(edit), y: echoRow() });

    let last = 0;
    await waitFor(
      async () => {
        const pid = (await c.state()).find((s) => s.id === "x" && s.status === "ready")?.pid;
        if (pid === undefined || pid === before.x) return false;
        const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
        last = pid;
        return env.includes("EDIT=10");
      },
      BOUND_MS,
      "x to run with the last edit",
    );
    await c.reload();
    expect(connects.length).toBeGreaterThanOrEqual(1);
    expect(connects.length).toBeLessThanOrEqual(3);
    // Every child x had before the last is gone, not left to init.
    await waitFor(
      () => processesWith(marker).every((pid) => pid === last),
      BOUND_MS,
      "x's old children to be stopped",
    );
    expect(processesWith(marker)).toEqual([last]);
    expect((await ready(c, ["y"])).y).toBe(before.y);
    expect(alive(d.pid)).toBe(true);
  }, 60_000);
});
