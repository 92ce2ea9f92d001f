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
 * Resource subscriptions are the pool's, not a caller's: a connection sees one subscribe per
 * uri however many listeners share it, one unsubscribe when the last one leaves, and the
 * subscribe again after a reconnect. A host's subscription is held where its calls go — the
 * row's child for its profile when it has one (a legacy host of a row held in 2026-07-28
 * subscribes on its 2025-11-25 child, a host with roots on its project's child), the row's
 * own connection otherwise — so the server that sends an update for the session that turned
 * it on sends it to the host that did, as direct; and it is checked against what that
 * connection offers. While a connection has subscriptions it is not idle-reaped.
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
import { Subscriptions, subscriptionPlace, type ResourceListener } from "./subscriptions.js";
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
  /** Row `id`'s child for the profile under `key`, if there is one. */
  child?(id: string, key: string): ServerEntry | undefined;
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

export type { HandedSubscription, ResourceListener } from "./subscriptions.js";

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
  /** Public listings and reads kept until their `ttlMs` runs out. */
  readonly #listings = new ListingCache();
  /** Who listens to which uri of which server (subscriptions.ts). */
  readonly subscriptions: Subscriptions;

  constructor(deps: PassthroughDeps) {
    this.#deps = deps;
    this.subscriptions = new Subscriptions({
      upstream: (place, uri, method, dial) => this.#upstream(place, uri, method, dial),
      stopUpstream: (place, uri) => this.#stopUpstream(place, uri),
      log: deps.log,
    });
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
   * See Subscriptions.subscribe: held on the connection that serves the calls of the host of
   * `profile` (its child for that profile, when it has one; else, or with no profile, the
   * row's own, shared by every host it serves).
   */
  subscribe(
    id: string,
    uri: string,
    listener: ResourceListener,
    name?: string,
    profile?: HostProfile,
  ): Promise<() => Promise<void>> {
    const entry = profile === undefined ? this.#deps.entry(id) : this.#deps.entry(id, profile);
    const { serverId, profile: key } = entryRoute(entry);
    return this.subscriptions.subscribe(subscriptionPlace(serverId, key), uri, listener, name);
  }

  /** The entry of `place` (subscriptionPlace()): a row's own, or its child's if it is there. */
  #placed(place: string): ServerEntry | undefined {
    const at = place.indexOf("\0");
    if (at === -1) return this.#deps.find(place);
    return this.#deps.child?.(place.slice(0, at), place.slice(at + 1));
  }

  /** Unsubscribes `uri` upstream, if `place` is connected (nothing is dialled for it). */
  async #stopUpstream(place: string, uri: string): Promise<void> {
    const entry = this.#placed(place);
    if (entry?.connection) {
      await this.#upstream(place, uri, "resources/unsubscribe", false).catch((error: unknown) =>
        serverLog(this.#deps.log, entry.id).error(
          `resources/unsubscribe ${uri} failed: ${(error as Error).message}`,
        ),
      );
    }
    entry?.idle();
  }

  /**
   * Whether server `id`'s connection (`key`: its child's for that profile) has resource
   * subscriptions (its idle timer waits for none).
   */
  held(id: string, key?: string): boolean {
    return this.subscriptions.held(subscriptionPlace(id, key));
  }

  /**
   * A notification of server `id` (`key`: sent on its child's connection for that profile): a
   * row's may stale a kept listing; an update goes to the listeners of that connection.
   */
  deliver(id: string, notification: ServerNotification, key?: string): void {
    if (key === undefined) this.#listings.drop(id, notification.method, notification.params);
    this.subscriptions.deliver(subscriptionPlace(id, key), notification);
  }

  /**
   * Server `id` connected (again; `key`: its child for that profile): a row's kept listings
   * go, and what was subscribed on that connection is sent again.
   */
  connected(id: string, key?: string): void {
    if (key === undefined) this.#listings.drop(id);
    this.subscriptions.connected(subscriptionPlace(id, key));
  }

  #upstream(
    place: string,
    uri: string,
    method: "resources/subscribe" | "resources/unsubscribe",
    dial = true,
  ): Promise<void> {
    let entry: ServerEntry | undefined;
    try {
      entry = place.includes("\0") ? this.#placed(place) : this.#deps.entry(place);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (entry === undefined) {
      const serverId = place.slice(0, place.indexOf("\0"));
      return Promise.reject(
        new McpPoolError("closed", `server "${serverId}"'s connection for that host is gone`),
      );
    }
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
