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
import type { ServerNotification } from "../../pool/core/types.js";
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

/**
 * What is wrong with one handed subscription's required fields, or undefined if nothing is.
 * Says what, never the entry itself: it may carry a URI's token or a server's notification.
 */
function unreadable(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "it is not an object";
  }
  const handed = value as Partial<Record<keyof HandedSubscription, unknown>>;
  if (typeof handed.serverId !== "string") return "its server id is not a string";
  if (typeof handed.uri !== "string") return "its URI is not a string";
  if (handed.profileKey !== undefined && typeof handed.profileKey !== "string") {
    return "its child's profile key is not a string";
  }
  if (!Number.isInteger(handed.listeners) || (handed.listeners as number) < 1) {
    return "its listeners are not a positive integer";
  }
  return undefined;
}

/** A `notifications/resources/updated` for `uri`, as a server sent it. */
function isUpdateOf(value: unknown, uri: string): value is ServerNotification {
  const notification = value as { method?: unknown; params?: { uri?: unknown } } | null;
  if (typeof notification !== "object" || notification === null) return false;
  return (
    notification.method === "notifications/resources/updated" &&
    typeof notification.params === "object" &&
    notification.params !== null &&
    notification.params.uri === uri
  );
}

/** The names of a handed subscription's hosts: at most one per listener, each a string. */
function areNames(value: unknown, listeners: number): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= listeners &&
    value.every((name) => typeof name === "string")
  );
}

/** Names a handed entry in a log line: its server id when it has one, nothing else of it. */
function named(value: unknown): string {
  const id = (value as { serverId?: unknown } | null)?.serverId;
  return typeof id === "string" ? `of server "${id}"` : "";
}

/**
 * The snapshot's subscriptions this mcpool reads, and a line for each one it drops (a
 * snapshot from another build, or a damaged one): none is taken up half-read. A missed update
 * that is not one for its URI is dropped alone, with a line: the subscription is live on the
 * child all the same, and is taken up so that it is ended when no one comes back for it.
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
  const subscriptions: HandedSubscription[] = [];
  const dropped: string[] = [];
  for (const [index, entry] of handed.entries()) {
    const about = `handed resource subscription ${index + 1} ${named(entry)}`.trimEnd();
    const wrong = unreadable(entry);
    if (wrong !== undefined) {
      dropped.push(`${about} is not one this mcpool reads (${wrong}); dropped`);
      continue;
    }
    const { serverId, profileKey, uri, listeners, names, missed } = entry as HandedSubscription & {
      names?: unknown;
      missed?: unknown;
    };
    const kept = missed !== undefined && isUpdateOf(missed, uri);
    if (missed !== undefined && !kept) {
      dropped.push(
        `${about}: its missed update is not a resources/updated for its URI; taken up without it`,
      );
    }
    const hosts = names !== undefined && areNames(names, listeners);
    if (names !== undefined && !hosts) {
      dropped.push(
        `${about}: its hosts' names are not a list of at most ${listeners} strings; ` +
          "taken up with places the first listener back takes, named or not",
      );
    }
    subscriptions.push({
      serverId,
      ...(profileKey !== undefined ? { profileKey } : {}),
      uri,
      listeners,
      ...(hosts ? { names: names as string[] } : {}),
      ...(kept ? { missed } : {}),
    });
  }
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
 * The new daemon, once it dialled the children it was handed: the subscriptions of the
 * connections it adopted (`adopted`: subscriptionPlace() of a row's own child, or of a row's
 * child for a host profile) are taken up, their listeners awaited back.
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
