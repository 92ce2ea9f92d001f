/**
 * What this client asked the daemon to push, and where pushed messages go. The streams
 * (`pool/subscribe`: events, notifications, elicit, sample) follow the listeners and
 * handlers present: the first listener subscribes, the last one gone unsubscribes, and a
 * new connection is told again before it is used. Resource subscriptions are kept and sent
 * again after a redial, since the daemon forgot the old connection's. Dispatch hands each
 * notification to its listeners; a listener that throws is reported as an uncaught
 * exception, as EventTarget does, without keeping the others from the message.
 */
import {
  defined,
  type HostProfile,
  type NotificationName,
  type PoolEvent,
  type ProgressParams,
  type ServerNotificationParams,
} from "mcpool-protocol";

import type { Connection, Streams } from "./connection.js";
import type { EventListener, NotificationListener } from "./pool-client.js";
import type { CallRouting } from "./routing.js";

/** Whether two sets of event types (undefined: every type) are the same. */
function sameTypes(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((type, i) => type === b[i]);
}

function report(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

function tell<A extends unknown[]>(listeners: Iterable<(...args: A) => void>, ...args: A): void {
  for (const listener of [...listeners]) {
    try {
      listener(...args);
    } catch (error) {
      report(error);
    }
  }
}

/**
 * Which host of a client a resource subscription is for (none: it names no host), and that
 * host's profile (none: the pool's own): it is held where that profile's requests go.
 */
export type HostOption = { taskOwner?: string; profile?: HostProfile };

/** A resource subscription's wire params: its host and profile only when given. */
export function resourceParams(
  serverId: string,
  uri: string,
  host: HostOption,
): { serverId: string; uri: string; taskOwner?: string; profile?: Record<string, unknown> } {
  // The wire's field is any object; the daemon checks it is a profile.
  const profile = host.profile as Record<string, unknown> | undefined;
  return { serverId, uri, ...defined({ taskOwner: host.taskOwner, profile }) };
}

export class Subscriptions {
  readonly eventListeners = new Set<EventListener>();
  /** The types each event listener asked for; absent, every type. */
  readonly #eventTypes = new Map<EventListener, ReadonlySet<string>>();
  readonly notificationListeners = new Set<NotificationListener>();
  /** The params (JSON) of resource subscriptions, sent again after a redial. */
  readonly resources = new Set<string>();

  /**
   * @param routing the call routing whose handlers decide the `elicit` and `sample` streams
   * @param current the link's open connection, if any: where a change is sent at once
   */
  constructor(
    private readonly routing: CallRouting,
    private readonly current: () => Connection | undefined,
  ) {}

  /** Adds a listener to `set`; returns the function that removes it. */
  listen<T>(set: Set<T>, listener: T): () => void {
    set.add(listener);
    this.update();
    return () => {
      if (set.delete(listener)) this.update();
    };
  }

  /** Adds an event listener that hears only `types` (all, if absent); returns its removal. */
  listenEvents(
    listener: EventListener,
    types: readonly PoolEvent["type"][] | undefined,
  ): () => void {
    if (types !== undefined) this.#eventTypes.set(listener, new Set(types));
    const off = this.listen(this.eventListeners, listener);
    return () => {
      this.#eventTypes.delete(listener);
      off();
    };
  }

  /** Tells the daemon the streams wanted now, on a connection being set up. */
  async sync(connection: Connection): Promise<void> {
    const want = this.wanted();
    const had = connection.subscribed;
    if (
      want.events === had.events &&
      sameTypes(want.eventTypes, had.eventTypes) &&
      want.notifications === had.notifications &&
      want.elicit === had.elicit &&
      want.sample === had.sample
    )
      return;
    connection.subscribed = want;
    try {
      await connection.request("pool/subscribe", want);
    } catch (error) {
      // Not subscribed after all: the next change (or the next connection) sends it again.
      if (connection.subscribed === want) connection.subscribed = had;
      throw error;
    }
  }

  /** The streams wanted changed: tell the current connection; the next dial subscribes. */
  update(): void {
    const connection = this.current();
    if (connection === undefined) return;
    this.sync(connection).catch(() => undefined);
  }

  /** A connection became current: what changed during its hello, and the resources. */
  ready(connection: Connection): void {
    this.update();
    for (const key of this.resources) {
      const params = JSON.parse(key) as { serverId: string; uri: string; taskOwner?: string };
      connection.request("resources/subscribe", params).catch(() => undefined);
    }
  }

  /** One notification the daemon pushed, to its listeners; a malformed one is dropped. */
  dispatch(name: NotificationName, params: unknown): void {
    if (typeof params !== "object" || params === null) return;
    if (name === "event") {
      const event = params as PoolEvent;
      if (typeof event.type !== "string") return;
      const listeners = [...this.eventListeners].filter(
        (listener) => this.#eventTypes.get(listener)?.has(event.type) ?? true,
      );
      tell(listeners, event);
    } else if (name === "progress") {
      const { progressToken, ...progress } = params as ProgressParams;
      const listener = this.routing.progressListener(progressToken);
      if (listener === undefined || typeof progress.progress !== "number") return;
      tell([listener], progress);
    } else {
      const { serverId, notification, taskOwner, subscription, child, hosts } =
        params as ServerNotificationParams;
      if (typeof serverId !== "string") return;
      if (typeof notification !== "object" || notification === null) return;
      const about = {
        ...(typeof taskOwner === "string" ? { taskOwner } : {}),
        ...(typeof subscription === "string" ? { subscription } : {}),
        ...(typeof child === "string" ? { child } : {}),
        ...(Array.isArray(hosts) ? { hosts: hosts.filter((h) => typeof h === "string") } : {}),
      };
      tell(this.notificationListeners, serverId, notification, about);
    }
  }

  private wanted(): Streams {
    return {
      events: this.eventListeners.size > 0,
      ...this.#wantedTypes(),
      notifications: this.notificationListeners.size > 0,
      elicit: this.routing.handler !== undefined,
      sample: this.routing.sampler !== undefined,
    };
  }

  /** The union of the listeners' types, sorted; none when a listener wants every type. */
  #wantedTypes(): { eventTypes?: PoolEvent["type"][] } {
    const union = new Set<PoolEvent["type"]>();
    for (const listener of this.eventListeners) {
      const types = this.#eventTypes.get(listener);
      if (types === undefined) return {};
      for (const type of types) union.add(type as PoolEvent["type"]);
    }
    return this.eventListeners.size === 0 ? {} : { eventTypes: [...union].sort() };
  }
}
