/**
 * Every host's round trip, through the built CLI and a real daemon: every host (the first four
 * and the eight beyond them) has a server in its own file; `mcpool import --write` brings
 * them all into an empty mcp.json; the daemon serves every one of them (each answers
 * tools/list); `mcpool wire <host> --write` rewrites every host's file; and the entry each
 * host now has — spawned as the host would spawn it — is `mcpool bridge --server ID`
 * serving that server's own tools.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { PoolClient } from "mcpool-client";
import { afterEach, describe, expect, it } from "vitest";
import { HOSTS, hostConfigPath, type HostName } from "../../src/cli/hosts/configs.js";
import { relayArgs } from "../../src/cli/hosts/pipe-entry.js";
import { onPath } from "../../src/cli/service/env.js";
import { binPath } from "../helpers/bridge.js";
import {
  cliPath,
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { startHttpMcpServer, type HttpMcpServer } from "../helpers/http-mcp-server.js";
import { entryCommand, hostFileText } from "../helpers/host-files.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

function mcpool(home: TestHome, ...args: string[]) {
  return mcpoolWith(home, home.env, ...args);
}

function mcpoolWith(home: TestHome, env: NodeJS.ProcessEnv, ...args: string[]) {
  return spawnSync(process.execPath, [cliPath, ...args], {
    env,
    cwd: join(home.dir, "project"),
    encoding: "utf8",
    timeout: 30_000,
  });
}

/** `mcpoolWith` without blocking this process, so the hosts are wired side by side. */
function mcpoolWithAsync(
  home: TestHome,
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      { env, cwd: join(home.dir, "project"), encoding: "utf8", timeout: 30_000 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        if (error !== null && status === null && error.killed !== true) reject(error);
        else resolve({ status, stdout, stderr });
      },
    );
  });
}

/** The tools `command` serves over stdio, listed by an MCP client as a host would. */
async function toolsOf(home: TestHome, command: string[]): Promise<string[]> {
  const env = Object.fromEntries(
    Object.entries(home.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const transport = new StdioClientTransport({
    command: command[0]!,
    args: command.slice(1),
    env,
    stderr: "pipe",
  });
  const host = new Client({ name: "round-trip-host", version: "1.0.0" });
  await host.connect(transport);
  const pid = transport.pid;
  try {
    return (await host.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await host.close();
    if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the host's entry to exit");
  }
}

describe("every host, imported and wired, round trip", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;
  let remote: HttpMcpServer | undefined;

  afterEach(async () => {
    await pool?.close();
    await daemon?.stop();
    await remote?.close();
    home?.remove();
    [home, daemon, pool, remote] = [undefined, undefined, undefined, undefined];
  });

  it("imports every host's server, serves each, and wires each host to a stock pipe or a bridge serving its tools", async () => {
    home = testHome("mcpool-round-trip-");
    mkdirSync(join(home.dir, "project"), { recursive: true });
    mkdirSync(dirname(home.configPath), { recursive: true });
    writeFileSync(home.configPath, '{\n  "mcpServers": {}\n}\n');
    const where = { home: home.dir, platform: "linux" as const, env: home.env };

    // Server i has tools tool_0…tool_i besides the echo server's own: each is told apart.
    const expected = new Map<string, string[]>();
    const files = new Map<HostName, string>();
    const base = ["add", "echo", "pid", "sleep"];
    for (const [i, host] of HOSTS.entries()) {
      const name = `echo-${host}`;
      const server = {
        command: process.execPath,
        args: [fixture("echo.mjs")],
        env: { FIXTURE_TOOLS: String(i + 1) },
      };
      const path = hostConfigPath(host, where);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, hostFileText(host, name, server));
      files.set(host, path);
      expected.set(name, [...base, ...Array.from({ length: i + 1 }, (_, t) => `tool_${t}`)].sort());
    }
    // And one remote server, in LM Studio's Cursor notation, its token from the environment.
    remote = await startHttpMcpServer();
    home.env.REMOTE_TOKEN = "round-trip-token";
    const lmStudio = files.get("lm-studio")!;
    const lm = JSON.parse(readFileSync(lmStudio, "utf8")) as {
      mcpServers: Record<string, unknown>;
    };
    lm.mcpServers["remote-lm"] = {
      url: remote.url,
      headers: { Authorization: "Bearer ${REMOTE_TOKEN}" },
    };
    writeFileSync(lmStudio, JSON.stringify(lm, null, 2));
    expected.set("remote-lm", ["echo", "session"]);

    const imported = mcpool(home, "import", "--write");
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stderr).not.toMatch(/skipped|clash|could not read/);

    daemon = await startDaemon(home);
    pool = await client(home);
    const live = pool;
    await waitFor(
      async () => {
        const states = await live.state();
        return [...expected.keys()].every((id) =>
          states.some((s) => s.id === id && s.status === "ready" && s.tools.length > 0),
        );
      },
      30_000,
      "every imported server to answer tools/list",
    );
    for (const state of await pool.state()) {
      expect(state.tools.map((t) => t.name).sort(), state.id).toEqual(expected.get(state.id));
    }

    // Wire picks the lightest entry that works: half the hosts find perl (a stock pipe to the
    // daemon's MCP socket of the server), half find no pipe at all (`mcpool bridge`).
    const perlOnly = join(home.dir, "perl-only");
    mkdirSync(perlOnly);
    const perl = onPath("perl");
    if (perl === undefined) throw new Error("perl is not on PATH");
    symlinkSync(perl, join(perlOnly, "perl"));
    const noPipe = join(home.dir, "no-pipe");
    mkdirSync(noPipe);
    // Each host has its own file and its own entries: the hosts are wired and their entries
    // listed side by side, each host's steps in order.
    const wiredHome = home;
    const wireHost = async (host: HostName, i: number): Promise<void> => {
      const piped = i % 2 === 0;
      const env = { ...wiredHome.env, PATH: piped ? perlOnly : noPipe };
      const wired = await mcpoolWithAsync(wiredHome, env, "wire", host, "--write", "--json");
      expect(wired.status, wired.stderr).toBe(0);
      const names = host === "lm-studio" ? [`echo-${host}`, "remote-lm"] : [`echo-${host}`];
      const report = JSON.parse(wired.stdout) as { servers: { name: string; server: string }[] };
      expect(report.servers.map((s) => [s.name, s.server])).toEqual(names.map((n) => [n, n]));
      const text = readFileSync(files.get(host)!, "utf8");
      for (const name of names) {
        const command = entryCommand(host, text, name);
        expect(command.slice(1), host).toEqual(
          piped
            ? relayArgs(name, wiredHome.socketPath)
            : [binPath, "bridge", "--server", name, "--socket", wiredHome.socketPath],
        );
        expect(await toolsOf(wiredHome, command), `${host}: ${name}`).toEqual(expected.get(name));
      }
    };
    await Promise.all(HOSTS.map(wireHost));
  }, 180_000);
});
