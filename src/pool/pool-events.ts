/**
 * What the pool says: its listener lists — what the pool does (PoolEvent), what servers send
 * (notifications), and which servers it holds (their ids, in configuration order, said when
 * a reconcile changed them) — and its warnings about unset placeholder variables. The
 * pool's own parts hear an event before any listener does (a cache to clear, subscriptions
 * to renew); a listener that throws is logged and never fails what it listened to.
 */
import type { PoolEvent, PoolLog, ServerNotification } from "./core/types.js";
import { serverLog } from "./core/server-log.js";
import type { Connection } from "./server/connection.js";
import type { HostProfile } from "mcpool-protocol";

export interface PoolEventsInit {
  log: PoolLog;
  /** What the pool's parts do about an event, before any listener hears of it. */
  react(event: PoolEvent): void;
  /**
   * What the pool's parts do with a server's notification, before any listener hears of it;
   * sent on `connection`; `profileKey`: the host profile's child of the row that sent it
   * (none: the row's own).
   */
  deliver(
    serverId: string,
    notification: ServerNotification,
    connection: Connection,
    profileKey?: string,
  ): void;
  /** The key of the child of row `serverId` that serves `profile` now; undefined: the row's own. */
  servedBy(serverId: string, profile: HostProfile): string | undefined;
}

/**
 * Which of a row's connections sent a notification: `key`, the key of the host profile's
 * child (host-profiles.ts), undefined for the row's own; and whether it serves a host of
 * `profile` now (a host that names none is served by the row's own), decided by the same
 * rule that picks where that host's calls go.
 */
export interface NotificationSender {
  readonly key: string | undefined;
  serves(profile: HostProfile | undefined): boolean;
}

/** A server's notification, with the id of its row and the connection that sent it. */
export type NotificationListener = (
  serverId: string,
  notification: ServerNotification,
  from: NotificationSender,
) => void;

export class PoolEvents {
  readonly #init: PoolEventsInit;
  readonly #events = new Set<(event: PoolEvent) => void>();
  readonly #notifications = new Set<NotificationListener>();
  readonly #servers = new Set<(ids: readonly string[]) => void>();
  /** The ids last said to #servers, joined: a reconcile that kept them says nothing. */
  #serverKey: string | undefined;
  /** `<id>\0<VAR>` of unset placeholder variables already logged, so each is said once. */
  readonly #warnedUnset = new Set<string>();

  constructor(init: PoolEventsInit) {
    this.#init = init;
  }

  /**
   * Whether anyone listens to events: a call builds its event only then. Listening to the
   * set of servers (onServersChanged) is not listening to calls.
   */
  get listened(): boolean {
    return this.#events.size > 0;
  }

  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.#events.add(listener);
    return () => this.#events.delete(listener);
  }

  onNotification(listener: NotificationListener): () => void {
    this.#notifications.add(listener);
    return () => this.#notifications.delete(listener);
  }

  onServersChanged(listener: (ids: readonly string[]) => void): () => void {
    this.#servers.add(listener);
    return () => this.#servers.delete(listener);
  }

  /** The servers are `ids` now: told to the listeners when that is news. */
  serversChanged(ids: readonly string[]): void {
    const key = ids.join("\0");
    if (key === this.#serverKey) return;
    this.#serverKey = key;
    for (const listener of this.#servers) this.#guard("a servers listener", () => listener(ids));
  }

  emit(event: PoolEvent): void {
    this.#init.react(event);
    // Every call emits one: each listener is called in place, with no function made for it.
    for (const listener of this.#events) {
      try {
        listener(event);
      } catch (error) {
        this.#threw("an event listener", error);
      }
    }
  }

  /** Server `serverId`'s child (`profileKey`: a host profile's; none: the row's own) sent `notification`. */
  notify(
    serverId: string,
    notification: ServerNotification,
    connection: Connection,
    profileKey?: string,
  ): void {
    this.#init.deliver(serverId, notification, connection, profileKey);
    if (this.#notifications.size === 0) return;
    const from: NotificationSender = {
      key: profileKey,
      serves: (profile) =>
        (profile === undefined ? undefined : this.#init.servedBy(serverId, profile)) === profileKey,
    };
    for (const listener of this.#notifications) {
      this.#guard("a notification listener", () => listener(serverId, notification, from));
    }
  }

  /** `${name}` in a row of `serverId` has no value and no default: said once per pair. */
  unsetVariable(serverId: string, name: string): void {
    const key = `${serverId}\0${name}`;
    if (this.#warnedUnset.has(key)) return;
    this.#warnedUnset.add(key);
    serverLog(this.#init.log, serverId).error(
      `\${${name}} is not set and has no default; it is passed to the server as written`,
    );
  }

  #guard(what: string, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#threw(what, error);
    }
  }

  #threw(what: string, error: unknown): void {
    this.#init.log.error?.(`mcpool: ${what} threw: ${(error as Error).message}`);
  }
}
