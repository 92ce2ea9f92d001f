/**
 * Building an unconnected SDK Transport for a row: the seam tests and custom transports
 * plug into (`createTransport`). Placeholders and secrets are read here, at the boundary,
 * and nowhere else.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/rows.js";
import { childEnvironment, type ChildEnvPolicy } from "./child-env.js";
import { ChildProcessTransport } from "./stdio-transport.js";

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface TransportContext {
  childEnv: ChildEnvPolicy;
  fetch?: FetchLike;
  /** Called with each stdout line of a stdio child that is not JSON-RPC. */
  onJunk?: (line: string) => void;
  /** Told when a stdio child starts and when it and its group are gone. */
  onChild?: ChildListener;
}

export type ChildListener = (event: {
  type: "spawn" | "gone";
  serverId: string;
  pid: number;
}) => void;

/** Returns an unconnected Transport for the row; throwing fails the connect. */
export type CreateTransport = (
  row: McpServerConfig,
  context: TransportContext,
) => Transport | Promise<Transport>;

export const createDefaultTransport: CreateTransport = (row, context) => {
  if (row.transport === "stdio") {
    return new ChildProcessTransport({
      command: row.command,
      args: row.args ?? [],
      env: childEnvironment(context.childEnv, row.env, process.env),
      ...(row.cwd ? { cwd: row.cwd } : {}),
      ...(context.onJunk ? { onJunk: context.onJunk } : {}),
      ...(context.onChild
        ? {
            onSpawn: (pid: number) => context.onChild?.({ type: "spawn", serverId: row.id, pid }),
            onGone: (pid: number) => context.onChild?.({ type: "gone", serverId: row.id, pid }),
          }
        : {}),
    });
  }
  return new StreamableHTTPClientTransport(new URL(row.url), {
    requestInit: { headers: { ...row.headers } },
    ...(context.fetch ? { fetch: context.fetch } : {}),
  });
};

/** What a transport can tell about the process behind it, if there is one. */
export function processOf(transport: Transport): ChildProcessTransport | undefined {
  return transport instanceof ChildProcessTransport ? transport : undefined;
}
