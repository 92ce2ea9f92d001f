/**
 * One live MCP connection of a server: the pool's client, its transport and what the pool
 * counts on it. Hanging one up is the client's close, which closes its transport: the transport is
 * closed directly only when that failed.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import type { McpClient } from "../mcp/client.js";
import { ErrorCode, isMcpError } from "../core/mcp-error.js";

/** The drain bound when neither the row nor the pool sets a call timeout: the SDK's, ms. */
export const DEFAULT_DRAIN_MS = 60_000;

export interface Connection {
  client: McpClient;
  transport: Transport;
  pid: number | undefined;
  startedAt: number;
  instructions: string | undefined;
  capabilities: Record<string, unknown> | undefined;
  /** The server's own name, title, version and icons, as its handshake or discover gave them. */
  serverInfo: Record<string, unknown> | undefined;
  /** The era the connection speaks and the revision it named, once connected. */
  era: "legacy" | "modern" | undefined;
  protocolVersion: string | undefined;
  /** Calls in flight on this connection; a retiring connection waits for zero. */
  inflight: number;
  /** Set when we are closing it, so its close is not mistaken for a crash. */
  closing: boolean;
  /** It answered a request: a crash now is the crash of a healthy server. */
  answered: boolean;
  /** A call timed out and a ping went unanswered: we are replacing it. */
  unresponsive: boolean;
  /** The ping in progress after a call timed out, if any: one at a time. */
  pinging?: Promise<void> | undefined;
  /** Told when the last call in flight settles, or the connection closes. */
  drained?: () => void;
  /**
   * Its remote session went on in another daemon (a hand-over): ending it here ends nothing
   * there, no DELETE (src/pool/conversations/client.ts `endRemote`).
   */
  handedAway?: boolean;
}

/** A connection not yet connected: nothing in flight, nothing learnt about the server. */
export function newConnection(
  client: McpClient,
  transport: Transport,
  startedAt: number,
): Connection {
  return {
    client,
    transport,
    pid: undefined,
    startedAt,
    instructions: undefined,
    capabilities: undefined,
    serverInfo: undefined,
    era: undefined,
    protocolVersion: undefined,
    inflight: 0,
    closing: false,
    answered: false,
    unresponsive: false,
  };
}

/**
 * Resolves once no call is in flight on `connection` (or it closed), or after `boundMs`,
 * whichever comes first. The bound's timer is cleared either way.
 */
export async function drained(connection: Connection, boundMs: number): Promise<void> {
  if (connection.inflight === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    connection.drained = resolve;
    timer = setTimeout(resolve, boundMs);
    timer.unref();
  });
  clearTimeout(timer);
}

/** Marks the connection as ours to close and closes it once; never rejects. */
export async function hangUp(connection: Connection): Promise<void> {
  connection.closing = true;
  try {
    await connection.client.close();
  } catch {
    await connection.transport.close().catch(() => undefined);
  }
}

/**
 * A call on `connection` timed out: slow, or hung? A ping within `budgetMs` tells, one
 * at a time. A server that answers anything is alive and only slow; `hung` is told when
 * nothing came back in time.
 */
export function checkAlive(connection: Connection, budgetMs: number, hung: () => void): void {
  if (connection.pinging) return;
  connection.pinging = connection.client
    .ping({ timeout: budgetMs })
    .then(
      () => undefined,
      (error: unknown) => {
        if (isMcpError(error, ErrorCode.RequestTimeout)) hung();
      },
    )
    .finally(() => (connection.pinging = undefined));
}

/** The connections of one server being retired: each drains, then hangs up, in the background. */
export class Retirements {
  readonly #pending = new Set<Promise<void>>();

  /**
   * Marks `connection` as ours to close, waits for its calls (at most `boundMs`), hangs it
   * up, then calls `closed`. Resolves when all of that is done.
   */
  retire(connection: Connection, boundMs: number, closed: () => void): Promise<void> {
    connection.closing = true;
    const retiring = (async () => {
      await drained(connection, boundMs);
      await hangUp(connection);
      closed();
    })();
    this.#pending.add(retiring);
    return retiring.finally(() => this.#pending.delete(retiring));
  }

  /** Resolves once every connection retiring now is closed. */
  async settled(): Promise<void> {
    await Promise.all(this.#pending);
  }
}
