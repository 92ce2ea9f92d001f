/**
 * The pool's upstream resource subscriptions across a hand-over (README.md): the old daemon
 * holds them from the moment it holds its socket, so the connections it closes unsubscribe
 * nothing, and hands on the live ones with how many listeners each had. The new daemon
 * expects them before it serves anyone, and once it knows which children it adopted — the
 * same processes, whose servers still hold them — takes those up; each entry's subscribe as
 * it dials again takes its place back instead of a second subscribe upstream (one that comes
 * before the adoption is settled waits for it). A subscription no entry came back to within
 * KEPT_SUBSCRIPTIONS_MS is unsubscribed upstream then.
 */
import type { McpPool } from "../../pool/pool.js";
import type { HandedSubscription } from "../../pool/calls/server-passthrough.js";
import type { DaemonLog } from "../process/logger.js";

/**
 * How long the listeners a hand-over kept are awaited back, ms: an entry dials again for 60 s
 * (its reconnect window) and then replays its host's session within 15 s.
 */
export const KEPT_SUBSCRIPTIONS_MS = 75_000;

/** The old daemon, before it closes any connection: nothing is unsubscribed from now on. */
export function holdSubscriptions(pool: McpPool): void {
  pool.handedSubscriptions.holdSubscriptions();
}

/**
 * What goes into the snapshot: the live subscriptions, with their listeners' count and the
 * update read during the drain for listeners that had left, if any.
 */
export function handedSubscriptions(pool: McpPool): HandedSubscription[] {
  return pool.handedSubscriptions.handedSubscriptions();
}

/** One handed subscription as the snapshot must hold it; anything else is not read. */
function isHandedSubscription(value: unknown): value is HandedSubscription {
  const handed = value as Partial<HandedSubscription> | null;
  if (typeof handed !== "object" || handed === null) return false;
  return (
    typeof handed.serverId === "string" &&
    typeof handed.uri === "string" &&
    Number.isInteger(handed.listeners) &&
    (handed.listeners as number) > 0 &&
    (handed.missed === undefined || isUpdateOf(handed.missed, handed.uri))
  );
}

/** A `notifications/resources/updated` for `uri`, as a server sent it. */
function isUpdateOf(value: unknown, uri: string): boolean {
  const notification = value as { method?: unknown; params?: { uri?: unknown } } | null;
  if (typeof notification !== "object" || notification === null) return false;
  return (
    notification.method === "notifications/resources/updated" &&
    typeof notification.params === "object" &&
    notification.params !== null &&
    notification.params.uri === uri
  );
}

/**
 * The snapshot's subscriptions this mcpool reads, and a line for each one it drops (a
 * snapshot from another build, or a damaged one): none is taken up half-read.
 */
export function checkedSubscriptions(handed: unknown): {
  subscriptions: HandedSubscription[];
  dropped: string[];
} {
  if (handed === undefined) return { subscriptions: [], dropped: [] };
  if (!Array.isArray(handed)) {
    return {
      subscriptions: [],
      dropped: [`the snapshot's subscriptions are not a list (${typeof handed}); none is taken up`],
    };
  }
  const subscriptions = handed.filter(isHandedSubscription);
  const dropped = handed
    .filter((entry) => !isHandedSubscription(entry))
    .map(
      (entry) =>
        `a handed resource subscription is not one this mcpool reads (a server id and a URI as strings, listeners a positive integer, and any missed update one for its URI), dropped: ${JSON.stringify(entry)?.slice(0, 200)}`,
    );
  return { subscriptions, dropped };
}

/**
 * The new daemon, before it serves: the snapshot's subscriptions, awaiting adoption; an entry
 * it cannot read is dropped with a log line (its hosts' entries subscribe again anew).
 */
export function expectSubscriptions(pool: McpPool, handed: unknown, log: DaemonLog): void {
  const { subscriptions, dropped } = checkedSubscriptions(handed);
  for (const line of dropped) log.error(`mcpool: ${line}`);
  pool.handedSubscriptions.expectSubscriptions(subscriptions);
}

/**
 * The new daemon, once it dialled the children it was handed: the subscriptions of the rows
 * whose own child it adopted (`adopted`) are taken up, their listeners awaited back.
 */
export function adoptSubscriptions(pool: McpPool, adopted: readonly string[]): void {
  pool.handedSubscriptions.adoptSubscriptions(adopted, KEPT_SUBSCRIPTIONS_MS);
}

/**
 * The hand-over failed: this daemon serves on, and awaits the listeners it kept for
 * KEPT_SUBSCRIPTIONS_MS from now (those an earlier hand-over kept keep their own deadline).
 */
export function unholdSubscriptions(pool: McpPool): void {
  pool.handedSubscriptions.unholdSubscriptions(KEPT_SUBSCRIPTIONS_MS);
}
