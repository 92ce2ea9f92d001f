/**
 * Passthrough: the MCP requests a consumer proxying the protocol needs beyond
 * tools — resources, prompts, completion, ping, logging level — sent to one server by id.
 * A server whose capabilities do not offer a surface is refused with `not-offered` before
 * anything is sent. Like call(), a request wakes an idle server, is refused for a disabled
 * one, counts as a use, redials once on a lost remote session, and bypasses the scope
 * check: a caller holding a server id is not a model.
 *
 * A listing or resource read a 2026-07-28 server calls public is kept until its `ttlMs` runs
 * out, and served to every caller meanwhile (listing-cache.ts).
 *
 * Resource subscriptions are the pool's, not a caller's: a server sees one subscribe per
 * uri however many listeners share it, one unsubscribe when the last one leaves, and the
 * subscribe again after a reconnect. While a server has subscriptions it is not idle-reaped.
 */
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptRequest,
  GetPromptResult,
  ListPromptsRequest,
  ListPromptsResult,
  ListResourcesRequest,
  ListResourcesResult,
  ListResourceTemplatesRequest,
  ListResourceTemplatesResult,
  PingRequest,
  ReadResourceRequest,
  ReadResourceResult,
  SetLevelRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { McpPoolError } from "../core/errors.js";
import type { McpClient } from "../mcp/client.js";
import type { InputAnswerer } from "../mcp/protocol.js";
import { upstreamCaller, type CallOptions } from "./options.js";
import { upstreamError } from "./upstream-error.js";
import { assertOffered, type Surface } from "./offered.js";

export { offers } from "./offered.js";
import { ListingCache } from "./listing-cache.js";
import { entryRoute, ownHandlers } from "./routes.js";
import type { Route } from "../server/caller-router.js";
import type { ServerEntry } from "../server/entry.js";
import type { HostProfile } from "mcpool-protocol";
import { holding, withSession } from "../server/session.js";
import type { CallSignal, PoolLog, ServerNotification } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

type EmptyResult = Record<string, unknown>;

/** Every request passthrough sends, with its params and result (MCP 2025-11-25). */
export interface PassthroughTypes {
  "resources/list": { params: ListResourcesRequest["params"]; result: ListResourcesResult };
  "resources/templates/list": {
    params: ListResourceTemplatesRequest["params"];
    result: ListResourceTemplatesResult;
  };
  "resources/read": { params: ReadResourceRequest["params"]; result: ReadResourceResult };
  "prompts/list": { params: ListPromptsRequest["params"]; result: ListPromptsResult };
  "prompts/get": { params: GetPromptRequest["params"]; result: GetPromptResult };
  "completion/complete": { params: CompleteRequest["params"]; result: CompleteResult };
  "logging/setLevel": { params: SetLevelRequest["params"]; result: EmptyResult };
  ping: { params: PingRequest["params"]; result: EmptyResult };
}

export type PassthroughMethod = keyof PassthroughTypes;
export type PassthroughParams<M extends PassthroughMethod> = PassthroughTypes[M]["params"];
export type PassthroughResult<M extends PassthroughMethod> = PassthroughTypes[M]["result"];

export interface PassthroughOptions extends Pick<
  CallOptions,
  "onElicit" | "onSample" | "onRoots" | "caller"
> {
  /**
   * The calling host's profile: the request goes to the connection its calls go to — the
   * row's child for that profile, when it has one — so it sees what those calls did (a
   * resource a call added for the session). Absent: the row's own connection.
   */
  profile?: HostProfile;
  /** Overrides the row's and the pool's call timeout, ms. */
  timeoutMs?: number;
  /** Aborting sends `notifications/cancelled` to the server and rejects with the reason. */
  signal?: CallSignal;
}

/** request()'s arguments after the method: params may be left out where MCP makes them optional. */
export type PassthroughArgs<M extends PassthroughMethod> =
  undefined extends PassthroughParams<M>
    ? [params?: PassthroughParams<M>, options?: PassthroughOptions]
    : [params: PassthroughParams<M>, options?: PassthroughOptions];

export const PASSTHROUGH_METHODS: readonly PassthroughMethod[] = [
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "ping",
];

export interface PassthroughDeps {
  /** The server's entry, or its child for `profile` when it has one; throws `unknown-server`. */
  entry(id: string, profile?: HostProfile): ServerEntry;
  /** The auth-required sentence when `error` means the server wants a sign-in. */
  authRefusal?(serverId: string, error: unknown): string | undefined;
  /** The server's entry, if it is configured. */
  find(id: string): ServerEntry | undefined;
  /** The call timeout that applies to `entry`, ms; undefined is the SDK's 60 s. */
  timeoutMs(entry: ServerEntry): number | undefined;
  /**
   * Who answers a modern server's `input_required` inside one request: the
   * request's own handlers, as a call's (CallRoutes.answerer).
   */
  answerer?(serverId: string, options: PassthroughOptions): InputAnswerer;
  /**
   * From now until the returned function is called, what a 2025-11-25 server asks on
   * `route` may be this request's: its handlers answer it, as a call's (CallRoutes.register).
   */
  register?(route: Route, options: PassthroughOptions): () => void;
  log: PoolLog;
}

export type ResourceListener = (notification: ServerNotification) => void;

interface Subscription {
  readonly listeners: Set<ResourceListener>;
  readonly ready: Promise<void>;
  /** The server has acknowledged it: a reconnect must send it again. */
  live: boolean;
  /**
   * Listeners that left while the daemon handed over (or, in the new daemon, that the old
   * one had): each is a host's entry that dials again and subscribes again, and takes its
   * place back instead of a subscribe upstream. While one is awaited the subscription holds.
   */
  kept: number;
  /** An update that came while only kept listeners were left: each one back is sent it. */
  missed?: ServerNotification;
}

/** A live upstream subscription as one daemon hands it to the next (kept-subscriptions.ts). */
export interface HandedSubscription {
  serverId: string;
  uri: string;
  /** How many listeners (entries' connections) it had: each is awaited back. */
  listeners: number;
}

/** Whether a request brought its own handlers for what its server asks inside it. */
function asks(options: PassthroughOptions): boolean {
  return (
    options.onElicit !== undefined ||
    options.onSample !== undefined ||
    options.onRoots !== undefined
  );
}

export class Passthrough {
  readonly #deps: PassthroughDeps;
  /** Per server id, per uri: who listens. */
  readonly #subscriptions = new Map<string, Map<string, Subscription>>();
  /** Public listings and reads kept until their `ttlMs` runs out. */
  readonly #listings = new ListingCache();
  /** Handing over: a listener that leaves is kept for its entry's return (holdSubscriptions()). */
  #holding = false;
  /** Subscriptions a previous daemon handed over, until adoptSubscriptions() settles them. */
  readonly #expected: {
    serverId: string;
    uri: string;
    subscription: Subscription;
    settle(value: Promise<void> | void): void;
  }[] = [];

  constructor(deps: PassthroughDeps) {
    this.#deps = deps;
  }

  async request<M extends PassthroughMethod>(
    id: string,
    method: M,
    params: PassthroughParams<M> | undefined,
    options: PassthroughOptions = {},
  ): Promise<PassthroughResult<M>> {
    const { profile, ...asked } = options;
    const row = this.#deps.entry(id);
    const entry = profile === undefined ? row : this.#deps.entry(id, profile);
    const timeoutMs = options.timeoutMs ?? this.#deps.timeoutMs(row);
    // The result goes on as the server sent it: the consumer's own SDK reads it
    // there; only a result that is no object at all is refused here.
    const send = (): Promise<unknown> =>
      this.#send(entry, method, timeoutMs, (client) =>
        client.request(
          { method, ...(params !== undefined ? { params } : {}) },
          {
            ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
            ...(options.signal ? { signal: options.signal } : {}),
            // The calling agent's client info and log level, to a modern server.
            ...upstreamCaller(asked),
            ...(this.#deps.answerer && asks(asked)
              ? { answer: this.#deps.answerer(id, asked) }
              : {}),
          },
        ),
      );
    // A request that brought its handlers answers what its server asks inside it (a
    // 2025-11-25 server's question names no request: it goes to a caller in flight on the
    // connection, as a call's does), and its profile's refusals what it did not declare.
    const unroute = asks(asked)
      ? this.#deps.register?.(entryRoute(entry), ownHandlers(options))
      : undefined;
    let result: unknown;
    try {
      // Only a live server's kept listing is served (a new connection drops them); a
      // caller's own abort must not end the one request other callers share. A child's are
      // its own.
      result =
        entry === row && entry.connection
          ? await this.#listings.answer(
              id,
              method,
              params as Record<string, unknown> | undefined,
              send as () => Promise<object>,
              options.signal === undefined,
            )
          : await send();
    } finally {
      unroute?.();
    }
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      throw new McpPoolError(
        "tool-error",
        `server "${id}" answered ${method} with ${JSON.stringify(result)}, not a result object`,
        { serverId: id },
      );
    }
    return result as PassthroughResult<M>;
  }

  /**
   * Calls `listener` with each `notifications/resources/updated` server `id` sends for
   * `uri`, subscribing upstream when it is the first listener. Resolves with the function
   * that stops listening (unsubscribing upstream with the last listener).
   */
  async subscribe(
    id: string,
    uri: string,
    listener: ResourceListener,
  ): Promise<() => Promise<void>> {
    this.#deps.entry(id);
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
        ready: this.#upstream(id, uri, "resources/subscribe").then(() => {
          created.live = true;
        }),
        live: false,
        kept: 0,
      };
      created.ready.catch(() => this.#forget(id, uri, created));
      byUri.set(uri, created);
      subscription = created;
    }
    const held = subscription;
    held.listeners.add(listener);
    this.#welcomeBack(held, listener);
    try {
      await held.ready;
    } catch (error) {
      held.listeners.delete(listener);
      throw error;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      held.listeners.delete(listener);
      if (this.#holding && held.live) held.kept += 1;
      if (held.listeners.size > 0 || held.kept > 0 || !this.#forget(id, uri, held)) return;
      await this.#stopUpstream(id, uri);
    };
  }

  /** Unsubscribes `uri` upstream, if server `id` is connected (nothing is dialled for it). */
  async #stopUpstream(id: string, uri: string): Promise<void> {
    const entry = this.#deps.find(id);
    if (entry?.connection) {
      await this.#upstream(id, uri, "resources/unsubscribe", false).catch((error: unknown) =>
        serverLog(this.#deps.log, id).error(
          `resources/unsubscribe ${uri} failed: ${(error as Error).message}`,
        ),
      );
    }
    entry?.idle();
  }

  /** Whether server `id` has resource subscriptions (its idle timer waits for none). */
  held(id: string): boolean {
    return (this.#subscriptions.get(id)?.size ?? 0) > 0;
  }

  /** A notification of server `id`: a resources/updated goes to that uri's listeners. */
  deliver(id: string, notification: ServerNotification): void {
    this.#listings.drop(id, notification.method, notification.params);
    if (notification.method !== "notifications/resources/updated") return;
    const uri = notification.params?.uri;
    if (typeof uri !== "string") return;
    const subscription = this.#subscriptions.get(id)?.get(uri);
    if (subscription !== undefined && subscription.kept > 0) subscription.missed = notification;
    for (const listener of [...(subscription?.listeners ?? [])]) {
      try {
        listener(notification);
      } catch (error) {
        this.#deps.log.error?.(`mcpool: a resource listener threw: ${(error as Error).message}`);
      }
    }
  }

  /** Server `id` connected (again): what it was subscribed to died with the old connection. */
  connected(id: string): void {
    this.#listings.drop(id);
    for (const [uri, subscription] of this.#subscriptions.get(id) ?? []) {
      if (!subscription.live) continue;
      this.#upstream(id, uri, "resources/subscribe", false).catch((error: unknown) =>
        serverLog(this.#deps.log, id).error(
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

  /** The hand-over failed: listeners leave as before; the kept ones are awaited back here. */
  unholdSubscriptions(): void {
    this.#holding = false;
  }

  /** Every live upstream subscription, with how many listeners it had (kept ones included). */
  handedSubscriptions(): HandedSubscription[] {
    return [...this.#subscriptions].flatMap(([serverId, uris]) =>
      [...uris]
        .filter(([, subscription]) => subscription.live)
        .map(([uri, subscription]) => ({
          serverId,
          uri,
          listeners: subscription.listeners.size + subscription.kept,
        })),
    );
  }

  /**
   * The old daemon's live subscriptions, expected before this pool serves anyone: held, their
   * listeners awaited back, nothing sent upstream. A listener that comes back before
   * adoptSubscriptions() says whether its server's child was taken over waits for that.
   */
  expectSubscriptions(handed: readonly HandedSubscription[]): void {
    for (const { serverId, uri, listeners } of handed) {
      let uris = this.#subscriptions.get(serverId);
      if (!uris) {
        uris = new Map();
        this.#subscriptions.set(serverId, uris);
      }
      if (listeners < 1 || uris.has(uri)) continue;
      let settle: (value: Promise<void> | void) => void = () => undefined;
      const ready = new Promise<void>((resolve) => (settle = resolve));
      ready.catch(() => undefined);
      const expected: Subscription = { listeners: new Set(), ready, live: false, kept: listeners };
      uris.set(uri, expected);
      this.#expected.push({ serverId, uri, subscription: expected, settle });
    }
  }

  /**
   * The expected subscriptions of the rows in `adopted` (their same child, which holds them
   * still) are live; any other's (its child started anew, or its row gone) is subscribed
   * upstream for the listeners back by now, or forgotten when none is.
   */
  adoptSubscriptions(adopted: readonly string[]): void {
    const rows = new Set(adopted);
    for (const { serverId, uri, subscription, settle } of this.#expected.splice(0)) {
      if (rows.has(serverId)) {
        subscription.live = true;
        settle();
        continue;
      }
      subscription.kept = 0;
      delete subscription.missed;
      if (subscription.listeners.size === 0) {
        this.#forget(serverId, uri, subscription);
        settle();
        continue;
      }
      const upstream = this.#upstream(serverId, uri, "resources/subscribe").then(() => {
        subscription.live = true;
      });
      upstream.catch(() => this.#forget(serverId, uri, subscription));
      settle(upstream);
    }
  }

  /**
   * Stops awaiting the listeners kept for a hand-over: each subscription none came back to is
   * unsubscribed upstream (an entry that comes later subscribes again, as a new one would).
   */
  async dropKept(): Promise<void> {
    const left: Promise<void>[] = [];
    for (const [id, uris] of this.#subscriptions) {
      for (const [uri, subscription] of uris) {
        if (subscription.kept === 0) continue;
        subscription.kept = 0;
        delete subscription.missed;
        if (subscription.listeners.size > 0 || !this.#forget(id, uri, subscription)) continue;
        left.push(this.#stopUpstream(id, uri));
      }
    }
    await Promise.all(left);
  }

  /** A listener joined: one kept for it is back, and hears what it missed meanwhile. */
  #welcomeBack(subscription: Subscription, listener: ResourceListener): void {
    if (subscription.kept === 0) return;
    subscription.kept -= 1;
    const missed = subscription.missed;
    if (subscription.kept === 0) delete subscription.missed;
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

  #upstream(
    id: string,
    uri: string,
    method: "resources/subscribe" | "resources/unsubscribe",
    dial = true,
  ): Promise<void> {
    const entry = this.#deps.entry(id);
    const timeoutMs = this.#deps.timeoutMs(entry);
    const options = timeoutMs !== undefined ? { timeout: timeoutMs } : {};
    return this.#send(
      entry,
      method,
      timeoutMs,
      async (client) => {
        if (method === "resources/subscribe") await client.subscribeResource({ uri }, options);
        else await client.unsubscribeResource({ uri }, options);
      },
      dial,
    );
  }

  /** `work` on the server's client: a use, capability-checked, session loss handled. */
  async #send<T>(
    entry: ServerEntry,
    surface: Surface,
    timeoutMs: number | undefined,
    work: (client: McpClient) => Promise<T>,
    dial = true,
  ): Promise<T> {
    entry.busy();
    try {
      const holder = dial
        ? entry
        : {
            ensure: async () => {
              if (!entry.connection)
                throw new McpPoolError("closed", `server "${entry.id}" is not connected`);
              return entry.connection;
            },
            redial: (dead: Parameters<ServerEntry["redial"]>[0]) => entry.redial(dead),
          };
      return await withSession(holder, (connection) =>
        holding(connection, async () => {
          assertOffered(entry.id, surface, connection.capabilities);
          return work(connection.client);
        }),
      );
    } catch (error) {
      throw upstreamError(error, {
        serverId: entry.id,
        what: surface,
        timeoutMs,
        authRefusal: this.#deps.authRefusal?.(entry.id, error),
      });
    } finally {
      entry.idle();
    }
  }
}
