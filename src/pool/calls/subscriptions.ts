/**
 * The pool's resource subscriptions: a server sees one subscribe per uri per connection
 * however many listeners share it, one unsubscribe when the last one leaves, and the
 * subscribe again after a reconnect. A subscription is held on the connection its host's
 * requests go to (its place: the row's own, or the row's child for the host's profile), in
 * the era that connection speaks, so a host hears the updates of the session it reads from. Across a hand-over the old daemon keeps a leaving listener's place for its
 * entry's return, and the new daemon takes the old one's subscriptions up without sending
 * them again to a child it adopted (src/daemon/handover/README.md). A listener may go by its
 * host's name (the name a host's task requests go by): its kept place is then its host's,
 * and is taken back, with the update missed meanwhile, by a listener of that name alone.
 */
import type { PoolLog, ServerNotification } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

export type ResourceListener = (notification: ServerNotification) => void;

/**
 * A listener's place kept for its entry's return across a hand-over. `until`: the end of its
 * wait (ms since the epoch), set once the hand-over is settled; none while it still holds.
 * `name`: its host's, when the listener went by one.
 */
interface KeptPlace {
  until?: number;
  name?: string;
  /**
   * Handed by a build that named no host in its snapshot: it could not tell its hosts apart,
   * so the first listener back takes it, named or not, as before hosts had names.
   */
  anyone?: true;
}

interface Subscription {
  readonly listeners: Set<ResourceListener>;
  /** The names the listeners that have one go by. */
  readonly names: Map<ResourceListener, string>;
  readonly ready: Promise<void>;
  /** The server has acknowledged it: a reconnect must send it again. */
  live: boolean;
  /**
   * Listeners that left while the daemon handed over (or, in the new daemon, that the old
   * one had): each is a host's entry that dials again and subscribes again, and takes its
   * place back instead of a subscribe upstream. While one is awaited the subscription holds;
   * each is awaited until its own deadline, whichever hand-over kept it.
   */
  kept: KeptPlace[];
  /**
   * An update that came while only kept listeners were left, or while the daemon held (each
   * listener then leaving): each one back is sent it.
   */
  missed?: ServerNotification;
}

/**
 * Where subscriptions are held: row `serverId`'s own connection, or (`key`, a profile child's
 * key) that child's.
 */
export function subscriptionPlace(serverId: string, key?: string): string {
  return key === undefined ? serverId : `${serverId}\0${key}`;
}

/** The row and child key of a place (subscriptionPlace()). */
function placeParts(place: string): { serverId: string; key?: string } {
  const at = place.indexOf("\0");
  return at === -1
    ? { serverId: place }
    : { serverId: place.slice(0, at), key: place.slice(at + 1) };
}

/** A live upstream subscription as one daemon hands it to the next (src/daemon/handover/subscriptions.ts). */
export interface HandedSubscription {
  serverId: string;
  /** The key of the row's child it is held on; absent: the row's own connection. */
  profileKey?: string;
  uri: string;
  /** How many listeners (entries' connections) it had: each is awaited back. */
  listeners: number;
  /**
   * The names of those of its listeners that went by one (at most `listeners`): the place of
   * each is its host's. The others' places are taken back by a listener of no name known there.
   * Absent (an older build's snapshot, which named no host): each place is the first
   * listener's back, named or not.
   */
  names?: string[];
  /**
   * An update the server sent while only kept listeners were left (read before the old daemon
   * stopped reading the child): each listener back is sent it.
   */
  missed?: ServerNotification;
}

/**
 * What the subscriptions need of the passthrough that owns them. Each `place` is a
 * subscriptionPlace().
 */
export interface SubscriptionDeps {
  /** Sends `method` for `uri` on `place`'s connection, dialling it unless `dial` is false. */
  upstream(
    place: string,
    uri: string,
    method: "resources/subscribe" | "resources/unsubscribe",
    dial?: boolean,
  ): Promise<void>;
  /** Unsubscribes `uri` upstream if `place` is connected; the server may go idle. */
  stopUpstream(place: string, uri: string): Promise<void>;
  log: PoolLog;
}

export class Subscriptions {
  readonly #deps: SubscriptionDeps;
  /** Per place (subscriptionPlace()), per uri: who listens. */
  readonly #subscriptions = new Map<string, Map<string, Subscription>>();
  /** Handing over: a listener that leaves is kept for its entry's return (holdSubscriptions()). */
  #holding = false;
  /** Subscriptions a previous daemon handed over, until adoptSubscriptions() settles them. */
  readonly #expected: {
    place: string;
    uri: string;
    subscription: Subscription;
    settle(value: Promise<void> | void): void;
  }[] = [];

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Calls `listener` with each `notifications/resources/updated` `place`'s connection sends
   * for `uri`, subscribing upstream when it is the first listener. Resolves with the function
   * that stops listening (unsubscribing upstream with the last listener). `name`: its host's,
   * whose place a hand-over keeps for it.
   */
  async subscribe(
    id: string,
    uri: string,
    listener: ResourceListener,
    name?: string,
  ): Promise<() => Promise<void>> {
    let uris = this.#subscriptions.get(id);
    if (!uris) {
      uris = new Map();
      this.#subscriptions.set(id, uris);
    }
    const byUri = uris;
    let subscription = byUri.get(uri);
    if (!subscription) {
      const created: Subscription = {
        listeners: new Set(),
        ready: this.#deps.upstream(id, uri, "resources/subscribe").then(() => {
          created.live = true;
        }),
        names: new Map(),
        live: false,
        kept: [],
      };
      created.ready.catch(() => this.#forget(id, uri, created));
      byUri.set(uri, created);
      subscription = created;
    }
    const held = subscription;
    held.listeners.add(listener);
    if (name !== undefined) held.names.set(listener, name);
    this.#welcomeBack(held, listener, name);
    try {
      await held.ready;
    } catch (error) {
      held.listeners.delete(listener);
      held.names.delete(listener);
      throw error;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      held.listeners.delete(listener);
      held.names.delete(listener);
      if (this.#holding && held.live) held.kept.push(name !== undefined ? { name } : {});
      if (held.listeners.size > 0 || held.kept.length > 0 || !this.#forget(id, uri, held)) return;
      await this.#deps.stopUpstream(id, uri);
    };
  }

  /** Whether `id` (a place) has resource subscriptions (its idle timer waits for none). */
  held(id: string): boolean {
    return (this.#subscriptions.get(id)?.size ?? 0) > 0;
  }

  /** A notification `id`'s connection sent (a place): a resources/updated goes to that uri's listeners. */
  deliver(id: string, notification: ServerNotification): void {
    if (notification.method !== "notifications/resources/updated") return;
    const uri = notification.params?.uri;
    if (typeof uri !== "string") return;
    const subscription = this.#subscriptions.get(id)?.get(uri);
    // While holding, every listener is going (its connection closed or closing, whatever its
    // close event's turn): what it is sent now may go nowhere, so the update is kept for it.
    if (subscription !== undefined && (this.#holding || subscription.kept.length > 0)) {
      subscription.missed = notification;
    }
    for (const listener of [...(subscription?.listeners ?? [])]) {
      try {
        listener(notification);
      } catch (error) {
        this.#deps.log.error?.(`mcpool: a resource listener threw: ${(error as Error).message}`);
      }
    }
  }

  /** `id`'s connection (a place) is new: what it was subscribed to died with the old one. */
  connected(id: string): void {
    for (const [uri, subscription] of this.#subscriptions.get(id) ?? []) {
      if (!subscription.live) continue;
      this.#deps
        .upstream(id, uri, "resources/subscribe", false)
        .catch((error: unknown) =>
          serverLog(this.#deps.log, placeParts(id).serverId).error(
            `subscribing again to ${uri} after a reconnect failed: ${(error as Error).message}`,
          ),
        );
    }
  }

  // ── Across a hand-over (src/daemon/handover/README.md) ──────────────────────────────

  /**
   * The daemon hands over: from now on a listener that leaves (its connection closed by the
   * hand-over) is kept, never unsubscribed upstream: the child's subscription goes on.
   */
  holdSubscriptions(): void {
    this.#holding = true;
  }

  /**
   * The hand-over failed: listeners leave as before; the kept ones are awaited back here for
   * `keepMs` from now, and an update kept while holding only for those.
   */
  unholdSubscriptions(keepMs: number): void {
    this.#holding = false;
    for (const uris of this.#subscriptions.values()) {
      for (const subscription of uris.values()) {
        if (subscription.kept.length === 0) delete subscription.missed;
      }
    }
    this.#awaitKept(keepMs);
  }

  /**
   * Every live upstream subscription, with how many listeners it had (kept ones included) and
   * the names of those that went by one.
   */
  handedSubscriptions(): HandedSubscription[] {
    return [...this.#subscriptions].flatMap(([place, uris]) =>
      [...uris]
        .filter(([, subscription]) => subscription.live)
        .map(([uri, subscription]) => {
          const kept = subscription.kept.flatMap((place) => place.name ?? []);
          const names = [...subscription.names.values(), ...kept];
          // Named (if only by an empty list) unless a place is still anyone's.
          const told = !subscription.kept.some((place) => place.anyone);
          const { serverId, key } = placeParts(place);
          return {
            serverId,
            ...(key !== undefined ? { profileKey: key } : {}),
            uri,
            listeners: subscription.listeners.size + subscription.kept.length,
            ...(told ? { names } : {}),
            ...(subscription.missed !== undefined ? { missed: subscription.missed } : {}),
          };
        }),
    );
  }

  /**
   * The old daemon's live subscriptions, expected before this pool serves anyone: held, their
   * listeners awaited back (each sent the update the old daemon kept for it, if any),
   * nothing sent upstream. A listener that comes back before
   * adoptSubscriptions() says whether its server's child was taken over waits for that.
   */
  expectSubscriptions(handed: readonly HandedSubscription[]): void {
    for (const { serverId, profileKey, uri, listeners, names, missed } of handed) {
      const place = subscriptionPlace(serverId, profileKey);
      let uris = this.#subscriptions.get(place);
      if (!uris) {
        uris = new Map();
        this.#subscriptions.set(place, uris);
      }
      if (listeners < 1 || uris.has(uri)) continue;
      let settle: (value: Promise<void> | void) => void = () => undefined;
      const ready = new Promise<void>((resolve) => (settle = resolve));
      ready.catch(() => undefined);
      const kept = Array.from({ length: listeners }, (_, at): KeptPlace => {
        if (names === undefined) return { anyone: true };
        const name = names[at];
        return name !== undefined ? { name } : {};
      });
      const expected: Subscription = {
        listeners: new Set(),
        names: new Map(),
        ready,
        live: false,
        kept,
      };
      if (missed !== undefined) expected.missed = missed;
      uris.set(uri, expected);
      this.#expected.push({ place, uri, subscription: expected, settle });
    }
  }

  /**
   * The expected subscriptions of the places in `adopted` (subscriptionPlace(): their same
   * child, which holds them still) are live; any other's (its child started anew, or its row
   * gone) is subscribed upstream for the listeners back by now, or forgotten when none is. The
   * kept places of the adopted ones are awaited for `keepMs` from now.
   */
  adoptSubscriptions(adopted: readonly string[], keepMs: number): void {
    const places = new Set(adopted);
    for (const { place, uri, subscription, settle } of this.#expected.splice(0)) {
      if (places.has(place)) {
        subscription.live = true;
        settle();
        continue;
      }
      subscription.kept = [];
      delete subscription.missed;
      if (subscription.listeners.size === 0) {
        this.#forget(place, uri, subscription);
        settle();
        continue;
      }
      const upstream = this.#deps.upstream(place, uri, "resources/subscribe").then(() => {
        subscription.live = true;
      });
      upstream.catch(() => this.#forget(place, uri, subscription));
      settle(upstream);
    }
    this.#awaitKept(keepMs);
  }

  /**
   * Gives the kept places with no deadline yet (this hand-over's) one `keepMs` from now, and
   * lets them go then; the places another hand-over kept keep their own deadline.
   */
  #awaitKept(keepMs: number): void {
    const until = Date.now() + keepMs;
    for (const uris of this.#subscriptions.values()) {
      for (const subscription of uris.values()) {
        for (const place of subscription.kept) place.until ??= until;
      }
    }
    const timer = setTimeout(() => {
      this.#dropKept(until).catch((error: unknown) => {
        this.#deps.log.error?.(
          `mcpool: could not let go of a resource subscription: ${(error as Error).message}`,
        );
      });
    }, keepMs);
    timer.unref();
  }

  /**
   * Stops awaiting the kept places whose deadline is `until` or before: each subscription no
   * listener and no place is left to is unsubscribed upstream (an entry that comes later
   * subscribes again, as a new one would).
   */
  async #dropKept(until: number): Promise<void> {
    const left: Promise<void>[] = [];
    for (const [id, uris] of this.#subscriptions) {
      for (const [uri, subscription] of uris) {
        const kept = subscription.kept.filter(
          (place) => place.until === undefined || place.until > until,
        );
        if (kept.length === subscription.kept.length) continue;
        subscription.kept = kept;
        if (kept.length > 0) continue;
        delete subscription.missed;
        if (subscription.listeners.size > 0 || !this.#forget(id, uri, subscription)) continue;
        left.push(this.#deps.stopUpstream(id, uri));
      }
    }
    await Promise.all(left);
  }

  /**
   * A listener joined: the place kept for it is back (its host's by `name`; one of no name for
   * a listener of none; one an older build handed for anyone; the place that would expire
   * first), and it hears what it missed
   * meanwhile. A listener that finds none kept for it is new here, and missed nothing.
   */
  #welcomeBack(
    subscription: Subscription,
    listener: ResourceListener,
    name: string | undefined,
  ): void {
    const last = (place: KeptPlace): number => place.until ?? Infinity;
    const places = subscription.kept.sort((a, b) => last(a) - last(b));
    const at = places.findIndex((place) => place.anyone === true || place.name === name);
    if (at === -1) return;
    places.splice(at, 1);
    const missed = subscription.missed;
    if (subscription.kept.length === 0) delete subscription.missed;
    if (missed === undefined) return;
    try {
      listener(missed);
    } catch (error) {
      this.#deps.log.error?.(`mcpool: a resource listener threw: ${(error as Error).message}`);
    }
  }

  /** Drops `subscription` if it is still the one held for (id, uri); true if it was. */
  #forget(id: string, uri: string, subscription: Subscription): boolean {
    const uris = this.#subscriptions.get(id);
    if (uris?.get(uri) !== subscription) return false;
    uris.delete(uri);
    if (uris.size === 0) this.#subscriptions.delete(id);
    return true;
  }
}
