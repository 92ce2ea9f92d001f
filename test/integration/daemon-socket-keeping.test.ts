/**
 * The socket is kept (test/faults.ts, "A service left running for weeks": a `/tmp` or runtime-dir cleaner removes
 * the socket, or the whole runtime folder → the daemon recreates them at once; no second daemon
 * ever serves the same socket; `status` finds a live daemon whose socket is gone and says how
 * to fix it), and the strays `status` lists. A stopped daemon (SIGSTOP) stands for one whose
 * socket is gone and that has not put it back yet: its kernel-held lock and its record stay.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { lstatSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "mcpool-client";
import { removeFolder } from "../helpers/files.js";
import { cliPath, runCli, type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, childrenOf, daemonsFor, fixture, waitFor } from "../helpers/processes.js";
import { asUser, ensureUser } from "../helpers/users.js";
import { lockName } from "../../src/daemon/process/name-lock.js";

const BOUND_MS = 20_000;

const fleet = useFleet();
const stopped: number[] = [];
const spawned: ChildProcess[] = [];
// Before the fleet's teardown (registered first, run last): a stopped daemon must run again
// to stop, and whatever a test spawned is ended.
afterEach(async () => {
  for (const pid of stopped.splice(0)) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  }
  for (const child of spawned.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
});

const echo = { command: process.execPath, args: [fixture("echo.mjs")] };

function isSocket(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isSocket() === true;
}

const daemonsOf = (h: TestHome): number[] => daemonsFor(h.socketPath);

/**
 * The echo children of every daemon serving this home's socket: one set for one daemon. (Other
 * test files of the run start echo children too, of their own daemons.)
 */
function echoChildren(h: TestHome): number[] {
  return daemonsOf(h)
    .flatMap((pid) => childrenOf(pid))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "latin1")
          .split("\0")
          .includes(fixture("echo.mjs"));
      } catch {
        return false;
      }
    });
}

async function readyEcho(h: TestHome): Promise<number> {
  const c = await fleet.agent(h, "ready");
  let pid: number | undefined;
  await waitFor(
    async () => {
      pid = (await c.state()).find((s) => s.id === "echo" && s.status === "ready")?.pid;
      return pid !== undefined;
    },
    BOUND_MS,
    "echo to be ready",
  );
  return pid!;
}

/** `mcpool ARGS` in `h`, running in the background: its exit code and stderr when it ends. */
function cli(
  h: TestHome,
  ...args: string[]
): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [cliPath, ...args], {
    env: h.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, stderr: () => stderr, exit };
}

function stop(d: RunningDaemon): void {
  process.kill(d.pid, "SIGSTOP");
  stopped.push(d.pid);
}

/** A daemon serving echo, stopped (SIGSTOP) once echo is ready; `remove` deleted after. */
async function stoppedDaemon(
  remove: (h: TestHome) => string,
): Promise<{ h: TestHome; d: RunningDaemon; child: number }> {
  const h = fleet.home();
  h.writeConfig({ echo });
  const d = await fleet.daemon(h);
  const child = await readyEcho(h);
  stop(d);
  rmSync(remove(h), { recursive: true, force: true });
  return { h, d, child };
}

describe("the socket is the daemon's to keep", () => {
  it("re-creates its socket when a cleaner removes it; a new client connects and an old one keeps working", async () => {
    const h = fleet.home();
    h.writeConfig({});
    const d = await fleet.daemon(h);
    const before = await fleet.agent(h, "before");
    const { ino } = lstatSync(h.socketPath);
    rmSync(h.socketPath);
    await waitFor(
      () => isSocket(h.socketPath) && lstatSync(h.socketPath).ino !== ino,
      BOUND_MS,
      "the socket to come back",
    );
    expect(lstatSync(h.socketPath).mode & 0o777).toBe(0o600);
    const after = await fleet.agent(h, "after");
    expect((await after.status()).pid).toBe(d.pid);
    expect((await before.status()).pid).toBe(d.pid);
    await waitFor(() => d.stderr().includes("re-created"), BOUND_MS, "the log line");
    expect(d.stderr()).toContain(`re-created ${h.socketPath} (it was removed)`);
  });

  it("re-creates its whole runtime folder 0700 when it is removed, MCP sockets included; a second serve and an auto-start for that path start no second daemon", async () => {
    const h = fleet.home();
    h.writeConfig({ echo });
    const d = await fleet.daemon(h);
    const child = await readyEcho(h);
    const dir = dirname(h.socketPath);
    const poolSocket = join(dir, "mcp", "@pool.sock");
    await waitFor(() => isSocket(poolSocket), BOUND_MS, "the MCP sockets");
    removeFolder(dir);
    await waitFor(
      () => isSocket(h.socketPath) && isSocket(poolSocket),
      BOUND_MS,
      "the folder and its sockets to come back",
    );
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dir, "mcpool.lock")).isFile()).toBe(true);

    const second = cli(h, "serve");
    expect(await second.exit).toBe(0);
    expect(second.stderr()).toMatch(/already running/);
    const auto = fleet.keep(
      await connect({
        socketPath: h.socketPath,
        clientName: "auto",
        autoStart: true,
        autoStartCommand: [process.execPath, cliPath, "serve"],
      }),
    );
    expect((await auto.status()).pid).toBe(d.pid);
    expect(daemonsOf(h)).toEqual([d.pid]);
    expect(echoChildren(h)).toEqual([child]);
  });

  it("re-creates its socket on SIGUSR1", async () => {
    const h = fleet.home();
    h.writeConfig({});
    const d = await fleet.daemon(h);
    const { ino } = lstatSync(h.socketPath);
    process.kill(d.pid, "SIGUSR1");
    await waitFor(
      () => isSocket(h.socketPath) && lstatSync(h.socketPath).ino !== ino,
      BOUND_MS,
      "a new socket",
    );
    expect((await (await fleet.agent(h)).status()).pid).toBe(d.pid);
    await waitFor(() => d.stderr().includes("(SIGUSR1)"), BOUND_MS, "the log line");
    expect(d.stderr()).not.toMatch(/Debugger listening/);
  });

  it("keeps a second daemon away after its folder and lock file were removed: `serve` tells the first to re-create its socket and says so", async () => {
    // Stopped, it cannot re-create anything yet: the folder stays gone until it runs again.
    const { h, d, child } = await stoppedDaemon((home) => dirname(home.socketPath));
    const second = cli(h, "serve");
    await waitFor(() => second.stderr().includes("SIGUSR1"), BOUND_MS, "serve to signal it");
    expect(second.stderr()).toContain(`daemon pid ${d.pid} is running but its socket`);
    expect(daemonsOf(h).sort()).toEqual([d.pid, second.child.pid].sort());
    process.kill(d.pid, "SIGCONT");
    expect(await second.exit).toBe(0);
    expect(second.stderr()).toMatch(/serves its socket again/);
    expect((await (await fleet.agent(h)).status()).pid).toBe(d.pid);
    expect(daemonsOf(h)).toEqual([d.pid]);
    expect(echoChildren(h)).toEqual([child]);
  });

  it("makes `serve` exit 1 naming the daemon when it does not come back on SIGUSR1", async () => {
    const h = fleet.home();
    h.writeConfig({});
    const d = await fleet.daemon(h);
    stop(d);
    rmSync(h.socketPath);
    const second = cli(h, "serve");
    expect(await second.exit).toBe(1);
    expect(second.stderr()).toContain(`did not re-create ${h.socketPath}`);
    expect(second.stderr()).toContain(`kill ${d.pid}`);
    expect(daemonsOf(h)).toEqual([d.pid]);
  });

  it("has `status` name a live daemon whose socket is gone, with the fix, and `shutdown` stop it", async () => {
    const { h, d, child } = await stoppedDaemon((home) => home.socketPath);

    const status = runCli(h, "status");
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(
      `daemon pid ${d.pid} is running but its socket ${h.socketPath} is gone`,
    );
    expect(status.stderr).toContain(`kill -USR1 ${d.pid}`);
    const json = runCli(h, "status", "--json");
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      socketPath: h.socketPath,
      reachable: false,
      daemon: { pid: d.pid, socket: h.socketPath },
    });

    const shutdown = cli(h, "shutdown");
    await waitFor(() => shutdown.stderr().includes("SIGTERM"), BOUND_MS, "shutdown to signal");
    expect(shutdown.stderr()).toContain(`daemon pid ${d.pid} has no socket`);
    process.kill(d.pid, "SIGCONT");
    expect(await shutdown.exit).toBe(0);
    await waitFor(() => !alive(d.pid) && !alive(child), BOUND_MS, "the daemon and its child to go");
  });

  it("lists in `status` a stray daemon serving another socket, with its pid and how to stop it", async () => {
    const h = fleet.home();
    h.writeConfig({});
    const d = await fleet.daemon(h);
    const otherSocket = join(h.dir, "other", "mcpool.sock");
    const other = await fleet.daemon(h, ["--socket", otherSocket]);

    const status = runCli(h, "status");
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`daemon pid ${other.pid} serves ${otherSocket}`);
    expect(status.stdout).toContain(`mcpool shutdown --socket ${otherSocket}`);
    const json = JSON.parse(runCli(h, "status", "--json").stdout) as {
      pid: number;
      strays: { pid: number; socket: string }[];
    };
    expect(json.pid).toBe(d.pid);
    expect(json.strays.map((s) => [s.pid, s.socket])).toEqual([[other.pid, otherSocket]]);

    const stopOther = runCli(h, "shutdown", "--socket", otherSocket);
    expect(stopOther.code).toBe(0);
    await waitFor(() => !alive(other.pid), BOUND_MS, "the stray to stop");
    expect(JSON.parse(runCli(h, "status", "--json").stdout).strays).toEqual([]);
  });

  it("lets an auto-starting client find a daemon whose socket is gone, with no second daemon", async () => {
    const { h, d, child } = await stoppedDaemon((home) => home.socketPath);
    const connecting = connect({
      socketPath: h.socketPath,
      clientName: "auto",
      autoStart: true,
      autoStartCommand: [process.execPath, cliPath, "serve"],
    });
    // The `serve` it started finds the first daemon's lock held and signals it.
    await waitFor(() => daemonsOf(h).length === 2, BOUND_MS, "the auto-started serve");
    process.kill(d.pid, "SIGCONT");
    const auto = fleet.keep(await connecting);
    expect((await auto.status()).pid).toBe(d.pid);
    await waitFor(() => daemonsOf(h).length === 1, BOUND_MS, "the auto-started serve to end");
    expect(daemonsOf(h)).toEqual([d.pid]);
    expect(echoChildren(h)).toEqual([child]);
  });

  it("serves although another user holds its lock name, relying on the lock file", async () => {
    const h = fleet.home();
    h.writeConfig({});
    ensureUser("mcpool-squat");
    const name = lockName(h.socketPath, process.getuid?.());
    const squatter = spawn(
      "setpriv",
      asUser("mcpool-squat", [
        process.execPath,
        "-e",
        `require("node:net").createServer().listen("\\0" + process.argv[1], () => console.log("bound"))`,
        name,
      ]),
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    spawned.push(squatter);
    let out = "";
    squatter.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await waitFor(() => out.includes("bound"), BOUND_MS, "the squatter to bind");
    const d = await fleet.daemon(h);
    expect((await (await fleet.agent(h)).status()).pid).toBe(d.pid);
    expect(d.stderr()).toContain(`the lock name @${name} is held by a process that is not ours`);
    const second = cli(h, "serve");
    expect(await second.exit).toBe(0);
    expect(second.stderr()).toContain(`already running for ${h.socketPath} (pid ${d.pid})`);
  });
});
