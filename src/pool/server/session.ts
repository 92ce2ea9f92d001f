/**
 * Session loss. A remote server can forget the session a client was opened with
 * — it restarted, or reaped a session it took for abandoned — and go on answering: 404 for
 * a session id it no longer knows, 400 for a missing one where a server that was stateless
 * came back stateful. Nothing closes, so nothing else tells the pool.
 *
 * Both refusals come before the server dispatches the request, so sending it again after
 * a redial runs it once. `withSession` is that rule for call() and use(): the first such
 * refusal redials (one redial shared by every request that saw it) and runs the work once
 * more on the new client; any other failure, and a second refusal, are passed through.
 */
import { httpErrorStatus } from "../transport/http-client.js";
import type { Connection } from "./connection.js";

/**
 * Whether an error is a remote's refusal of our session: a Streamable HTTP 404 (the
 * session id is unknown) or 400 (a session id is required). Exported for a consumer that
 * keeps its own clients.
 */
export function sessionLost(error: unknown): boolean {
  const status = httpErrorStatus(error);
  return status === 404 || status === 400;
}

/** What withSession needs of a server: its connection, and a redial of a dead one. */
export interface SessionHolder {
  ensure(): Promise<Connection>;
  /** Replaces `dead` once, however many callers ask; resolves with the live connection. */
  redial(dead: Connection): Promise<Connection>;
  /** Blanks the row's secrets in text a server wrote. */
  redact?(text: string): string;
}

/**
 * Runs `work` on the holder's connection; when the remote refused the session, redials
 * once and runs it again on the new connection. An HTTP failure that is passed through
 * has the row's secrets blanked from its message (a 401 body may quote the token).
 */
export async function withSession<T>(
  holder: SessionHolder,
  work: (connection: Connection) => Promise<T>,
): Promise<T> {
  const connection = await serving(holder);
  try {
    return await work(connection);
  } catch (error) {
    if (!sessionLost(error)) throw redacted(error, holder);
    const next = await holder.redial(connection);
    try {
      return await work(next);
    } catch (again) {
      throw redacted(again, holder);
    }
  }
}

/**
 * The holder's connection, taking no new work on one being retired: found by ensure() before
 * it was closed (the cap ended its child, an idle reap, a swap), it is drained and hung up as
 * soon as nothing is in flight, so the work goes to the holder's next connection. `work` then
 * counts itself in flight in the same turn (hold()), before the retirement can close it.
 * A connection that ensure() still gives (a hand-over letting it go) is used as it is.
 */
async function serving(holder: SessionHolder): Promise<Connection> {
  let connection = await holder.ensure();
  while (connection.closing) {
    const next = await holder.ensure();
    if (next === connection) break;
    connection = next;
  }
  return connection;
}

function redacted(error: unknown, holder: SessionHolder): unknown {
  if (httpErrorStatus(error) !== undefined && holder.redact) {
    const http = error as Error;
    http.message = holder.redact(http.message);
  }
  return error;
}

/** Runs `work` counted as in flight on `connection`, so nothing retires it underneath. */
export async function holding<T>(connection: Connection, work: () => Promise<T>): Promise<T> {
  hold(connection);
  try {
    return await work();
  } finally {
    release(connection);
  }
}

/** Counts a request in flight on `connection` (holding()'s first half, for a caller's own try). */
export function hold(connection: Connection): void {
  connection.inflight += 1;
}

/** The request hold() counted settled: a drain waiting on the connection ends at zero. */
export function release(connection: Connection): void {
  connection.inflight -= 1;
  if (connection.inflight === 0) connection.drained?.();
}
