/**
 * `mcpool bridge`: the process around src/bridge. It reaches the daemon —
 * starting it when none answers, socket file or not — serves MCP on stdio (default)
 * or on Streamable HTTP at 127.0.0.1:PORT, and runs until the host goes away (stdin ends)
 * or a signal asks it to stop. In stdio mode stdout is the protocol channel: everything this file has to say
 * goes to stderr.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { connect, McpPoolError, type PoolClient } from "mcpool-client";
// The bridge's rooms, not its facade: the facade carries the HTTP front (the SDK's Streamable
// HTTP and its server framework), which only `--http` loads.
import { answersApart } from "../../bridge/fronts/answers-apart.js";
import type { CatalogOptions } from "../../bridge/catalog/on-demand.js";
import { BridgeScopeError, createBridge, type Bridge } from "../../bridge/legacy/bridge-server.js";
import { reconnectWindowMs } from "../../bridge/lean/session.js";
import { VERSION } from "../../version.js";
import { EXIT } from "../output/exit-codes.js";
import { UsageError } from "../output/usage-error.js";
import { catalogOption, type CatalogFlags, type CommandContext } from "./context.js";

export interface BridgeCommandOptions {
  socketPath: string;
  /** Passed to an auto-started daemon as `--config`. */
  configPath?: string;
  /** `--servers a,b`. */
  servers?: readonly string[];
  /** `--server ID`. */
  server?: string;
  /** `--http PORT`; absent = stdio. */
  httpPort?: number;
  /** `--token T`; "none" = no token (loopback test harnesses only); absent = generated. */
  token?: string;
  /** `--catalog[=auto]`, `--catalog-tokens N`. */
  catalog?: CatalogOptions;
  err(line: string): void;
}

/** The daemon's argv when the bridge has to start it: this very CLI, `serve`. */
export function daemonCommand(configPath?: string): string[] {
  const main = fileURLToPath(new URL("../main.js", import.meta.url));
  return [process.execPath, main, "serve", ...(configPath ? ["--config", configPath] : [])];
}

function untilStopped(stdio: boolean): Promise<string> {
  return new Promise((resolve) => {
    const stop = (why: string) => () => resolve(why);
    process.once("SIGINT", stop("SIGINT"));
    process.once("SIGTERM", stop("SIGTERM"));
    if (stdio) {
      // The host closed our stdin: it is done with us.
      process.stdin.once("end", stop("stdin closed"));
      process.stdin.once("close", stop("stdin closed"));
      // A host that went away mid-answer: nobody is left to read stdout.
      process.stdout.once("error", stop("stdout closed"));
    }
  });
}

/**
 * A stdio bridge that has nothing to bridge to: every request the host sends (its
 * `initialize` first) is answered with a JSON-RPC error carrying `message`, until the host
 * goes away — what a host shows its user, where the bridge's stderr reaches no screen.
 */
async function refuseRequests(message: string, data: Record<string, unknown>): Promise<void> {
  const stdio = new StdioServerTransport();
  stdio.onmessage = (request) => {
    if (!("method" in request) || !("id" in request)) return;
    const error = { code: ErrorCode.InternalError, message, data };
    void stdio.send({ jsonrpc: "2.0", id: request.id, error }).catch(() => undefined);
  };
  await stdio.start();
  await untilStopped(true);
  await stdio.close();
}

export async function runBridgeCommand(options: BridgeCommandOptions): Promise<number> {
  const { err } = options;
  let client: PoolClient;
  try {
    client = await connect({
      clientName: options.server ? `mcpool-bridge/${options.server}` : "mcpool-bridge",
      socketPath: options.socketPath,
      autoStart: true,
      autoStartCommand: daemonCommand(options.configPath),
      // A daemon restarting: the host's requests wait for it, as the lean bridge's do.
      reconnectWaitMs: reconnectWindowMs(process.env),
    });
  } catch (error) {
    if (!(error instanceof McpPoolError)) throw error;
    const fix = `start it with \`mcpool service install\` (now and at every login) or \`mcpool serve\`, then restart this MCP server`;
    err(`mcpool bridge: ${error.message}`);
    err(`mcpool bridge: no daemon at ${options.socketPath}: ${fix}`);
    if (options.httpPort === undefined) {
      // The host shows an answer, not our stderr: its initialize gets why, and the fix.
      await refuseRequests(
        `mcpool: no daemon at ${options.socketPath} (${error.message}); ${fix}.`,
        { code: error.code, detail: error.detail },
      );
    }
    return EXIT.notRunning;
  }
  let bridge: Bridge;
  try {
    bridge = await createBridge({
      client,
      ...(options.server !== undefined ? { server: options.server } : {}),
      ...(options.servers !== undefined ? { servers: options.servers } : {}),
      ...(options.catalog !== undefined ? { catalog: options.catalog } : {}),
      name: "mcpool",
      version: VERSION,
      log: err,
    });
  } catch (error) {
    await client.close();
    if (error instanceof BridgeScopeError) {
      err(`mcpool bridge: ${error.message}`);
      if (options.httpPort === undefined) await refuseRequests(`mcpool: ${error.message}`, {});
      return EXIT.badInput;
    }
    throw error;
  }

  if (options.httpPort === undefined) {
    // Either era: the host's opening message says which (src/bridge/modern/era-switch.ts).
    const stdio = new StdioServerTransport();
    answersApart(stdio, process.stdout);
    // One host, whose session carries on across the daemon's restarts with this client: it
    // goes by the client's own name, kept across its reconnects (its tasks and subscriptions).
    const served = await bridge.serve(stdio, { name: client.tasks.owner });
    const why = await untilStopped(true);
    await served.close();
    err(`mcpool bridge: stopping (${why})`);
  } else {
    const token =
      options.token === "none" ? null : (options.token ?? randomBytes(24).toString("base64url"));
    const { listenHttp } = await import("../../bridge/fronts/http.js");
    const http = await listenHttp({ bridge, port: options.httpPort, token, log: err });
    if (token === null) {
      err(
        "mcpool bridge: --token none: no token is asked for; any process on this machine can use the pool through this port",
      );
    } else if (options.token === undefined) {
      err(`mcpool bridge: token ${token} (send "Authorization: Bearer ${token}")`);
    }
    // Last: the line that says it is ready.
    err(`mcpool bridge: serving ${http.url}`);
    const why = await untilStopped(false);
    err(`mcpool bridge: stopping (${why})`);
    await http.close();
  }
  await bridge.close();
  await client.close();
  return EXIT.ok;
}

/** What `mcpool bridge` reads of its command line. */
type BridgeFlags = CatalogFlags & {
  server?: string;
  servers?: string;
  http?: string;
  token?: string;
};

/** `mcpool bridge [--server ID | --servers A,B] [--http PORT [--token T|none]] [--catalog[=auto]]`. */
export function bridgeCommand(context: CommandContext<BridgeFlags>): Promise<number> {
  const { flags } = context;
  return runBridgeCommand({
    socketPath: context.target(),
    ...bridgeScope(flags.server, flags.servers),
    ...(flags.config ? { configPath: flags.config } : {}),
    ...(flags.http !== undefined ? { httpPort: portOf(flags.http) } : {}),
    ...(flags.token !== undefined ? { token: flags.token } : {}),
    ...catalogOption(flags.catalog, flags["catalog-tokens"]),
    err: context.err,
  });
}

function bridgeScope(
  server: string | undefined,
  servers: string | undefined,
): { server?: string; servers?: string[] } {
  if (server !== undefined && servers !== undefined) {
    throw new UsageError("bridge --server and --servers exclude each other");
  }
  if (server !== undefined) return { server };
  if (servers === undefined) return {};
  const ids = servers.split(",").map((id) => id.trim());
  return { servers: ids.filter((id) => id !== "") };
}

function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`bridge --http takes a port number, not "${value}"`);
  }
  return port;
}
