/**
 * `mcpool wire` writes the lightest entry the machine has: a stock pipe to the
 * daemon's MCP socket when one is on PATH and carries a session at wire time, else `mcpool
 * bridge`. The host's PATH is made here — a directory holding only what the case needs — so
 * the choice does not depend on what this machine happens to have installed. Each written
 * entry is then spawned the way a host spawns it, and must list the server's tools.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath, scopeSocket } from "../helpers/bridge.js";
import {
  cliPath,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { RELAY_FILE } from "../../src/cli/hosts/pipe-entry.js";
import { onPath } from "../../src/cli/service/env.js";

interface Entry {
  command: string;
  args: string[];
}

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")] };

describe("mcpool wire: a stock pipe when one works, else mcpool bridge", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let cases = 0;

  beforeAll(async () => {
    home = testHome("mcpool-wire-pipe-");
    home.writeConfig({ echo: ECHO });
    daemon = await startDaemon(home);
    await waitFor(
      () => existsSync(scopeSocket(home, ["--server", "echo"])),
      10_000,
      "echo's MCP socket",
    );
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  /** A PATH of one directory holding `tools` (name → file it links to, or a script's text). */
  const pathWith = (tools: Record<string, { link: string } | { script: string }>): string => {
    const dir = join(home.dir, `path-${++cases}`);
    mkdirSync(dir, { recursive: true });
    for (const [name, tool] of Object.entries(tools)) {
      const file = join(dir, name);
      if ("link" in tool) symlinkSync(tool.link, file);
      else {
        writeFileSync(file, tool.script);
        chmodSync(file, 0o755);
      }
    }
    return dir;
  };

  /** `mcpool wire cursor --write` with `PATH`; the entry it wrote for echo. */
  const wire = async (path: string): Promise<{ entry: Entry; stdout: string }> => {
    const file = join(home.dir, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ mcpServers: { echo: ECHO } }, null, 2));
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve) => {
        const child = spawn(process.execPath, [cliPath, "wire", "cursor", "--write"], {
          env: { ...home.env, PATH: path },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.once("exit", (code) => resolve({ code, stdout, stderr }));
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const written = parse(readFileSync(file, "utf8")) as { mcpServers: { echo: Entry } };
    return { entry: written.mcpServers.echo, stdout: run.stdout };
  };

  /** Spawns `entry` as a host would and lists the tools through it. */
  const toolsThrough = async (entry: Entry): Promise<string[]> => {
    const transport = new StdioClientTransport({ command: entry.command, args: entry.args });
    const client = new Client({ name: "wire-pipe-test", version: "1.0.0" });
    await client.connect(transport);
    const pid = transport.pid;
    try {
      return (await client.listTools()).tools.map((tool) => tool.name);
    } finally {
      await client.close();
      if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the entry to exit");
    }
  };

  // perl-base is Essential on Debian and macOS ships perl: a machine without it is not ours.
  const perlPath = onPath("perl");
  const perl = (): string => {
    if (perlPath === undefined) throw new Error("perl is not on PATH");
    return perlPath;
  };

  it("pipe found: writes the perl relay, and a host gets the tools through it", async () => {
    const path = pathWith({ perl: { link: perl() } });
    const { entry, stdout } = await wire(path);
    expect(stdout).toContain("echo → perl to mcpool's socket of echo");
    expect(entry.command).toBe(join(path, "perl"));
    expect(entry.args).toEqual([RELAY_FILE, "echo", home.socketPath, process.execPath]);
    expect(await toolsThrough(entry)).toEqual(["echo", "add", "sleep", "pid"]);
  });

  it("skips a pipe that is on PATH but does not carry a session", async () => {
    // A `perl` that exits at once: present, first in line, and no bridge.
    const path = pathWith({ perl: { script: "#!/bin/sh\nexit 1\n" } });
    const { entry, stdout } = await wire(path);
    expect(stdout).toContain("echo → mcpool bridge --server echo");
    expect(entry.command).toBe(process.execPath);
  });

  it("pipe missing: writes mcpool bridge, and a host gets the tools through it", async () => {
    const { entry, stdout } = await wire(pathWith({}));
    expect(stdout).toContain("echo → mcpool bridge --server echo");
    expect(entry).toEqual({
      command: process.execPath,
      args: [binPath, "bridge", "--server", "echo", "--socket", home.socketPath],
    });
    expect(await toolsThrough(entry)).toEqual(["echo", "add", "sleep", "pid"]);
  });
});
