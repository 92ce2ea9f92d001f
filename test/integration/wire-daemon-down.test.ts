/**
 * Entries that work when the daemon is down. `mcpool wire cursor` is run
 * in the user's login environment (XDG_RUNTIME_DIR set, the daemon up), once with perl on PATH
 * (the relay file) and once without a pipe (`mcpool bridge`); both entries name the socket.
 * The daemon is then stopped and each entry is spawned as a host with a bare environment
 * (PATH and HOME; the SDK's default variables) spawns it: the user's daemon comes back on the
 * same socket, and the call answers. Where the relay cannot start it (the node it names is
 * gone), the host's `initialize` is answered with an error that names mcpool and the fix.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse } from "jsonc-parser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import { RELAY_FILE } from "../../src/cli/hosts/pipe-entry.js";
import { onPath } from "../../src/cli/service/env.js";
import { binPath } from "../helpers/bridge.js";
import { cliPath } from "../helpers/daemon.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

interface Entry {
  command: string;
  args: string[];
}

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")] };

describe("wired entries with the daemon down, from a host with a bare environment", () => {
  let home: string;
  let socket: string;
  /** The user's shell: where `wire` runs and where the daemon was started from. */
  let login: Record<string, string>;
  /** What a host hands its servers: PATH and HOME (and this run's leak marker). */
  let bare: Record<string, string>;
  let pipeEntry: Entry;
  let bridgeEntry: Entry;

  /** `mcpool serve` from the login environment, until it serves echo's MCP socket. */
  const serve = async (): Promise<number> => {
    const child = spawn(process.execPath, [cliPath, "serve"], {
      env: login,
      stdio: "ignore",
      detached: true,
    });
    child.unref();
    const echoSocket = mcpSocketPath(socket, "echo") as string;
    await waitFor(() => existsSync(echoSocket), 20_000, "echo's MCP socket");
    return child.pid!;
  };

  /** `mcpool wire cursor --write` with `path` as PATH; the entry it wrote for echo. */
  const wire = (path: string): Entry => {
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ mcpServers: { echo: ECHO } }, null, 2));
    const run = spawnSync(process.execPath, [cliPath, "wire", "cursor", "--write"], {
      env: { ...login, PATH: path },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    return (parse(readFileSync(file, "utf8")) as { mcpServers: { echo: Entry } }).mcpServers.echo;
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "mcpool-daemon-down-"));
    const runtime = join(home, "xdg");
    socket = join(runtime, "mcpool", "mcpool.sock");
    const marker = { MCPOOL_TEST_RUN: process.env.MCPOOL_TEST_RUN ?? "" };
    bare = { PATH: process.env.PATH ?? "", HOME: home, ...marker };
    login = { ...bare, XDG_RUNTIME_DIR: runtime };
    // Where the daemon finds its config from HOME alone: ~/.config/mcpool/mcp.json.
    const config = join(home, ".config", "mcpool", "mcp.json");
    mkdirSync(dirname(config), { recursive: true });
    writeFileSync(config, JSON.stringify({ mcpServers: { echo: ECHO } }));
    const pid = await serve();
    const perl = onPath("perl");
    if (perl === undefined) throw new Error("perl is not on PATH");
    const perlOnly = join(home, "perl-only");
    mkdirSync(perlOnly);
    symlinkSync(perl, join(perlOnly, "perl"));
    const noPipe = join(home, "no-pipe");
    mkdirSync(noPipe);
    pipeEntry = wire(perlOnly);
    bridgeEntry = wire(noPipe);
    await stopAll([pid]);
  });

  afterEach(async () => {
    await stopAll(daemonsFor(socket));
  });

  afterAll(async () => {
    await stopAll(daemonsFor(socket));
    rmSync(home, { recursive: true, force: true });
  });

  /** A host's SDK client over `entry` with the bare environment: `initialize`, then echo. */
  const echoThrough = async (entry: Entry): Promise<string> => {
    const transport = new StdioClientTransport({ ...entry, env: bare, stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: "bare-host", version: "1.0.0" });
    const pid = (): number | null => transport.pid;
    try {
      await client.connect(transport);
      // As hosts do: the tool list first, then the call.
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("echo");
      const result = await client.callTool({ name: "echo", arguments: { text: "back" } });
      return (result.content as { text: string }[])[0]?.text ?? "";
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${stderr}`);
    } finally {
      const entryPid = pid();
      await client.close().catch(() => undefined);
      if (entryPid !== null) await waitFor(() => !alive(entryPid), 10_000, "the entry to exit");
    }
  };

  it("both entries name the socket they were wired to, and the pipe is the relay file", () => {
    expect(pipeEntry.args).toEqual([RELAY_FILE, "echo", socket, process.execPath]);
    expect(bridgeEntry).toEqual({
      command: process.execPath,
      args: [binPath, "bridge", "--server", "echo", "--socket", socket],
    });
  });

  it.each(["pipe", "bridge"] as const)(
    "daemon down: the %s entry brings the user's daemon up on the same socket, and the call answers",
    async (kind) => {
      expect(daemonsFor(socket)).toEqual([]);
      const text = await echoThrough(kind === "pipe" ? pipeEntry : bridgeEntry);
      expect(text).toBe("back");
      expect(daemonsFor(socket)).toHaveLength(1);
    },
  );

  it("daemon down and no node to start it: the host's initialize error names mcpool, the socket and the fix", async () => {
    // The node the entry was wired with is gone (an nvm switch, an upgrade).
    const [file, id, sock] = pipeEntry.args as [string, string, string];
    const entry = {
      command: pipeEntry.command,
      args: [file, id, sock, join(home, "gone", "node")],
    };
    const transport = new StdioClientTransport({ ...entry, env: bare });
    const client = new Client({ name: "bare-host", version: "1.0.0" });
    try {
      const refused = await client.connect(transport).then(
        () => "connected",
        (error: Error) => error.message,
      );
      expect(refused).toContain(`mcpool: no daemon answers at ${socket}`);
      expect(refused).toContain("mcpool service install");
      expect(refused).toContain("mcpool serve");
      expect(daemonsFor(socket)).toEqual([]);
    } finally {
      const pid = transport.pid;
      await client.close().catch(() => undefined);
      if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the relay to exit");
    }
  });
});
