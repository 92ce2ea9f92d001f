/**
 * A task request as it goes to a server (tasks.ts decides to which connection): sent on the
 * row's call timeout and the host's signal, the entry counted busy meanwhile; and the
 * request of a host about a task that is not its own, which hears what the server says of
 * a task it has never had.
 */
import { randomUUID } from "node:crypto";
import type { Connection } from "../server/connection.js";
import type { ServerEntry } from "../server/entry.js";
import { withSession } from "../server/session.js";
import type { PoolTasksDeps, TaskMethod, TaskRequestOptions } from "./tasks.js";
import { upstreamError } from "./upstream-error.js";

type Params = Record<string, unknown>;

/** What the server says of a task it has never had, with the host's id put back. */
export function askAsStranger(
  deps: PoolTasksDeps,
  serverId: string,
  method: TaskMethod,
  params: Params,
  taskId: string,
  options: TaskRequestOptions,
): Promise<Params> {
  const row = deps.entry(serverId);
  const stranger = randomUUID();
  return sendTask(
    deps,
    row,
    method,
    { ...params, taskId: stranger },
    options,
    () => row.ensure(),
    (text) => text.split(stranger).join(taskId),
  );
}

/** `method` to `entry` on the connection `at` gives; `rewrite` applies to the answer's text. */
export async function sendTask(
  deps: PoolTasksDeps,
  entry: ServerEntry,
  method: TaskMethod,
  params: Params,
  options: TaskRequestOptions,
  at: () => Promise<Connection>,
  rewrite: (text: string) => string = (text) => text,
): Promise<Params> {
  const timeoutMs = deps.timeoutMs(entry);
  entry.busy();
  try {
    const connection = await at();
    const result = await withSession(
      { ensure: async () => connection, redial: (dead) => entry.redial(dead) },
      (live) =>
        live.client.request<Params>(
          { method, params },
          {
            ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
          },
        ),
    );
    return JSON.parse(rewrite(JSON.stringify(result))) as Params;
  } catch (error) {
    // The host's id put back in what the server said, wherever the error keeps it.
    const e = error as { message?: unknown; peerMessage?: unknown };
    if (typeof e.message === "string") e.message = rewrite(e.message);
    if (typeof e.peerMessage === "string") e.peerMessage = rewrite(e.peerMessage);
    throw upstreamError(error, { serverId: entry.id, what: method, timeoutMs });
  } finally {
    entry.idle();
  }
}
