/**
 * Handing a pool's live stdio children to another daemon (src/daemon/handover/README.md):
 * each connection waits, bounded, for its calls in flight, then its transport stops reading
 * and says what the successor needs (stdio-transport.ts `handOff()`). The successor took them:
 * release() lets go without a signal. It did not: resume() reads them again.
 */
import type { McpServerConfig } from "../../config/rows.js";
import type { HandedChild } from "../mcp/transport.js";
import { processOf } from "../mcp/transport.js";
import { drained, type Connection } from "./connection.js";
import type { EntryState } from "./state.js";

/** One child handed off: its row as the pool dialled it, and what goes to the successor. */
export interface HandedOff {
  serverId: string;
  row: McpServerConfig;
  child: HandedChild;
  readonly connection: Connection;
}

/** Hands off every entry's live stdio child, each once its calls settle (within `drainMs`). */
export async function handOff(
  entries: readonly EntryState[],
  drainMs: number,
): Promise<HandedOff[]> {
  const live = entries.filter((entry) => entry.connection !== undefined);
  await Promise.all(live.map((entry) => drained(entry.connection as Connection, drainMs)));
  const handed: HandedOff[] = [];
  for (const entry of live) {
    const connection = entry.connection;
    const transport = connection ? processOf(connection.transport) : undefined;
    const session = connection?.client.handedSession();
    if (!connection || !transport || !session) continue;
    const child = transport.handOff(session);
    if (child) handed.push({ serverId: entry.id, row: entry.row, child, connection });
  }
  return handed;
}

/** The successor has them: this pool forgets each child without signalling it. */
export function releaseHandedOff(handed: readonly HandedOff[]): void {
  for (const { connection } of handed) {
    connection.closing = true;
    processOf(connection.transport)?.release();
  }
}

/** The successor did not take them: this pool reads each child again. */
export function resumeHandedOff(handed: readonly HandedOff[]): void {
  for (const { connection } of handed) processOf(connection.transport)?.resume();
}
