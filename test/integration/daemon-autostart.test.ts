/**
 * The daemon killed with SIGKILL → the next agent that auto-starts brings it
 * back although the socket file is still there; its children are reaped: five agents, each
 * its own process, find the dead daemon's socket file at once; each starts a daemon, the
 * instance lock lets exactly one serve, and all five are answered by it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, type TestContext } from "vitest";
import { connect, type PoolClient } from "mcpool-client";
import { stdioBridge } from "../helpers/bridge.js";
import { client, cliPath, startDaemon, testHome, type TestHome } from "../helpers/daemon.js";
import { alive, daemonsFor, fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;
const AGENTS = 5;

const clientUrl = pathToFileURL(
  createRequire(join(process.cwd(), "package.json")).resolve("mcpool-client"),
).href;

/**
 * What one test started, ended when the test ends: its clients, the children it spawned,
 * processes not ours to wait for (detached daemons, a dead daemon's children) and its homes.
 */
interface Started {
  homes: TestHome[];
  spawned: ChildProcess[];
  clients: PoolClient[];
  strays: number[];
}

function started({ onTestFinished }: TestContext): Started {
  const s: Started = { homes: [], spawned: [], clients: [], strays: [] };
  onTestFinished(async () => {
    await Promise.all(s.clients.splice(0).map((c) => c.close().catch(() => undefined)));
    for (const h of s.homes) s.strays.push(...daemonsOf(h));
    for (const child of s.spawned.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
    for (const pid of s.strays.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    for (const h of s.homes.splice(0)) h.remove();
  });
  return s;
}

/** Live `mcpool serve` processes for this home's socket (traced ones too), from /proc. */
const daemonsOf = (h: TestHome): number[] => daemonsFor(h.socketPath);

/** An agent in its own process: auto-starts the daemon as `mcpool bridge` does, then asks it. */
function agentScript(h: TestHome, daemon = [process.execPath, cliPath, "serve"]): string {
  const path = join(h.dir, "agent.mjs");
  writeFileSync(
    path,
    `import { connect } from ${JSON.stringify(clientUrl)};
const client = await connect({
  socketPath: process.env.MCPOOL_SOCKET,
  clientName: process.argv[2],
  autoStart: true,
  autoStartCommand: ${JSON.stringify(daemon)},
  autoStartTimeoutMs: ${BOUND_MS},
});
const { pid } = await client.status();
const echo = await client.call("echo__echo", { text: process.argv[2] });
process.stdout.write(JSON.stringify({ pid, echo }));
await client.close();
`,
  );
  return path;
}

/** A daemon command that notes each start and exit in `trace`, then runs `mcpool serve`. */
function tracedDaemon(h: TestHome, trace: string): string[] {
  const path = join(h.dir, "traced-daemon.mjs");
  writeFileSync(
    path,
    `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(trace)}, \`start \${process.pid}\\n\`);
process.on("exit", (code) => appendFileSync(${JSON.stringify(trace)}, \`exit \${process.pid} \${code}\\n\`));
await import(${JSON.stringify(pathToFileURL(cliPath).href)});
`,
  );
  return [process.execPath, path, "serve"];
}

function readIfAny(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

function runAgent(
  s: Started,
  h: TestHome,
  script: string,
  name: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script, name], {
    env: h.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  s.spawned.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

const row = (file: string) => ({ command: process.execPath, args: [fixture(file)] });

function home(s: Started, servers: Record<string, unknown>): TestHome {
  const h = testHome();
  s.homes.push(h);
  h.writeConfig(servers);
  return h;
}

// Each test its own homes and daemons: they run side by side, each with a longer bound.
describe.concurrent("auto-start after a crash", { timeout: 90_000 }, () => {
  it("brings one daemon back for five agents although the dead one left its socket file", async (context) => {
    const s = started(context);
    // The stubborn server ignores stdin EOF and SIGTERM: only the next daemon's reaping ends it.
    const h = home(s, { echo: row("echo.mjs"), stubborn: row("hang.mjs") });
    const old = await startDaemon(h);
    s.spawned.push(old.process);
    const before = await client(h, "before");
    const orphan = Number(await before.call("stubborn__pid", {}));
    s.strays.push(orphan);
    await before.close();
    await old.kill9();
    expect(lstatSync(h.socketPath).isSocket()).toBe(true);
    expect(alive(orphan)).toBe(true);
    // The next daemon runs echo alone: the stubborn child can end only by its reaping.
    h.writeConfig({ echo: row("echo.mjs") });

    const script = agentScript(h);
    const names = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
    const runs = await Promise.all(names.map((name) => runAgent(s, h, script, name)));

    for (const [i, run] of runs.entries()) {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ echo: names[i] });
    }
    const pids = new Set(runs.map((run) => (JSON.parse(run.stdout) as { pid: number }).pid));
    expect(pids.size).toBe(1);
    const [serving] = pids;
    // The losers exit 0 by themselves once the lock tells them a daemon serves.
    await waitFor(() => daemonsOf(h).length === 1, BOUND_MS, "the losing daemons to exit");
    expect(daemonsOf(h)).toEqual([serving]);
    expect(serving).not.toBe(old.pid);
    await waitFor(() => !alive(orphan), BOUND_MS, "the dead daemon's child to be reaped");

    process.kill(serving!, "SIGTERM");
    await waitFor(() => daemonsOf(h).length === 0, BOUND_MS, "the new daemon to stop");
  });

  it("lets `mcpool bridge` bring the daemon back the same way", async (context) => {
    const s = started(context);
    const h = home(s, { echo: row("echo.mjs") });
    const old = await startDaemon(h);
    s.spawned.push(old.process);
    await old.kill9();
    expect(lstatSync(h.socketPath).isSocket()).toBe(true);

    const bridge = await stdioBridge(h, ["--server", "echo"]);
    try {
      // The first listing waits for the new daemon's first reconcile: echo is in it.
      const { tools } = await bridge.client.listTools();
      expect(tools.map((t) => t.name)).toContain("echo");
      const result = await bridge.client.callTool({ name: "echo", arguments: { text: "back" } });
      expect(result.content).toEqual([{ type: "text", text: "back" }]);
    } finally {
      await bridge.close();
    }
    const [serving] = daemonsOf(h);
    expect(daemonsOf(h)).toEqual([serving]);
    expect(serving).not.toBe(old.pid);
    process.kill(serving!, "SIGTERM");
    await waitFor(() => daemonsOf(h).length === 0, BOUND_MS, "the new daemon to stop");
  });

  it("never takes the socket of a live daemon whose lock names a dead process", async (context) => {
    const s = started(context);
    const h = home(s, {});
    const first = await startDaemon(h);
    s.spawned.push(first.process);
    const socket = lstatSync(h.socketPath);
    // As a daemon in another pid namespace looks: its pid names nothing here.
    const exited = spawn(process.execPath, ["-e", "0"]);
    await new Promise((resolve) => exited.once("exit", resolve));
    const lockPath = join(dirname(h.socketPath), "mcpool.lock");
    writeFileSync(
      lockPath,
      JSON.stringify({ pid: exited.pid, startTime: 1, nonce: "0123456789abcdef" }),
    );

    const second = spawn(process.execPath, [cliPath, "serve"], {
      env: h.env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    s.spawned.push(second);
    let stderr = "";
    second.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => second.exitCode !== null, BOUND_MS, "the second daemon to give way");
    expect(stderr).toMatch(/already running/);
    expect(second.exitCode).toBe(0);
    expect(lstatSync(h.socketPath).ino).toBe(socket.ino);
    const c = await client(h, "after");
    expect((await c.status()).pid).toBe(first.pid);
    await c.close();
    expect(await first.stop()).toBe(0);
  });

  it("starts a daemon again for an agent that came while the old one was draining", async (context) => {
    const s = started(context);
    const h = home(s, { echo: row("echo.mjs"), gate: row("gate.mjs") });
    const old = await startDaemon(h);
    s.spawned.push(old.process);
    const holder = await client(h, "holder");
    s.clients.push(holder);
    const gate = join(h.dir, "open");
    const held = holder.call("gate__wait", { path: gate }).catch((error: Error) => error.message);
    const deadline = Date.now() + BOUND_MS;
    while (!(await holder.state()).find((s) => s.id === "gate")?.inflight) {
      if (Date.now() > deadline) throw new Error("the gate call never reached the server");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    old.process.kill("SIGTERM");
    await waitFor(() => !existsSync(h.socketPath), BOUND_MS, "the drain to begin");

    const trace = join(h.dir, "trace");
    const late = runAgent(s, h, agentScript(h, tracedDaemon(h, trace)), "late");
    // Its first daemon finds the lock held by the draining one and gives way.
    await waitFor(() => /^exit \d+ 0$/m.test(readIfAny(trace)), BOUND_MS, "a daemon to give way");
    writeFileSync(gate, "");
    expect(await held).toBe(`opened ${gate}`);
    expect(await old.stop()).toBe(0);

    const run = await late;
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const { pid, echo } = JSON.parse(run.stdout) as { pid: number; echo: string };
    expect(echo).toBe("late");
    expect(readIfAny(trace)).toContain(`start ${pid}\n`);
    expect(daemonsOf(h)).toEqual([pid]);
    process.kill(pid, "SIGTERM");
    await waitFor(() => daemonsOf(h).length === 0, BOUND_MS, "the new daemon to stop");
  });

  it("starts a daemon when the socket it dials accepts and then drops the connection (a daemon dying as it is dialled)", async (context) => {
    const s = started(context);
    const h = home(s, { echo: row("echo.mjs") });
    mkdirSync(dirname(h.socketPath), { recursive: true, mode: 0o700 });
    // The last moments of a daemon: the connect is accepted, then dropped before any hello.
    const dying = createServer((socket) => {
      socket.destroy();
      dying.close();
    });
    await new Promise<void>((resolve) => dying.listen(h.socketPath, resolve));
    const c = await connect({
      socketPath: h.socketPath,
      clientName: "late",
      autoStart: true,
      autoStartCommand: homeDaemon(h),
      autoStartTimeoutMs: BOUND_MS,
    });
    s.clients.push(c);
    expect(await c.call("echo__echo", { text: "answered" })).toBe("answered");
    expect(daemonsOf(h)).toHaveLength(1);
  });
});

/** `mcpool serve` for `h`, its HOME, XDG_ and MCPOOL_ variables set (a start keeps no others). */
function homeDaemon(h: TestHome): string[] {
  const vars = Object.entries(h.env)
    .filter(([key]) => key === "HOME" || key.startsWith("XDG_") || key.startsWith("MCPOOL_"))
    .map(([key, value]) => `${key}=${value ?? ""}`);
  return ["/usr/bin/env", ...vars, process.execPath, cliPath, "serve"];
}

/** The parent pid of `pid`, from /proc. */
function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
}

/** `pid` and every process below it, as a host that ends its server's whole tree finds them. */
function treeOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const parent = parentOf(Number(name));
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  for (let next = [pid]; next.length > 0; next = next.flatMap((p) => children.get(p) ?? [])) {
    out.push(...next);
  }
  return out;
}

describe.concurrent(
  "a daemon an entry started (one daemon per user, whatever the host does)",
  { timeout: 90_000 },
  () => {
    it("is nobody's child: a host that ends its entry's whole process tree (OpenCode) leaves it serving", async (context) => {
      const s = started(context);
      const h = home(s, { echo: row("echo.mjs") });
      const bridge = await stdioBridge(h, ["--server", "echo"]);
      const bridgePid = bridge.transport.pid!;
      const result = await bridge.client.callTool({ name: "echo", arguments: { text: "up" } });
      expect(result.content).toEqual([{ type: "text", text: "up" }]);
      const [daemon] = daemonsOf(h);
      expect(daemon).toBeDefined();
      expect(treeOf(bridgePid)).not.toContain(daemon);
      for (const pid of treeOf(bridgePid)) process.kill(pid, "SIGTERM");
      await waitFor(() => !alive(bridgePid), BOUND_MS, "the bridge to end");
      await bridge.close();
      const c = await client(h);
      s.clients.push(c);
      expect(await c.call("echo__echo", { text: "still here" })).toBe("still here");
      expect(daemonsOf(h)).toEqual([daemon]);
    });

    it("is said to `onAutoStart` once spawned; a client that finds one serving says nothing", async (context) => {
      const s = started(context);
      const h = home(s, { echo: row("echo.mjs") });
      const spawned: string[] = [];
      const starter = (name: string) =>
        connect({
          socketPath: h.socketPath,
          clientName: name,
          autoStart: true,
          autoStartCommand: homeDaemon(h),
          autoStartTimeoutMs: BOUND_MS,
          onAutoStart: () => spawned.push(name),
        });
      s.clients.push(await starter("first"));
      expect(spawned).toEqual(["first"]);
      s.clients.push(await starter("second"));
      expect(spawned).toEqual(["first"]);
      expect(daemonsOf(h)).toHaveLength(1);
    });

    it("that cannot serve is reported at once with its exit code, not after the start bound", async (context) => {
      const s = started(context);
      const h = home(s, {});
      const failed = await connect({
        socketPath: h.socketPath,
        clientName: "starter",
        autoStart: true,
        autoStartCommand: [process.execPath, cliPath, "serve", "--no-such-flag"],
        autoStartTimeoutMs: 120_000,
      }).catch((error: unknown) => error as Error);
      expect((failed as Error).message).toMatch(/exited with code 2 before listening/);
      // It said so as it exited: the process may be a moment from gone, never serving.
      await waitFor(() => daemonsOf(h).length === 0, BOUND_MS, "the failed daemon to be gone");
    });

    it("that is still writing its exit code is waited for, not reported with an empty one", async (context) => {
      const s = started(context);
      const h = home(s, {});
      // The file is created, and its code written a moment later, as a busy machine can
      // schedule the daemon's own create-then-write.
      const slowWriter = [
        'const { writeFileSync } = require("node:fs");',
        "const file = process.env.MCPOOL_LAUNCH_STATUS;",
        'writeFileSync(file, "", { flag: "wx" });',
        'setTimeout(() => { writeFileSync(file, "2"); process.exit(2); }, 500);',
      ].join("\n");
      const failed = await connect({
        socketPath: h.socketPath,
        clientName: "starter",
        autoStart: true,
        autoStartCommand: [process.execPath, "-e", slowWriter],
        autoStartTimeoutMs: 120_000,
      }).catch((error: unknown) => error as Error);
      expect((failed as Error).message).toMatch(/exited with code 2 before listening/);
    });
  },
);
