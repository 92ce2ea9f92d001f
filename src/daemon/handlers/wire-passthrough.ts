/**
 * The wire's passthrough methods, one small handler each: a request to one
 * pooled server by id, refused by the pool with `not-offered` where the server's
 * capabilities lack it. Resource subscriptions are per connection and per host of it (the
 * `taskOwner` a subscribe names, as a task request does) and its profile (held where that
 * host's requests go: its child, when it has one): its `notifications/resources/updated` go
 * to the connections that subscribed to that uri on that server, as `notification` naming
 * that host and the profile's subscriptionKey(), and end with the connection. A hand-over
 * keeps a named host's place for that name alone.
 */
import { defined, subscriptionKey, type AskingParams, type HostProfile } from "mcpool-protocol";

import type { ServerNotification } from "../../pool/core/types.js";
import type {
  PassthroughMethod,
  PassthroughOptions,
  PassthroughParams,
  PassthroughResult,
} from "../../pool/calls/server-passthrough.js";
import type { HandlerTable, RequestContext } from "../socket/server.js";
import { routedCall } from "./calls.js";
import { checkedProfile } from "./conversations.js";

/** Exactly what the passthrough handlers use of the pool. */
export interface PassthroughPool {
  request<M extends PassthroughMethod>(
    id: string,
    method: M,
    params?: PassthroughParams<M>,
    options?: PassthroughOptions,
  ): Promise<PassthroughResult<M>>;
  subscribeResource(
    id: string,
    uri: string,
    listener: (notification: ServerNotification) => void,
    name?: string,
    profile?: HostProfile,
  ): Promise<() => Promise<void>>;
}

export const PASSTHROUGH_WIRE_METHODS = [
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "server/ping",
  "logging/setLevel",
] as const;

export type PassthroughHandlers = Pick<HandlerTable, (typeof PASSTHROUGH_WIRE_METHODS)[number]>;

export function createPassthroughHandlers(pool: PassthroughPool): PassthroughHandlers {
  /** Per connection id, per `<serverId>\0<uri>\0<taskOwner>\0<subscriptionKey>`: how to stop listening. */
  const subscriptions = new Map<number, Map<string, Promise<(() => Promise<void>) | undefined>>>();

  const options = (ctx: RequestContext): PassthroughOptions => ({ signal: ctx.signal });
  /** The calling host's profile: the request goes where its calls go (its own child). */
  const profiled = (params: { profile?: unknown }, ctx: RequestContext): PassthroughOptions => {
    const profile = checkedProfile(params.profile);
    return { ...options(ctx), ...(profile !== undefined ? { profile } : {}) };
  };
  /** A modern server's questions inside the request go back to this connection. */
  const asking = (params: AskingParams, ctx: RequestContext): PassthroughOptions => ({
    ...profiled(params, ctx),
    ...(params.caller !== undefined ? { caller: params.caller } : {}),
    ...routedCall(
      params.roots === true ? { roots: true } : {},
      ctx,
      params.elicit === true,
      params.sample === true,
    ),
  });

  /** A page of one of a server's lists, asked where the calling host's calls go. */
  const listing =
    <M extends "resources/list" | "resources/templates/list" | "prompts/list">(method: M) =>
    (params: { serverId: string; cursor?: string; profile?: unknown }, ctx: RequestContext) =>
      pool.request(
        params.serverId,
        method,
        defined({ cursor: params.cursor }),
        profiled(params, ctx),
      );

  function subscriptionsOf(
    ctx: RequestContext,
  ): Map<string, Promise<(() => Promise<void>) | undefined>> {
    const { id, signal } = ctx.connection;
    let held = subscriptions.get(id);
    if (held === undefined) {
      const created = new Map<string, Promise<(() => Promise<void>) | undefined>>();
      held = created;
      subscriptions.set(id, created);
      signal.addEventListener(
        "abort",
        () => {
          subscriptions.delete(id);
          for (const off of created.values()) void off.then((stop) => stop?.());
        },
        { once: true },
      );
    }
    return held;
  }

  return {
    "resources/list": listing("resources/list"),

    "resources/templates/list": listing("resources/templates/list"),

    "resources/read": (params, ctx) =>
      pool.request(params.serverId, "resources/read", { uri: params.uri }, asking(params, ctx)),

    "resources/subscribe": async (params, ctx) => {
      if (ctx.connection.signal.aborted) return {};
      const held = subscriptionsOf(ctx);
      const { serverId, uri, taskOwner } = params;
      const profile = checkedProfile(params.profile);
      const subscription = subscriptionKey(profile);
      const key = `${serverId}\0${uri}\0${taskOwner ?? ""}\0${subscription}`;
      const already = held.get(key);
      if (already !== undefined) {
        await already;
        return {};
      }
      const about = { ...(taskOwner !== undefined ? { taskOwner } : {}), subscription };
      const subscribing = pool.subscribeResource(
        serverId,
        uri,
        (notification) => ctx.notify("notification", { serverId, notification, ...about }),
        taskOwner,
        profile,
      );
      held.set(
        key,
        subscribing.catch(() => undefined),
      );
      try {
        await subscribing;
      } catch (error) {
        if (held.get(key) !== undefined) held.delete(key);
        throw error;
      }
      return {};
    },

    "resources/unsubscribe": async (params, ctx) => {
      const held = subscriptions.get(ctx.connection.id);
      const subscription = subscriptionKey(checkedProfile(params.profile));
      const key = `${params.serverId}\0${params.uri}\0${params.taskOwner ?? ""}\0${subscription}`;
      const off = held?.get(key);
      held?.delete(key);
      await (
        await off
      )?.();
      return {};
    },

    "prompts/list": listing("prompts/list"),

    "prompts/get": (params, ctx) =>
      pool.request(
        params.serverId,
        "prompts/get",
        defined({ name: params.name, arguments: params.arguments }),
        asking(params, ctx),
      ),

    "completion/complete": (params, ctx) =>
      pool.request(
        params.serverId,
        "completion/complete",
        defined({ ref: params.ref, argument: params.argument, context: params.context }),
        profiled(params, ctx),
      ),

    "server/ping": async (params, ctx) => {
      await pool.request(params.serverId, "ping", undefined, options(ctx));
      return {};
    },

    // The level of the connection the host's calls go to: its own server process's, as direct.
    "logging/setLevel": async (params, ctx) => {
      await pool.request(
        params.serverId,
        "logging/setLevel",
        { level: params.level },
        profiled(params, ctx),
      );
      return {};
    },
  };
}
