/**
 * The lightest host entry this machine has. The daemon speaks MCP on a Unix
 * socket per server (src/bridge/fronts/mcp-sockets.ts), so any program that joins stdio to a Unix
 * socket is a bridge: perl (Debian's Essential perl-base and macOS both ship it) running the
 * relay this package installs (`relay/mcpool-pipe.pl`: builtins only, a few MB), `socat`, or
 * OpenBSD `nc -U`. Perl comes first: its relay alone starts the daemon when it is down (it
 * execs `mcpool bridge --server ID --socket …`), or tells the host how to. Each is taken only
 * when it is on PATH and, run against the server's socket, answers an MCP `initialize`; else
 * the entry stays `mcpool bridge --server ID`. Every entry names the daemon's socket, so it
 * reaches this daemon whatever environment its host gives it.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { mcpSocketPath } from "../../bridge/lean/mcp-socket-paths.js";
import { onPath } from "../service/env.js";

export interface PipeEntry {
  /** Which stock tool. */
  tool: "socat" | "nc" | "perl";
  /** Absolute: a host started from a desktop launcher has a PATH of its own. */
  command: string;
  args: string[];
}

/** The relay's file name: what marks an entry as mcpool's perl pipe. */
export const RELAY_NAME = "mcpool-pipe.pl";

/**
 * The perl relay, a file of this package (package.json "files": `relay/`), beside `dist/`:
 * it finds `dist/cli/bin.js` from its own path when it has to start the daemon.
 */
export const RELAY_FILE = fileURLToPath(new URL(`../../../relay/${RELAY_NAME}`, import.meta.url));

/**
 * The relay's argv for the scope `id` (a server id, or `@pool`, `@catalog`, `@catalog-auto`)
 * of the daemon at `daemonSocket`; `node` runs `mcpool bridge` when the daemon is down.
 */
export function relayArgs(id: string, daemonSocket: string, node = process.execPath): string[] {
  return [RELAY_FILE, id, daemonSocket, node];
}

/**
 * The entries to try, best first, for server `serverId` of the daemon at `daemonSocket`
 * (bench/entry.mjs measures each of them); none when the server has no MCP socket.
 */
export function pipeCandidates(
  daemonSocket: string,
  serverId: string,
): { tool: PipeEntry["tool"]; args: string[] }[] {
  const socketPath = mcpSocketPath(daemonSocket, serverId);
  if (socketPath === undefined) return [];
  return [
    { tool: "perl", args: relayArgs(serverId, daemonSocket) },
    { tool: "socat", args: ["STDIO", `UNIX-CONNECT:${socketPath}`] },
    { tool: "nc", args: ["-U", socketPath] },
  ];
}

/**
 * Bound on one check: spawn the tool, connect, initialize, read the answer. The verdict is the
 * answer, or the tool ending (missing, refused) without one; the bound only ends a tool that
 * does neither, so it is far beyond a start on a busy machine (perl took over 5 s at a load
 * average of 28 on two cores): a slow start must not write another entry.
 */
export const PIPE_CHECK_MS = 30_000;

/** The check's first line, an MCP `initialize` (a test sends it through an entry too). */
export const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "mcpool-wire-check", version: "0" },
  },
})}\n`;

/** Whether `entry` carries an MCP session: an `initialize` sent through it is answered. */
export function pipeWorks(entry: PipeEntry, timeoutMs = PIPE_CHECK_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(entry.command, entry.args, { stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    let answered = false;
    const done = (works: boolean): void => {
      answered ||= works;
      clearTimeout(timer);
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      for (const line of out.split("\n").slice(0, -1)) {
        try {
          const message = JSON.parse(line) as { id?: unknown; result?: unknown };
          if (message.id === 1 && message.result !== undefined) done(true);
        } catch {
          // not an answer
        }
      }
    });
    child.stdin.on("error", () => undefined);
    child.once("error", () => done(false));
    // Reaped before the verdict: the check leaves no process behind.
    child.once("close", () => {
      clearTimeout(timer);
      resolve(answered);
    });
    child.stdin.write(INITIALIZE);
  });
}

/**
 * The first stock pipe on `env.PATH` that carries a session to server `serverId` of the
 * daemon at `daemonSocket`; undefined when the server has no socket or no tool works (the
 * caller writes `mcpool bridge`).
 */
export async function findPipeEntry(
  daemonSocket: string,
  serverId: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PipeEntry | undefined> {
  const socketPath = mcpSocketPath(daemonSocket, serverId);
  if (socketPath === undefined || !existsSync(socketPath)) return undefined;
  for (const { tool, args } of pipeCandidates(daemonSocket, serverId)) {
    const command = onPath(tool, env.PATH ?? "");
    if (command === undefined) continue;
    const entry: PipeEntry = { tool, command, args };
    if (await pipeWorks(entry)) return entry;
  }
  return undefined;
}

/**
 * The server a pipe entry `mcpool wire` wrote serves: the relay's first argument, or the
 * name of the daemon's MCP socket a socat, nc or older one-line perl entry names.
 */
export function pipeEntryServer(args: readonly unknown[]): string | undefined {
  const relay = args.findIndex((a) => typeof a === "string" && basename(a) === RELAY_NAME);
  if (relay !== -1) {
    const id = args[relay + 1];
    return typeof id === "string" ? id : undefined;
  }
  for (const arg of args) {
    const socket = typeof arg === "string" ? /[\\/]mcp[\\/]([^\\/]+)\.sock$/.exec(arg) : null;
    if (socket) return socket[1];
  }
  return undefined;
}

/** An entry `mcpool wire` wrote with a pipe. */
export function isPipeEntry(args: readonly unknown[]): boolean {
  return pipeEntryServer(args) !== undefined;
}
