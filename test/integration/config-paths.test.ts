/**
 * Whatever sits at `mcp.json` — a symlink loop, a dangling link, a directory, a FIFO, a
 * socket, a huge or an unreadable file — is a config error in status. The daemon keeps
 * running, the last good configuration keeps serving, and shutdown completes.
 */
import { execFile } from "node:child_process";
import { chownSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import type { ConfigStatus, DaemonStatus, PoolClient } from "mcpool-client";
import { type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import { alive, fixture } from "../helpers/processes.js";
import {
  clientUrl,
  runNodeAs,
  startDaemonAs,
  stopDaemonAs,
  type DaemonAsUser,
} from "../helpers/users.js";

const echo = { command: process.execPath, args: [fixture("echo.mjs")] };

/** How long shutdown may take before the test calls it wedged. */
const EXIT_BOUND_MS = 15_000;

const home = (fleet: Fleet): TestHome => fleet.home("mcpool-paths-");
const agent = (fleet: Fleet, h: TestHome): Promise<PoolClient> => fleet.agent(h, "paths");

/** Polls status until `match` holds; bounded. */
async function statusUntil(
  c: PoolClient,
  match: (status: DaemonStatus) => boolean,
): Promise<DaemonStatus> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = await c.status();
    if (match(status)) return status;
    if (Date.now() > deadline)
      throw new Error(`status never matched: ${JSON.stringify(status.config)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function configUntil(
  c: PoolClient,
  match: (config: ConfigStatus) => boolean,
): Promise<ConfigStatus> {
  return (await statusUntil(c, (status) => match(status.config))).config;
}

/** Resolves with the exit code, or rejects when the daemon has not exited in the bound. */
async function stopBounded(d: RunningDaemon): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the daemon did not exit")), EXIT_BOUND_MS);
  });
  try {
    return await Promise.race([d.stop(), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Puts something other than a regular file at `path`, in place of what was there; what it
 * holds open is let go when the test ends.
 */
type Hostile = (path: string, test: TestContext) => void | Promise<void>;

const loop: Hostile = (path) => {
  symlinkSync("mcp.json", `${path}.tmp`);
  renameSync(`${path}.tmp`, path);
};

const fifo: Hostile = async (path) => {
  await promisify(execFile)("mkfifo", [`${path}.tmp`]);
  renameSync(`${path}.tmp`, path);
};

const HOSTILE: [string, Hostile, RegExp][] = [
  ["a symlink loop", loop, /is a symbolic link loop/],
  [
    "a dangling link",
    (path) => {
      symlinkSync("nowhere.json", `${path}.tmp`);
      renameSync(`${path}.tmp`, path);
    },
    /dangling link/,
  ],
  [
    "a directory",
    (path) => {
      rmSync(path);
      mkdirSync(path);
    },
    /is a directory, not a regular file/,
  ],
  ["a FIFO", fifo, /is a FIFO \(named pipe\), not a regular file/],
  [
    "a socket",
    async (path, { onTestFinished }) => {
      rmSync(path);
      const server: Server = createServer();
      onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
      await new Promise<void>((done) => server.listen(path, done));
    },
    /is a socket, not a regular file/,
  ],
  [
    "a file over the size cap",
    (path) => {
      // Valid JSON, 17 MiB of it: only its size is wrong.
      const padding = " ".repeat(17 * 1024 * 1024);
      writeFileSync(`${path}.tmp`, `{"mcpServers":{}${padding}}`);
      renameSync(`${path}.tmp`, path);
    },
    /larger than 16 MiB/,
  ],
];

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent("a hostile path at mcp.json while the daemon runs", { timeout: 90_000 }, () => {
  it.for(HOSTILE)(
    "%s is a config error; the last good config keeps serving and shutdown completes",
    async ([, make, message], context) => {
      const fleet = testFleet(context);
      const h = home(fleet);
      h.writeConfig({ echo });
      const d = await fleet.daemon(h);
      const c = await agent(fleet, h);
      expect(await c.call("echo__echo", { text: "before" })).toBe("before");

      await make(h.configPath, context);
      const config = await configUntil(c, (s) => !s.ok && message.test(s.error ?? ""));
      expect(config.error).toContain(h.configPath);

      expect(alive(d.pid)).toBe(true);
      expect(await c.call("echo__echo", { text: "after" })).toBe("after");
      expect((await c.status()).servers.map((s) => s.id)).toEqual(["echo"]);
      await c.close();
      expect(await stopBounded(d)).toBe(0);
    },
  );

  it("a symlink to a regular file is read as the file", async (context) => {
    const fleet = testFleet(context);
    const h = home(fleet);
    h.writeConfig({});
    const real = join(h.dir, "dotfiles-mcp.json");
    writeFileSync(real, JSON.stringify({ mcpServers: { echo } }));
    await fleet.daemon(h);
    const c = await agent(fleet, h);
    symlinkSync(real, `${h.configPath}.tmp`);
    renameSync(`${h.configPath}.tmp`, h.configPath);
    await statusUntil(c, (s) => s.servers.some((server) => server.id === "echo"));
    expect((await c.status()).config.ok).toBe(true);
    expect(await c.call("echo__echo", { text: "linked" })).toBe("linked");
  });
});

describe.concurrent(
  "a hostile path at mcp.json when the daemon starts",
  { timeout: 90_000 },
  () => {
    it.for([
      ["a symlink loop", loop, /is a symbolic link loop/],
      ["a FIFO", fifo, /is a FIFO \(named pipe\), not a regular file/],
    ] as [string, Hostile, RegExp][])(
      "%s: the daemon starts, serves and reports it; a good file then applies",
      async ([, make, message], context) => {
        const fleet = testFleet(context);
        const h = home(fleet);
        mkdirSync(join(h.dir, "config"), { recursive: true });
        await make(h.configPath, context);
        const d = await fleet.daemon(h);
        const c = await agent(fleet, h);
        const config = await configUntil(c, () => true);
        expect(config.ok).toBe(false);
        expect(config.error).toMatch(message);

        h.writeConfig({ echo });
        await configUntil(c, (s) => s.ok);
        expect(await c.call("echo__echo", { text: "recovered" })).toBe("recovered");
        await c.close();
        expect(await stopBounded(d)).toBe(0);
      },
    );
  },
);

describe("an unreadable mcp.json (the daemon runs as an unprivileged user)", () => {
  const OWNER = "mcpool-test-owner";
  let served: DaemonAsUser | undefined;

  afterEach(() => stopDaemonAs(served));

  /** As the daemon's user: polls status until the config fails, then calls echo. */
  const probeScript = (socketPath: string): string => `
    const { connect } = await import(${JSON.stringify(clientUrl)});
    const c = await connect({ socketPath: ${JSON.stringify(socketPath)}, clientName: "owner" });
    const deadline = Date.now() + 15000;
    let status = await c.status();
    while (status.config.ok && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      status = await c.status();
    }
    const answer = await c.call("echo__echo", { text: "still" });
    await c.close();
    console.log(JSON.stringify({ config: status.config, answer }));`;

  it("is a config error naming the permission; the last good config keeps serving", async () => {
    expect(process.getuid?.(), "this test creates a user and must run as root, as CI does").toBe(0);
    let uid = 0;
    served = await startDaemonAs(OWNER, (paths) => {
      uid = paths.uid;
      writeFileSync(paths.configPath, JSON.stringify({ mcpServers: { echo } }));
      chownSync(paths.configPath, uid, uid);
    });
    const { configPath, socketPath, process: child } = served;
    expect(child.exitCode, served.stderr()).toBeNull();

    // Saved unreadable the way an editor saves: a new file renamed over the old one.
    writeFileSync(`${configPath}.tmp`, JSON.stringify({ mcpServers: {} }), { mode: 0o000 });
    chownSync(`${configPath}.tmp`, uid, uid);
    renameSync(`${configPath}.tmp`, configPath);

    const out = JSON.parse(runNodeAs(OWNER, probeScript(socketPath)).trim()) as {
      config: ConfigStatus;
      answer: string;
    };
    expect(out.config.ok).toBe(false);
    expect(out.config.error).toMatch(/cannot be read: permission denied/);
    expect(out.answer).toBe("still");

    child.kill("SIGTERM");
    const code = await Promise.race([
      new Promise((resolve) => child.once("exit", resolve)),
      new Promise((resolve) => setTimeout(() => resolve("wedged"), EXIT_BOUND_MS).unref()),
    ]);
    expect(code).toBe(0);
  });
});
