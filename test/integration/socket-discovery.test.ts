/**
 * One daemon per user, whatever a host strips from the environment. Many
 * hosts start their servers with the MCP SDK's default environment (no XDG_RUNTIME_DIR): a
 * `mcpool bridge --server ID` entry must still find the user's daemon in systemd's
 * `/run/user/<uid>`, and never start a second one under /tmp. Discovery is checked with an
 * injected runtime base, then for real as an unprivileged user whose `/run/user/<uid>` this
 * test creates (root's would change every other test's default socket). An auto-start never
 * starts a daemon for a socket in another user's folder: the host's `initialize` says why.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { defaultSocketPath } from "mcpool-client";
import { foreignSocketFolder } from "mcpool-client/paths";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath } from "../helpers/bridge.js";
import { cliPath } from "../helpers/daemon.js";
import { alive, childrenOf, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { asUser, ensureUser } from "../helpers/users.js";

/** A user of this test alone: its /run/user/<uid> and /tmp/mcpool-<uid> are nobody else's. */
const USER = "mcpool-runtime";
const uid = process.getuid?.() as number;
const tmpFallback = (id: number): string => `/tmp/mcpool-${id}/mcpool.sock`;

describe("defaultSocketPath with an injected runtime base", () => {
  let base: string;
  let other: number;

  beforeAll(() => {
    other = ensureUser(USER);
    base = mkdtempSync(join(tmpdir(), "mcpool-runtime-base-"));
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const runtimeDir = (mode: number, owner = uid): string => {
    const dir = join(base, String(uid));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    chmodSync(dir, mode);
    chownSync(dir, owner, owner);
    return dir;
  };

  it("prefers <base>/<uid> when it is a directory of ours with mode 0700, as systemd makes it", () => {
    const dir = runtimeDir(0o700);
    expect(defaultSocketPath({}, base)).toBe(join(dir, "mcpool", "mcpool.sock"));
    expect(defaultSocketPath({ PATH: "/usr/bin", HOME: "/home/x" }, base)).toBe(
      join(dir, "mcpool", "mcpool.sock"),
    );
  });

  it("falls back to /tmp when <base>/<uid> is absent, too open, another user's or a symlink", () => {
    rmSync(join(base, String(uid)), { recursive: true, force: true });
    expect(defaultSocketPath({}, base)).toBe(tmpFallback(uid));
    runtimeDir(0o755);
    expect(defaultSocketPath({}, base)).toBe(tmpFallback(uid));
    runtimeDir(0o700, other);
    expect(defaultSocketPath({}, base)).toBe(tmpFallback(uid));
    const real = runtimeDir(0o700);
    const linked = mkdtempSync(join(tmpdir(), "mcpool-runtime-link-"));
    try {
      symlinkSync(real, join(linked, String(uid)));
      expect(defaultSocketPath({}, linked)).toBe(tmpFallback(uid));
    } finally {
      rmSync(linked, { recursive: true, force: true });
    }
  });

  it("takes MCPOOL_SOCKET, then XDG_RUNTIME_DIR, before the runtime base", () => {
    runtimeDir(0o700);
    expect(defaultSocketPath({ MCPOOL_SOCKET: "/x/m.sock" }, base)).toBe("/x/m.sock");
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: "/run/me" }, base)).toBe(
      "/run/me/mcpool/mcpool.sock",
    );
  });

  it("calls a socket in another user's folder foreign, one in ours or under /tmp not", () => {
    const theirs = join(base, "theirs");
    mkdirSync(theirs, { recursive: true });
    chownSync(theirs, other, other);
    expect(foreignSocketFolder(join(theirs, "mcpool", "mcpool.sock"))).toBe(
      `${theirs} belongs to uid ${other}, not to this user (uid ${uid})`,
    );
    expect(foreignSocketFolder(join(base, "mine", "deep", "mcpool.sock"))).toBeUndefined();
    expect(foreignSocketFolder(join(tmpdir(), "mcpool-nowhere-x", "m.sock"))).toBeUndefined();
  });
});

/** What a host's SDK client does: spawn the entry, initialize, list, call echo's `pid`. */
async function pidThrough(command: string, args: string[], env: Record<string, string>) {
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "bare-host", version: "1.0.0" });
  try {
    await client.connect(transport);
    // As hosts do: the tool list first, then the call.
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("pid");
    const result = await client.callTool({ name: "pid", arguments: {} });
    return Number((result.content as { text: string }[])[0]?.text);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${stderr}`);
  } finally {
    const pid = transport.pid;
    await client.close().catch(() => undefined);
    if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the entry to exit");
  }
}

describe("a host with a bare environment, as a user whose /run/user/<uid> systemd made", () => {
  let userUid: number;
  let home: string;
  let runtime: string;
  let daemon: ChildProcess | undefined;
  const marker = { MCPOOL_TEST_RUN: process.env.MCPOOL_TEST_RUN ?? "" };

  beforeAll(async () => {
    userUid = ensureUser(USER);
    runtime = `/run/user/${userUid}`;
    rmSync(runtime, { recursive: true, force: true });
    mkdirSync(runtime, { mode: 0o700 });
    chmodSync(runtime, 0o700);
    chownSync(runtime, userUid, userUid);
    home = mkdtempSync(join(tmpdir(), "mcpool-runtime-home-"));
    chmodSync(home, 0o755);
    const configDir = join(home, ".config", "mcpool");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(
      join(configDir, "mcp.json"),
      JSON.stringify({
        mcpServers: { echo: { command: process.execPath, args: [fixture("echo.mjs")] } },
      }),
    );
    for (const dir of [home, join(home, ".config"), configDir, join(configDir, "mcp.json")]) {
      chownSync(dir, userUid, userUid);
    }
    // The user's daemon as the service runs it: in the login session's XDG_RUNTIME_DIR.
    daemon = spawn("setpriv", asUser(USER, [process.execPath, cliPath, "serve"]), {
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_RUNTIME_DIR: runtime, ...marker },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    daemon.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(
      () => stderr.includes("serving ") || daemon?.exitCode !== null,
      20_000,
      "the user's daemon to serve",
    );
    expect(daemon.exitCode, stderr).toBeNull();
    // Echo listed before a host calls it (asked as the user: root may not use their socket).
    const env = { PATH: process.env.PATH ?? "", HOME: home, XDG_RUNTIME_DIR: runtime };
    const ready = (): boolean => {
      const status = spawnSync(
        "setpriv",
        asUser(USER, [process.execPath, cliPath, "status", "--json"]),
        { env, encoding: "utf8", timeout: 10_000 },
      );
      return status.stdout.includes('"ready"');
    };
    await waitFor(ready, 30_000, "echo to be ready");
  });

  afterAll(async () => {
    await stopAll([
      ...(daemon?.pid !== undefined ? [daemon.pid] : []),
      ...daemonsFor(tmpFallback(userUid)),
    ]);
    for (const dir of [runtime, home, `/tmp/mcpool-${userUid}`]) {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("`mcpool bridge --server ID` with only PATH and HOME reaches the user's daemon, and starts none", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: home, ...marker };
    const bridge = [process.execPath, binPath, "bridge", "--server", "echo"];
    const pid = await pidThrough("setpriv", asUser(USER, bridge), env);
    // The user's daemon's own child answered; nothing was started under /tmp.
    expect(childrenOf(daemon!.pid!)).toContain(pid);
    expect(daemonsFor(tmpFallback(userUid))).toEqual([]);
    expect(existsSync(`/tmp/mcpool-${userUid}`)).toBe(false);
  });

  it("never auto-starts a daemon in another user's folder: the host's initialize says why", async () => {
    // Root with the user's XDG_RUNTIME_DIR, as `sudo` keeps it: that folder is not root's.
    const theirs = join(home, "xdg");
    mkdirSync(theirs);
    chownSync(theirs, userUid, userUid);
    const socket = join(theirs, "mcpool", "mcpool.sock");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [binPath, "bridge", "--server", "echo"],
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_RUNTIME_DIR: theirs, ...marker },
      stderr: "pipe",
    });
    const client = new Client({ name: "sudo-host", version: "1.0.0" });
    try {
      const refused = await client.connect(transport).then(
        () => "connected",
        (error: Error) => error.message,
      );
      expect(refused).toContain(`not starting a daemon for ${socket}`);
      expect(refused).toContain(`${theirs} belongs to uid ${userUid}`);
      expect(refused).toContain("mcpool service install");
      expect(existsSync(join(theirs, "mcpool"))).toBe(false);
      expect(daemonsFor(socket)).toEqual([]);
    } finally {
      const pid = transport.pid;
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the bridge to exit");
      await stopAll(daemonsFor(socket));
    }
  });
});
