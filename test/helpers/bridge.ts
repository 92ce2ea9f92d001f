/**
 * `mcpool bridge` from the built CLI, as a host sees it: an SDK Client over stdio, or the
 * bridge's Streamable HTTP listener with the URL and token it printed on stderr.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import { relayArgs } from "../../src/cli/hosts/pipe-entry.js";
import {
  cliPath,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "./daemon.js";
import { alive, waitFor } from "./processes.js";

export interface StdioBridge {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
  close(): Promise<void>;
}

/** `env` without its unset names: what a spawn with an env of strings takes. */
export function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** The installed `mcpool` executable: the lean bridge's byte pipe before anything else. */
export const binPath = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

/**
 * The ways a host reaches the pool over stdio: `sdk`, the full CLI's SDK bridge
 * (main.js); `lean`, the `mcpool` executable, a byte pipe to the daemon's MCP socket; `perl`,
 * the stock-pipe entry `mcpool wire` writes on a machine without socat or nc.
 */
export const BRIDGE_PATHS = ["sdk", "lean", "perl"] as const;

/** SDK v2 client options for a 2026-07-28 host: that revision pinned, no fallback. */
export const MODERN = { versionNegotiation: { mode: { pin: "2026-07-28" as const } } };
export type BridgePath = (typeof BRIDGE_PATHS)[number];

/** The daemon's MCP socket for the scope `bridge …args` names (`--server ID` or the pool). */
export function scopeSocket(home: TestHome, args: readonly string[]): string {
  const at = args.indexOf("--server");
  const path = mcpSocketPath(home.socketPath, at === -1 ? undefined : args[at + 1]);
  if (path === undefined) throw new Error(`no MCP socket for ${args.join(" ")}`);
  return path;
}

/**
 * A home (its folder named from `prefix`) whose daemon pools `rows(home)`, for a test file's
 * bridges to `server`: before the file's tests the daemon serves, `server`'s MCP socket
 * listens and every server is ready; after them the daemon is stopped and the home removed.
 */
export function bridgeHome(
  prefix: string,
  server: string,
  rows: (home: TestHome) => Record<string, unknown>,
): TestHome {
  const home = testHome(prefix);
  let daemon: RunningDaemon | undefined;
  beforeAll(async () => {
    home.writeConfig(rows(home));
    daemon = await startDaemon(home);
    const socket = scopeSocket(home, ["--server", server]);
    await waitFor(() => existsSync(socket), 10_000, `${server}'s MCP socket`);
    await serversReady(home);
  });
  afterAll(async () => {
    await daemon?.stop();
    home.remove();
  });
  return home;
}

/** What a host spawns for `mcpool bridge …args` on `via`. */
export function bridgeCommand(
  home: TestHome,
  args: string[],
  via: BridgePath,
): { command: string; args: string[] } {
  if (via === "perl") {
    const at = args.indexOf("--server");
    const id = at === -1 ? "@pool" : (args[at + 1] as string);
    return { command: "perl", args: relayArgs(id, home.socketPath) };
  }
  return {
    command: process.execPath,
    args: [via === "sdk" ? cliPath : binPath, "bridge", ...args],
  };
}

/** An SDK Client connected to `mcpool bridge …args` over stdio (through `via`). */
export async function stdioBridge(
  home: TestHome,
  args: string[] = [],
  capabilities: ClientCapabilities = {},
  via: BridgePath = "sdk",
): Promise<StdioBridge> {
  const transport = new StdioClientTransport({
    ...bridgeCommand(home, args, via),
    env: stringEnv(home.env),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "bridge-test", version: "1.0.0" }, { capabilities });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw new Error(`the bridge did not start: ${(error as Error).message}\n${stderr}`);
  }
  const pid = transport.pid;
  return {
    client,
    transport,
    stderr: () => stderr,
    async close() {
      await client.close().catch(() => undefined);
      if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the bridge to exit");
    },
  };
}

export interface HttpBridgeProcess {
  child: ChildProcess;
  url: string;
  /** The token it printed; undefined when started with --token. */
  token: string | undefined;
  stderr(): string;
  stop(): Promise<void>;
}

/** `mcpool bridge --http 0 …args`, once it says where it serves. */
export async function httpBridge(home: TestHome, args: string[] = []): Promise<HttpBridgeProcess> {
  const child = spawn(process.execPath, [cliPath, "bridge", "--http", "0", ...args], {
    env: home.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitFor(
      () => /serving http:\/\/\S+/.test(stderr) || child.exitCode !== null,
      20_000,
      "the bridge to listen",
    );
  } catch (error) {
    // Not listening within the bound: nobody holds it, so it must not outlive the test (left
    // running, it starts a daemon of its own once the test's is stopped and its home removed).
    child.kill("SIGKILL");
    await exited;
    throw new Error(`${(error as Error).message}: ${stderr}`);
  }
  if (child.exitCode !== null) throw new Error(`the bridge exited: ${stderr}`);
  const url = /serving (http:\/\/\S+)/.exec(stderr)?.[1] as string;
  const token = /token (\S+) \(send/.exec(stderr)?.[1];
  return {
    child,
    url,
    token,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
