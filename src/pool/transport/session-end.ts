/**
 * Ending a conversation's remote session (a per-conversation row's), and
 * the word for how it went. close() on a client ends only our side; an ending also asks
 * the server to forget the session, and says whether it did:
 *
 * - `terminated`    the server ended it (HTTP DELETE answered 2xx; a stdio child stopped);
 * - `already-gone`  the server no longer had it (DELETE answered 404; the child had died);
 * - `no-session`    there was none to end (the server issued no session id);
 * - `not-offered`   the server does not end sessions on request (DELETE answered 405);
 * - `failed`        the DELETE failed otherwise (another status, a network error);
 * - `timed-out`     no answer within the bound;
 * - `handle-lost`   our side lost the session's handle before the DELETE: nothing was sent.
 *
 * Only the first three are resolved; after the others the remote session lives until the
 * server's own timeout, and stats().unresolvedEndings counts them.
 */
import { httpErrorStatus } from "./http-client.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Covering, SessionEndOutcome } from "mcpool-protocol";
import type { FetchLike } from "./transport.js";

export type { SessionEndOutcome } from "mcpool-protocol";

const OUTCOMES = [
  "terminated",
  "already-gone",
  "no-session",
  "not-offered",
  "failed",
  "timed-out",
  "handle-lost",
] as const satisfies readonly SessionEndOutcome[];

/** Every outcome, typed to cover the wire's SessionEndOutcome: one it gains fails to compile here. */
export const SESSION_END_OUTCOMES: Covering<SessionEndOutcome, typeof OUTCOMES> = OUTCOMES;

/** Whether an outcome leaves no remote session behind. */
export function isResolved(outcome: SessionEndOutcome): boolean {
  return outcome === "terminated" || outcome === "already-gone" || outcome === "no-session";
}

/** How one remote ending went: the outcome, and the DELETE's status when one was answered. */
export interface SessionEnd {
  outcome: SessionEndOutcome;
  status?: number;
}

/**
 * Watches one client's fetches for the answer to its DELETE, because the SDK's
 * terminateSession() resolves alike for 200 and 405 and we must tell the two apart.
 */
export class DeleteWatch {
  /** The status of the last DELETE answered through `wrap`, if any. */
  status: number | undefined;

  wrap(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const response = await fetch(url, init);
      if ((init?.method ?? "GET").toUpperCase() === "DELETE") this.status = response.status;
      return response;
    };
  }
}

/** Transports in a session handed over whose hand-over has not gone through yet. */
const provisionalSessions = new WeakSet<object>();

/**
 * Marks `transport`, in a session handed over, as the old daemon's until `owned` settles
 * true: a new daemon that gives up the hand-over must not end a session the old one serves on.
 */
export function holdProvisionally(transport: object, owned: Promise<boolean>): void {
  provisionalSessions.add(transport);
  void owned.then((mine) => {
    if (mine) provisionalSessions.delete(transport);
  });
}

/** Whether `transport`'s session is still the old daemon's (holdProvisionally()). */
export function provisional(transport: object): boolean {
  return provisionalSessions.has(transport);
}

/** What ending an HTTP session needs of a transport: the SDK's StreamableHTTPClientTransport. */
export interface SessionHandle {
  readonly sessionId: string | undefined;
  terminateSession(): Promise<void>;
}

/** The transport's session handle when it has one (Streamable HTTP), else undefined. */
export function sessionHandleOf(transport: Transport): SessionHandle | undefined {
  const candidate = transport as Partial<SessionHandle>;
  return typeof candidate.terminateSession === "function"
    ? (transport as unknown as SessionHandle)
    : undefined;
}

/**
 * Sends the DELETE for `handle`'s session and classifies the answer. Resolves within
 * `timeoutMs` (elapsed time, from a timer: a clock change does not stretch it) with
 * `timed-out` when the server has not answered; the DELETE itself is abandoned when the
 * transport closes. Never rejects.
 */
export async function deleteSession(
  handle: SessionHandle,
  watch: DeleteWatch,
  timeoutMs: number,
): Promise<SessionEnd> {
  if (handle.sessionId === undefined) return { outcome: "no-session" };
  watch.status = undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SessionEnd>((resolve) => {
    timer = setTimeout(() => resolve({ outcome: "timed-out" }), timeoutMs);
    timer.unref();
  });
  const answer = handle.terminateSession().then(
    (): SessionEnd => classify(watch.status, undefined),
    (error: unknown): SessionEnd => classify(watch.status, error),
  );
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function classify(status: number | undefined, error: unknown): SessionEnd {
  const code = status ?? httpErrorStatus(error);
  if (code === undefined || code <= 0) {
    // No status seen: the SDK resolves only for 2xx and 405, and the fetch was not ours to
    // watch (a custom transport). Resolving is the best it says.
    return { outcome: error === undefined ? "terminated" : "failed" };
  }
  if (code >= 200 && code < 300) return { outcome: "terminated", status: code };
  if (code === 404) return { outcome: "already-gone", status: code };
  if (code === 405) return { outcome: "not-offered", status: code };
  return { outcome: "failed", status: code };
}
