/**
 * The host sessions' resource subscriptions, held through the client: a session's subscribe
 * of a URI is routed to the server that owns it (resources-prompts.ts) and held upstream.
 *
 * A session subscribes with its host's profile, as it reads (legacy-passthrough.ts): the pool
 * holds the subscription on the connection that host's requests go to — the server's child
 * for that profile, when it has one, in the era that child speaks — so the host hears the
 * updates of the session it reads from. Sessions with no name of their own share one
 * subscription per URI and profile (the client's own: subscribed with the first,
 * unsubscribed with the last), and its updates (the daemon names the profile's
 * subscriptionKey() in each) go to each of them.
 * A session whose entry named its host (an MCP socket's lean bridge or perl relay,
 * fronts/host-names.ts) holds its own, under that name: across a daemon's hand-over the new
 * daemon keeps its place for that name alone, and the update it missed reaches it and no
 * other session (the daemon names the host an update is for). A daemon whose hello does not
 * say it names hosts (an older one, not yet restarted after an upgrade) would take no name
 * and send updates naming none, so there a named session shares the subscription of no name.
 */
import {
  subscriptionKey,
  type HostProfile,
  type PoolClient,
  type ServerNotification,
} from "mcpool-client";
import type { Subscriber } from "./session.js";

export interface SubscriptionContext {
  client: PoolClient;
  /** The server `uri` is subscribed on; throws the host's refusal when none has it. */
  route(uri: string): Promise<string>;
  /** Runs `work`, its failure as the host's error. */
  ask<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * Those subscribed to one URI with one profile: the shared subscription's sessions, and the
 * named ones.
 */
interface UriSubscribers {
  serverId: string;
  uri: string;
  /** The profile they subscribed with, and its subscriptionKey(). */
  profile: HostProfile | undefined;
  key: string;
  /** The sessions of no name, sharing the client's subscription (settled once taken). */
  sessions: Set<Subscriber>;
  ready: Promise<unknown> | undefined;
  /** The named sessions, by their host's name, each with its own subscription. */
  named: Map<string, Subscriber>;
}

export class ResourceSubscriptions {
  readonly #ctx: SubscriptionContext;
  /**
   * URI and subscriptionKey() → who is subscribed to it with that profile. A URI is here
   * before it is subscribed upstream, so an update the server sends at once finds the
   * sessions it is for.
   */
  readonly #subscribers = new Map<string, UriSubscribers>();
  /**
   * URI → the last subscribe or unsubscribe of it, settled: each waits for the one before,
   * so an unsubscribe still waiting for its subscribe's answer is sent before a later
   * subscribe of the same URI, and that subscribe is sent again rather than lost.
   */
  readonly #turns = new Map<string, Promise<void>>();
  /**
   * Sessions that closed: a subscribe of theirs still waiting its turn does nothing when the
   * turn comes, as closeSession() cannot see a URI the session does not hold yet.
   */
  readonly #closed = new WeakSet<Subscriber>();

  constructor(ctx: SubscriptionContext) {
    this.#ctx = ctx;
  }

  /** Forgets a closed session's subscriptions, unsubscribing upstream what nobody else holds. */
  async closeSession(session: Subscriber): Promise<void> {
    this.#closed.add(session);
    await Promise.allSettled(
      [...session.subscriptions.keys()].map((uri) => this.unsubscribe(session, uri)),
    );
  }

  /**
   * A pooled server's `notifications/resources/updated`, of the subscription made with the
   * profile whose subscriptionKey() is `subscription` (undefined: a daemon that does not say,
   * whose subscriptions are all held on the row's connection): to the session whose host it
   * names, or to nobody when no session here goes by that name (the update is another
   * bridge's host's, or its host has left); one that names no host goes to the sessions
   * sharing that subscription.
   */
  deliverUpdated(
    serverId: string,
    notification: ServerNotification,
    taskOwner?: string,
    subscription?: string,
  ): void {
    const uri = notification.params?.uri;
    if (typeof uri !== "string") return;
    const params = { ...notification.params, uri };
    for (const entry of this.#subscribers.values()) {
      if (entry.uri !== uri || entry.serverId !== serverId) continue;
      if (subscription !== undefined && entry.key !== subscription) continue;
      const named = taskOwner === undefined ? undefined : entry.named.get(taskOwner);
      const to = taskOwner === undefined ? entry.sessions : named !== undefined ? [named] : [];
      for (const session of to) session.server.sendResourceUpdated(params).catch(() => undefined);
    }
  }

  /** `profile`: the session's host's (its requests go where its subscription is held). */
  subscribe(session: Subscriber, uri: string, profile?: HostProfile): Promise<void> {
    return this.#inTurn(uri, () => this.#subscribe(session, uri, profile));
  }

  unsubscribe(session: Subscriber, uri: string): Promise<void> {
    return this.#inTurn(uri, () => this.#unsubscribe(session, uri));
  }

  /** Runs `work` once every earlier subscribe or unsubscribe of `uri` has settled. */
  #inTurn(uri: string, work: () => Promise<void>): Promise<void> {
    const mine = (this.#turns.get(uri) ?? Promise.resolve()).then(work);
    const settled = mine.catch(() => undefined);
    this.#turns.set(uri, settled);
    void settled.then(() => {
      if (this.#turns.get(uri) === settled) this.#turns.delete(uri);
    });
    return mine;
  }

  async #subscribe(session: Subscriber, uri: string, profile?: HostProfile): Promise<void> {
    if (session.subscriptions.has(uri) || this.#closed.has(session)) return;
    const serverId = await this.#ctx.route(uri);
    if (this.#closed.has(session)) return;
    const key = subscriptionKey(profile);
    const at = `${uri}\0${key}`;
    let entry = this.#subscribers.get(at);
    if (entry === undefined) {
      entry = {
        serverId,
        uri,
        profile,
        key,
        sessions: new Set(),
        ready: undefined,
        named: new Map(),
      };
      this.#subscribers.set(at, entry);
    }
    const held = entry;
    const name = this.#ctx.client.daemon?.namesHosts === true ? session.hostName : undefined;
    const profiled = profile !== undefined ? { profile } : {};
    // Routed first, then asked upstream: the server may send an update for the URI before
    // its answer to the subscribe reaches us.
    let ready: Promise<unknown>;
    if (name !== undefined) {
      held.named.set(name, session);
      const host = { taskOwner: name, ...profiled };
      ready = this.#ctx.ask(() => this.#ctx.client.subscribeResource(serverId, uri, host));
    } else {
      held.sessions.add(session);
      ready = held.ready ??= this.#ctx.ask(() =>
        this.#ctx.client.subscribeResource(held.serverId, uri, profiled),
      );
    }
    session.subscriptions.set(uri, held.serverId);
    try {
      await ready;
    } catch (error) {
      this.#leave(uri, held, session);
      if (name === undefined && held.ready === ready) held.ready = undefined;
      throw error;
    }
  }

  async #unsubscribe(session: Subscriber, uri: string): Promise<void> {
    if (!session.subscriptions.delete(uri)) return;
    const entry = this.#heldBy(session, uri);
    if (entry === undefined) return;
    const name = session.hostName;
    const profiled = entry.profile !== undefined ? { profile: entry.profile } : {};
    // Named upstream only if it subscribed by its name (the daemon then said it names hosts).
    const taskOwner =
      name !== undefined && entry.named.get(name) === session
        ? { taskOwner: name, ...profiled }
        : undefined;
    this.#leave(uri, entry, session);
    if (taskOwner === undefined) {
      if (entry.sessions.size > 0 || entry.ready === undefined) return;
      const ready = entry.ready;
      entry.ready = undefined;
      // Nothing to undo upstream when the subscribe failed.
      if (
        !(await ready.then(
          () => true,
          () => false,
        ))
      )
        return;
    }
    await this.#ctx.ask(() =>
      this.#ctx.client.unsubscribeResource(entry.serverId, uri, taskOwner ?? profiled),
    );
  }

  /** The subscribers of `uri` that `session` is among, if any. */
  #heldBy(session: Subscriber, uri: string): UriSubscribers | undefined {
    const name = session.hostName;
    for (const entry of this.#subscribers.values()) {
      if (entry.uri !== uri) continue;
      if (entry.sessions.has(session)) return entry;
      if (name !== undefined && entry.named.get(name) === session) return entry;
    }
    return undefined;
  }

  /** `session` holds `uri` no more; the URI is forgotten when no session holds it. */
  #leave(uri: string, entry: UriSubscribers, session: Subscriber): void {
    session.subscriptions.delete(uri);
    const name = session.hostName;
    if (name !== undefined && entry.named.get(name) === session) entry.named.delete(name);
    else entry.sessions.delete(session);
    if (entry.sessions.size > 0 || entry.named.size > 0) return;
    const at = `${uri}\0${entry.key}`;
    if (this.#subscribers.get(at) === entry) this.#subscribers.delete(at);
  }
}
