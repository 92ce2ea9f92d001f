/**
 * One small handler per method of the wire (mcpool-protocol's METHODS), each `(params, ctx)`:
 * the table's keys, params and results are the descriptors' (HandlerTable), so a new method
 * is a descriptor in protocol/src/methods.ts and its handler here, and tsc names a missing one.
 * They translate between the wire's params and the pool's calls and nothing more: scope,
 * timeouts and refusals are the pool's. Secrets leave the pool only when a request asks for
 * them; that the asker is this user is the socket's business (0600, uid check).
 */
import { isHostProfile, type HostProfile } from "mcpool-protocol";
import {
  defined,
  PROTOCOL_VERSION,
  type CallToolResult,
  type ConfigStatus,
  type DaemonStatus,
  type HandoverResult,
  type MethodName,
  type NotificationParamsOf,
  type ResultOf,
} from "mcpool-protocol";

import { HOOK_EVENTS, isHookEvent, type HookContext, type HookEvent } from "../../config/hooks.js";
import type { McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../../pool/core/errors.js";
import type { CallOptions } from "../../pool/calls/options.js";
import type { CallSignal, ServerState, UsageReport } from "../../pool/core/types.js";
import type { NotificationListener } from "../../pool/pool-events.js";
import type { HandlerTable, RequestContext } from "../socket/server.js";
import { ConnectionHosts, forServedHosts } from "./connection-hosts.js";
import { callOptions } from "./calls.js";
import { createPassthroughHandlers, type PassthroughPool } from "./wire-passthrough.js";
import { createTaskHandlers, type TasksPool } from "./wire-tasks.js";
import {
  checkedProfile,
  createConversationHandlers,
  type ConversationPool,
} from "./conversations.js";

type Awaitable<T> = T | PromiseLike<T>;

/** A method's result as its descriptor in mcpool-protocol's METHODS types it. */
type Answer<M extends MethodName> = Awaitable<ResultOf<M>>;

/**
 * Exactly what the handlers use of the pool. Its answers are typed by the methods'
 * descriptors rather than written out again, so a descriptor that changes its result
 * fails here and in the handler, not on the wire.
 */
export interface PoolLike extends PassthroughPool, ConversationPool, TasksPool {
  /** Resolves once the first reconcile is done, or a bound passed; never rejects. */
  ready(): Promise<void>;
  state(options: { secrets: boolean }): Answer<"pool/state">;
  tools(options: { names?: readonly string[]; servers?: readonly string[] }): Answer<"tools/list">;
  catalog(servers?: readonly string[]): Answer<"tools/catalog">;
  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number },
  ): Answer<"tools/search">;
  /** undefined where the wire says null: the name would be refused. */
  describe(
    name: string,
    options: { servers?: readonly string[]; hidden?: boolean; profile?: HostProfile },
  ): Awaitable<NonNullable<ResultOf<"tools/describe">> | undefined>;
  alwaysLoaded(servers?: readonly string[]): Answer<"tools/always-loaded">;
  /** Never rejects: every hook's failure is an outcome. */
  runHooks(
    event: HookEvent,
    context: HookContext,
    options: { servers?: readonly string[]; signal?: CallSignal },
  ): Promise<ResultOf<"hooks/run">>;
  /** A string, or the CallToolResult when `options.raw`. */
  call(
    name: string,
    input: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<unknown>;
  probe(row: McpServerConfig): Answer<"server/probe">;
  stop(id: string): Awaitable<void>;
  reconnect(id: string): Awaitable<void>;
  /** Dials an idle server, so what a person approves is a live list. */
  pinInfo(id: string): Promise<ResultOf<"server/pin-info">>;
  approve(id: string, fingerprint: string): Promise<ResultOf<"server/approve">>;
  /** Stores an OAuth sign-in for an http server and redials it; never rejects on the dial. */
  storeCredentials(id: string, credentials: unknown): Promise<ResultOf<"auth/store">>;
  forgetCredentials(id: string): Promise<ResultOf<"auth/forget">>;
  /** A 2025-11-25 host's project children opened ahead of its roots (prepared-children.ts). */
  profiles: {
    prepare(profile: HostProfile, holder: string, servers?: readonly string[]): Promise<string[]>;
    release(holder: string): void;
  };
  /** Returns the unsubscribe function. */
  onEvent(listener: (event: NotificationParamsOf<"event">) => void): () => void;
  /** Returns the unsubscribe function. */
  onNotification(listener: NotificationListener): () => void;
}

/** What the handlers use of the PoolMonitor. */
export interface MonitorLike {
  withResources(states: readonly ServerState[]): Promise<ServerState[]>;
  usage(options: { since?: number; servers?: readonly string[] }): UsageReport;
}

export interface HandlerDeps {
  pool: PoolLike;
  /** Resource figures and usage counts; absent: neither is offered. */
  monitor?: MonitorLike;
  status(): DaemonStatus;
  /** Re-reads the config file and reconciles now; resolves with the file's state. */
  reload(): Promise<ConfigStatus>;
  /** Begins a graceful shutdown; called after the request's answer is on its way. */
  shutdown(): void;
  /**
   * Hands the servers to a new daemon, keeping connection `keepId` open to answer it; this
   * daemon stops once the answer is on its way. Absent: refused (a daemon inside a program).
   */
  handover?(keepId: number): Promise<HandoverResult>;
  /** The daemon's version for hello. Default: status().version. */
  version?: string;
}

interface Subscription {
  /** Set while the connection takes events; undefined again once it stops. */
  offEvents?: (() => void) | undefined;
  offNotifications?: (() => void) | undefined;
  /** Every call of the connection answers its server's elicitations. */
  elicit?: boolean;
  /** Every call of the connection answers its server's sampling requests. */
  sample?: boolean;
}

/**
 * The listener that pushes pool events to `ctx`'s connection: every type, or only `types`
 * (a call event is then neither encoded nor written for a connection that did not ask).
 */
function eventPusher(
  ctx: RequestContext,
  types: readonly string[] | undefined,
): (event: NotificationParamsOf<"event">) => void {
  if (types === undefined) return (event) => void ctx.notify("event", event);
  const wanted = new Set(types);
  return (event) => {
    if (wanted.has(event.type)) ctx.notify("event", event);
  };
}

/**
 * Listings that would miss the servers still starting: they wait for the pool's first
 * reconcile. So does opening ahead for a host, which needs what each row speaks: read from
 * the tools cache then, or found by the row's first dial.
 */
const READY_FIRST = [
  "profiles/prepare",
  "tools/list",
  "tools/catalog",
  "tools/search",
  "tools/describe",
  "tools/always-loaded",
  // Usage is read beside the catalog (`mcpool stats` names each tool and its cost).
  "pool/usage",
] as const satisfies readonly MethodName[];

export function createHandlers(deps: HandlerDeps): HandlerTable {
  const hosts = new ConnectionHosts();
  const table = handlerTable(deps, hosts);
  const wrapped: Record<string, unknown> = {};
  const ready = new Set<string>(READY_FIRST);
  for (const [method, handler] of Object.entries(table)) {
    const handle = handler as (params: unknown, ctx: RequestContext) => unknown;
    const waits = ready.has(method);
    wrapped[method] = (params: unknown, ctx: RequestContext) => {
      // A host of the profile a request names is on this connection (connection-hosts.ts).
      const profile = (params as { profile?: unknown } | undefined)?.profile;
      if (profile !== undefined && isHostProfile(profile)) hosts.named(ctx, profile);
      return waits ? deps.pool.ready().then(() => handle(params, ctx)) : handle(params, ctx);
    };
  }
  return wrapped as unknown as HandlerTable;
}

function handlerTable(deps: HandlerDeps, hosts: ConnectionHosts): HandlerTable {
  const { pool } = deps;
  /** Per connection id: what it subscribed to, undone when the connection closes. */
  const subscriptions = new Map<number, Subscription>();
  const tasks = createTaskHandlers(pool);

  return {
    hello: () => ({
      protocolVersion: PROTOCOL_VERSION,
      daemonVersion: deps.version ?? deps.status().version,
      pid: process.pid,
      namesHosts: true,
    }),

    // Observing: resources and usage come from the monitor.
    "pool/state": async (params) => {
      const states = await pool.state({ secrets: params.secrets === true });
      return params.resources === true && deps.monitor
        ? deps.monitor.withResources(states)
        : states;
    },

    "pool/usage": (params) =>
      deps.monitor?.usage(defined({ since: params.since, servers: params.servers })) ?? {
        tools: [],
      },

    "tools/call": (params, ctx) => {
      const subscribed = subscriptions.get(ctx.connection.id);
      const options = callOptions(params, ctx, subscribed, (owner) => tasks.owner(ctx, owner));
      // One step on the answer, not an async function's: a throw in callOptions() fails the
      // request as a rejection would.
      return pool
        .call(params.name, params.arguments, options)
        .then((out) =>
          params.raw === true
            ? { result: out as CallToolResult }
            : { text: typeof out === "string" ? out : JSON.stringify(out) },
        );
    },

    "tools/catalog": (params) => pool.catalog(params.servers),

    "tools/search": (params) =>
      pool.search(params.query, defined({ servers: params.servers, limit: params.limit })),

    "tools/describe": async (params) => {
      const { name, servers, hidden, identity } = params;
      const options = defined({ servers, hidden, profile: checkedProfile(params.profile) });
      const shared = await pool.describe(name, options);
      if (shared !== undefined || identity === undefined) return shared ?? null;
      // A tool of a per-conversation row is only in that conversation's listing.
      const scope = servers !== undefined ? new Set(servers) : undefined;
      const own = await pool.conversations?.describe(name, scope, defined({ identity, hidden }));
      return own ?? null;
    },

    "tools/always-loaded": (params) => pool.alwaysLoaded(params.servers),

    "hooks/run": (params, ctx) => {
      if (!isHookEvent(params.event)) {
        throw new McpPoolError(
          "invalid-arguments",
          `"event" must be one of ${HOOK_EVENTS.join(", ")}, got ${JSON.stringify(params.event)}`,
        );
      }
      // Hooks end with the connection that asked for them: nobody is left to read them.
      return pool.runHooks(
        params.event,
        params.context,
        defined({ servers: params.servers, signal: ctx.signal }),
      );
    },

    "server/probe": (params) => pool.probe(params.row),

    "server/stop": async (params) => {
      await pool.stop(params.id);
      return {};
    },

    "server/reconnect": async (params) => {
      await pool.reconnect(params.id);
      return {};
    },

    "server/pin-info": (params) => pool.pinInfo(params.id),

    "server/approve": (params) => pool.approve(params.id, params.fingerprint),

    "auth/store": (params) =>
      pool.storeCredentials(params.id, {
        tokens: params.tokens,
        clientInformation: params.clientInformation,
        notice: params.notice,
      }),

    "auth/forget": (params) => pool.forgetCredentials(params.id),

    "pool/reload": () => deps.reload(),

    "pool/subscribe": subscribeHandler(pool, subscriptions, hosts),

    ...createPassthroughHandlers(pool),
    ...profileHandlers(pool),

    ...tasks.handlers,

    // tools/list too: with an identity it adds the conversation's tools.
    ...createConversationHandlers(pool),

    "daemon/status": async (params) => {
      const status = deps.status();
      if (params.resources !== true || !deps.monitor) return status;
      const servers = await deps.monitor.withResources(status.servers);
      return { ...status, servers, rssBytes: process.memoryUsage.rss() };
    },

    "daemon/handover": (_params, ctx) => {
      if (!deps.handover) {
        throw new McpPoolError(
          "handover-failed",
          "this daemon cannot hand over: it was not started by `mcpool serve`",
          {},
        );
      }
      return deps.handover(ctx.connection.id);
    },

    "daemon/shutdown": () => {
      // After this answer is written: close() drains, and must not wait for this request.
      setImmediate(() => deps.shutdown());
      return {};
    },
  };
}

/**
 * `pool/subscribe`: the streams a connection asks for (events, its server's notifications,
 * the daemon's requests), each left as it was when the params leave it out, and all undone
 * when the connection closes.
 */
function subscribeHandler(
  pool: HandlerDeps["pool"],
  subscriptions: Map<number, Subscription>,
  hosts: ConnectionHosts,
): HandlerTable["pool/subscribe"] {
  return (params, ctx) => {
    const { id, signal } = ctx.connection;
    if (signal.aborted) return {};
    let sub = subscriptions.get(id);
    if (sub === undefined) {
      const created: Subscription = {};
      sub = created;
      subscriptions.set(id, created);
      signal.addEventListener(
        "abort",
        () => {
          created.offEvents?.();
          created.offNotifications?.();
          subscriptions.delete(id);
        },
        { once: true },
      );
    }
    if (params.events === true) {
      // Subscribed again: the types asked now replace the last ones.
      sub.offEvents?.();
      sub.offEvents = pool.onEvent(eventPusher(ctx, params.eventTypes));
    } else if (params.events === false && sub.offEvents !== undefined) {
      sub.offEvents();
      sub.offEvents = undefined;
    }
    if (params.elicit !== undefined) sub.elicit = params.elicit;
    if (params.sample !== undefined) sub.sample = params.sample;
    if (params.notifications === true && sub.offNotifications === undefined) {
      sub.offNotifications = pool.onNotification((serverId, notification, from) => {
        // A resource's updates go only to the connections that subscribed to it, a task's
        // status only to its owner's, a log line or list change only to the hosts the
        // connection that sent it serves.
        if (notification.method === "notifications/resources/updated") return;
        if (notification.method === "notifications/tasks/status") return;
        if (!forServedHosts(notification)) {
          ctx.notify("notification", { serverId, notification });
          return;
        }
        const served = hosts.servedBy(id, from);
        if (served.length === 0) return;
        const child = from.key === undefined ? {} : { child: from.key };
        ctx.notify("notification", { serverId, notification, ...child, hosts: served });
      });
    } else if (params.notifications === false && sub.offNotifications !== undefined) {
      sub.offNotifications();
      sub.offNotifications = undefined;
    }
    return {};
  };
}

/**
 * `profiles/prepare` and `profiles/release`: what a bridge has opened ahead for a host
 * (prepared-children.ts), held until it lets go, or its connection ends.
 */
function profileHandlers(
  pool: HandlerDeps["pool"],
): Pick<HandlerTable, "profiles/prepare" | "profiles/release"> {
  /** Per holder: its connection, and its release as that ends. */
  const held = new Map<string, { signal: AbortSignal; release: () => void }>();
  return {
    "profiles/prepare": async (params, ctx) => {
      const profile = checkedProfile(params.profile) ?? {};
      const { signal } = ctx.connection;
      const release = (): void => {
        held.delete(params.holder);
        pool.profiles.release(params.holder);
      };
      held.set(params.holder, { signal, release });
      signal.addEventListener("abort", release, { once: true });
      const prepared = await pool.profiles.prepare(profile, params.holder, params.servers);
      if (signal.aborted) release();
      return { prepared };
    },

    "profiles/release": (params) => {
      const holder = held.get(params.holder);
      holder?.signal.removeEventListener("abort", holder.release);
      held.delete(params.holder);
      pool.profiles.release(params.holder);
      return {};
    },
  };
}
