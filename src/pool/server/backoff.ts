/**
 * Backoff, as pure functions: how long a server that keeps failing waits before
 * its next dial, when it is said to be in a crash loop, when a crash is the crash of a
 * healthy server that comes back at once, and what a dial asked for too soon is refused
 * with. No timers and no state: ServerEntry holds both.
 */
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";
import type { ServerStatus } from "../core/types.js";

/**
 * A connection that answered a call, or stayed up this long, was healthy: its crash
 * is redialled at once and starts a new count, however often that happened before.
 */
export const HEALTHY_AFTER_MS = 30_000;
/** Failures in a row after which status says `crash-loop` instead of `error`. */
export const CRASH_LOOP_AFTER = 3;
/** Ceiling of the exponential backoff, ms. */
export const MAX_BACKOFF_MS = 5 * 60_000;

/** ms to wait after the `failures`-th failure in a row: `baseMs` doubled each time, capped. */
export function backoffMs(baseMs: number, failures: number): number {
  return Math.min(baseMs * 2 ** (failures - 1), MAX_BACKOFF_MS);
}

/** What status says after `failures` failures in a row. */
export function failureStatus(failures: number): Extract<ServerStatus, "error" | "crash-loop"> {
  return failures >= CRASH_LOOP_AFTER ? "crash-loop" : "error";
}

/** Whether a connection that went down at `now` had been healthy: it answered, or it lasted. */
export function wasHealthy(
  connection: { answered: boolean; startedAt: number },
  now: number,
): boolean {
  return connection.answered || now - connection.startedAt >= HEALTHY_AFTER_MS;
}

/** What dialRefusal() reads of a server. */
export interface DialState {
  readonly id: string;
  readonly row: McpServerConfig;
  readonly removed: boolean;
  readonly status: ServerStatus;
  readonly error: string | undefined;
  readonly retryAt: number | undefined;
}

/**
 * Why a server may not be dialled now, if it may not: removed, disabled, or inside its
 * backoff (unless `ignoreBackoff`). One that stands at a sign-in says so, in the sentence
 * `authMessage()` gives, rather than "failed recently": only a sign-in helps it.
 */
export function dialRefusal(
  server: DialState,
  ignoreBackoff: boolean,
  authMessage: () => string,
  now = Date.now(),
): McpPoolError | undefined {
  const serverId = server.id;
  if (server.removed) {
    return new McpPoolError("unknown-server", `unknown server "${serverId}"`, { serverId });
  }
  if (!isEnabled(server.row)) {
    return new McpPoolError("disabled", `server "${serverId}" is disabled`, { serverId });
  }
  const retryAt = server.retryAt;
  if (ignoreBackoff || retryAt === undefined || retryAt <= now) return undefined;
  if (server.status === "auth-required") {
    return new McpPoolError("auth-required", authMessage(), { serverId, retryAt });
  }
  return new McpPoolError(
    "backoff",
    `server "${serverId}" failed recently and will not be dialled before ${new Date(retryAt).toISOString()}: ${server.error ?? "unknown error"}`,
    { serverId, retryAt },
  );
}

/** The statuses of a server waiting out a backoff: resetBackoff() takes them back to idle. */
export const BACKED_OFF: ReadonlySet<ServerStatus> = new Set<ServerStatus>([
  "error",
  "crash-loop",
  "unreachable",
  "auth-required",
  "unresponsive",
]);
