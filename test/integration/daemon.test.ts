import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { createConnection } from "node:net";
import { describe, expect, it, type TestContext } from "vitest";
import type { PoolClient, PoolEvent } from "mcpool-client";
import { client, cliPath } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, childrenOf, fixture, nextMatching, waitFor } from "../helpers/processes.js";

const echo = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [fixture("echo.mjs")],
  ...extra,
});

async function ready(c: PoolClient, ids: string[]): Promise<Record<string, number>> {
  let pids: Record<string, number> = {};
  const deadline = Date.now() + 20_000;
  for (;;) {
    const state = await c.state();
    pids = Object.fromEntries(
      state.filter((s) => s.status === "ready" && s.pid).map((s) => [s.id, s.pid!]),
    );
    if (ids.every((id) => pids[id] !== undefined)) return pids;
    if (Date.now() > deadline)
      throw new Error(
        `servers not ready: ${JSON.stringify(state.map((s) => [s.id, s.status, s.error]))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Kills `pid`'s process group when the test ends, whatever it ended with. */
function killAtEnd({ onTestFinished }: TestContext, pid: number): void {
  onTestFinished(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  });
}

// Each test its own home, daemon and children: they run side by side, so each shares the
// cores with the others and gets a longer bound (a test here starts up to five Node processes
// one after another).
describe.concurrent("the daemon", { timeout: 90_000 }, () => {
  it("serves many agents from one child per server", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    const d = await fleet.daemon(h);
    const agents = await Promise.all([1, 2, 3, 4, 5].map((i) => fleet.agent(h, `agent-${i}`)));
    const pids = await Promise.all(agents.map((a) => a.call("echo__pid", {})));
    expect(new Set(pids).size).toBe(1);
    expect(childrenOf(d.pid)).toEqual([Number(pids[0])]);
  });

  it("restarts only the edited row's child when mcp.json changes", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ a: echo(), b: echo(), c: echo() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const before = await ready(c, ["a", "b", "c"]);
    const reconnected = nextMatching<PoolEvent>(
      (l) => c.onEvent(l),
      (e) => e.type === "connect" && e.serverId === "b",
      20_000,
    );
    await waitFor(() => c.daemon !== undefined, 5000, "hello");
    h.writeConfig({
      a: echo(),
      b: echo({ env: { EDITED: "1" } }),
      c: echo({ label: "C, relabelled" }),
    });
    await reconnected;
    const after = await ready(c, ["a", "b", "c"]);
    expect(after.a).toBe(before.a);
    expect(after.c).toBe(before.c);
    expect(after.b).not.toBe(before.b);
    await waitFor(() => !alive(before.b!), 10_000, "the old child of b to go");
    expect((await c.state()).find((s) => s.id === "c")?.label).toBe("C, relabelled");
  });

  it("keeps the last good configuration running when the file stops parsing, and says where", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    const before = await ready(c, ["echo"]);
    writeFileSync(h.configPath, '{\n  "mcpServers": {\n    "echo": { "command": \n');
    const config = await c.reload();
    expect(config.ok).toBe(false);
    expect(config.line).toBeGreaterThanOrEqual(3);
    expect(config.error).toMatch(/line \d+, column \d+/);
    expect((await ready(c, ["echo"])).echo).toBe(before.echo);
    expect(await c.call("echo__echo", { text: "still up" })).toBe("still up");
    const status = await c.status();
    expect(status.config.ok).toBe(false);

    // A missing file is the same: the pool keeps running.
    execFileSync("rm", [h.configPath]);
    expect((await c.reload()).error).toMatch(/missing/);
    expect((await ready(c, ["echo"])).echo).toBe(before.echo);
  });

  it("reports invalid rows one by one while the valid rows apply", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({
      good: echo(),
      remote: { url: "http://example.com/mcp" },
      old: { type: "sse", url: "https://x.example/sse" },
    });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await ready(c, ["good"]);
    const status = await c.status();
    expect(status.servers.map((s) => s.id)).toEqual(["good"]);
    expect(status.config.ok).toBe(true);
    expect(status.config.problems).toHaveLength(2);
    expect(status.config.problems.join("\n")).toMatch(/remote.*loopback/);
    expect(status.config.problems.join("\n")).toMatch(/old.*SSE/);
  });

  it("writes a starter mcp.json with the demo server when there is none", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    await fleet.daemon(h);
    expect(existsSync(h.configPath)).toBe(true);
    // The first reconcile runs behind the socket: wait for the demo server to be up.
    await ready(await fleet.agent(h), ["echo"]);
    const out = execFileSync(process.execPath, [cliPath, "tools"], {
      env: h.env,
      encoding: "utf8",
    });
    expect(out).toMatch(/echo__echo/);
    // No `mcpool` of this package on PATH (a checkout): this Node and the script, absolute.
    expect(readFileSync(h.configPath, "utf8")).toContain(
      `"command":${JSON.stringify(process.execPath)}`,
    );
  });

  it("lets a second serve exit 0 saying the first is running", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({});
    const first = await fleet.daemon(h);
    const second = spawn(process.execPath, [cliPath, "serve"], {
      env: h.env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    second.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.once("exit", resolve));
    expect(code).toBe(0);
    expect(stderr).toMatch(/already running/);
    expect(stderr).toContain(String(first.pid));
  });

  it("stops every child and removes its socket on SIGTERM, exiting 0", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({
      echo: echo(),
      hang: { command: process.execPath, args: [fixture("hang.mjs")] },
    });
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const pids = await ready(c, ["echo", "hang"]);
    expect(await d.stop()).toBe(0);
    expect(alive(pids.echo!)).toBe(false);
    expect(alive(pids.hang!)).toBe(false);
    expect(existsSync(h.socketPath)).toBe(false);
  });

  it("leaves no child alive after kill -9 once the next daemon has started", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({
      echo: echo(),
      hang: { command: process.execPath, args: [fixture("hang.mjs")] },
    });
    const d = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const pids = await ready(c, ["echo", "hang"]);
    killAtEnd(context, pids.hang!);
    await d.kill9();
    // A child that honours stdin EOF goes by itself; hang.mjs ignores it and SIGTERM.
    await waitFor(() => !alive(pids.echo!), 10_000, "the echo child to exit on stdin EOF");
    expect(alive(pids.hang!)).toBe(true);
    const next = await fleet.daemon(h);
    await waitFor(() => !alive(pids.hang!), 10_000, "the orphan to be reaped");
    expect(next.stderr()).toMatch(/reaped 1 child/);
    const c2 = await fleet.agent(h, "after");
    expect(await c2.call("echo__echo", { text: "back" })).toBe("back");
  });

  it("keeps serving other agents through garbage, half frames and oversized frames", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    await fleet.daemon(h);
    const good = await fleet.agent(h, "good");
    const hostile = async (payload: Buffer | string, end: boolean): Promise<void> => {
      const socket = createConnection(h.socketPath);
      socket.on("error", () => undefined);
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(payload);
      if (end) socket.end();
      await new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 500).unref();
      });
    };
    await hostile('this is not json\n{"jsonrpc":"2.0"\n\0\0\0\n', true);
    await hostile('{"jsonrpc":"2.0","id":1,"method":"hel', true);
    await hostile(Buffer.alloc(17 * 1024 * 1024, 0x61), false);
    await hostile(Buffer.from([0xff, 0xfe, 0x0a]), true);
    expect(await good.call("echo__echo", { text: "unharmed" })).toBe("unharmed");
  });

  it("cancels the calls of an agent that disconnects mid-call", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    await fleet.daemon(h);
    const watcher = await fleet.agent(h, "watcher");
    await ready(watcher, ["echo"]);
    const leaver = await client(h, "leaver");
    const pending = leaver.call("echo__sleep", { ms: 60_000 }).catch((e: unknown) => e);
    const deadline = Date.now() + 10_000;
    while (!(await watcher.state()).find((s) => s.id === "echo")?.inflight) {
      if (Date.now() > deadline) throw new Error("the call never started");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await leaver.close();
    expect(await pending).toBeInstanceOf(Error);
    const settled = Date.now() + 10_000;
    while ((await watcher.state()).find((s) => s.id === "echo")?.inflight) {
      if (Date.now() > settled) throw new Error("the call is still in flight");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });

  it("serves an inherited listening socket (LISTEN_FDS) that no child inherits, nor the service variables", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    mkdirSync(dirname(h.socketPath), { recursive: true, mode: 0o700 });
    // What systemd does: bind, listen, and exec the service with the socket as fd 3.
    const activate = [
      "import os, socket, sys",
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
      "s.bind(sys.argv[1]); s.listen(16)",
      "os.dup2(s.fileno(), 3); os.set_inheritable(3, True)",
      "os.environ.update(LISTEN_FDS='1', LISTEN_PID=str(os.getpid()), NOTIFY_SOCKET='/run/nothing')",
      "os.execv(sys.argv[2], sys.argv[2:])",
    ].join("\n");
    const child = spawn(
      "python3",
      ["-c", activate, h.socketPath, process.execPath, cliPath, "serve"],
      {
        env: h.env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await waitFor(
        () => stderr.includes("serving ") || child.exitCode !== null,
        20_000,
        "the daemon to serve",
      );
      const c = await fleet.agent(h);
      const pid = Number(await c.call("echo__pid", {}));
      const listener = readlinkSync(`/proc/${child.pid}/fd/3`);
      expect(listener).toMatch(/^socket:/);
      const fds = readdirSync(`/proc/${pid}/fd`).map((fd) => [
        fd,
        readlinkSync(`/proc/${pid}/fd/${fd}`),
      ]);
      expect(fds.filter(([, target]) => target === listener)).toEqual([]);
      // Beyond stdio (socketpairs under libuv) the child holds no socket of ours.
      expect(fds.filter(([fd, target]) => Number(fd) > 2 && target!.startsWith("socket:"))).toEqual(
        [],
      );
      const environ = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      expect(environ.filter((v) => /^(LISTEN_FDS|LISTEN_PID|NOTIFY_SOCKET)=/.test(v))).toEqual([]);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });

  it("keeps its file descriptors flat across 1,000 agent connect/disconnect cycles", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: echo() });
    const d = await fleet.daemon(h);
    const warm = await client(h, "warm-up");
    await warm.call("echo__echo", { text: "x" });
    await warm.close();
    const fdCount = (): number => readdirSync(`/proc/${d.pid}/fd`).length;
    const rssKib = (): number =>
      Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${d.pid}/status`, "latin1"))?.[1]);
    const before = fdCount();
    const rssBefore = rssKib();
    for (let i = 0; i < 1000; i++) {
      const c = await client(h, `cycle-${i}`);
      await c.close();
    }
    // The daemon closes its side after ours; give the last few a bounded moment.
    await waitFor(() => fdCount() <= before + 2, 10_000, "the daemon's descriptors to settle");
    // Coarse: a leak of 64 KiB per connection would pass it; it catches what grows with each.
    expect(rssKib() - rssBefore).toBeLessThan(64 * 1024);
    const status = await (await fleet.agent(h, "after")).status();
    expect(status.clients).toBe(1);
  }, 120_000);

  it("creates its socket 0600 in a 0700 directory even under umask 000", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({});
    const child = spawn(
      "/bin/sh",
      ["-c", `umask 000; exec "${process.execPath}" "${cliPath}" serve`],
      {
        env: h.env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await waitFor(() => stderr.includes("serving "), 20_000, "the daemon to serve");
      expect(lstatSync(h.socketPath).mode & 0o777).toBe(0o600);
      expect(lstatSync(`${h.dir}/run`).mode & 0o777).toBe(0o700);
      expect(lstatSync(h.socketPath).isSocket()).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });
});
