/**
 * One small handler per method of the wire (mcpool-client's METHODS), each `(params, ctx)`.
 * They translate between the wire's params and the pool's calls and nothing more: scope,
 * timeouts and refusals are the pool's. Secrets leave the pool only when a request asks for
 * them (SPEC E1); that the asker is this user is the socket's business (0600, uid check).
 */
import {
  PROTOCOL_VERSION,
  type CallToolResult,
  type CatalogServer,
  type ConfigStatus,
  type DaemonStatus,
} from "mcpool-client";

import type { McpServerConfig } from "../config/rows.js";
import type {
  CallOptions,
  PoolEvent,
  ProbeResult,
  ServerNotification,
  ServerState,
  ToolDefinition,
} from "../pool/types.js";
import type { HandlerTable } from "./socket-server.js";

type Awaitable<T> = T | PromiseLike<T>;

/** Exactly what the handlers use of the pool. */
export interface PoolLike {
  state(options: { secrets: boolean }): Awaitable<readonly ServerState[]>;
  tools(options: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Awaitable<readonly ToolDefinition[]>;
  catalog(servers?: readonly string[]): Awaitable<readonly CatalogServer[]>;
  /** A string, or the CallToolResult when `options.raw`. */
  call(
    name: string,
    input: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<unknown>;
  probe(row: McpServerConfig): Awaitable<ProbeResult>;
  stop(id: string): Awaitable<void>;
  reconnect(id: string): Awaitable<void>;
  /** Returns the unsubscribe function. */
  onEvent(listener: (event: PoolEvent) => void): () => void;
  /** Returns the unsubscribe function. */
  onNotification(
    listener: (serverId: string, notification: ServerNotification) => void,
  ): () => void;
}

export interface HandlerDeps {
  pool: PoolLike;
  status(): DaemonStatus;
  /** Re-reads the config file and reconciles now; resolves with the file's state. */
  reload(): Promise<ConfigStatus>;
  /** Begins a graceful shutdown; called after the request's answer is on its way. */
  shutdown(): void;
  /** The daemon's version for hello. Default: status().version. */
  version?: string;
}

/** Keys whose value is undefined left out: to the pool, absent and undefined may differ. */
function defined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item;
  return out as T;
}

interface Subscription {
  offEvents?: () => void;
  offNotifications?: () => void;
}

export function createHandlers(deps: HandlerDeps): HandlerTable {
  const { pool } = deps;
  /** Per connection id: what it subscribed to, undone when the connection closes. */
  const subscriptions = new Map<number, Subscription>();

  return {
    hello: () => ({
      protocolVersion: PROTOCOL_VERSION,
      daemonVersion: deps.version ?? deps.status().version,
      pid: process.pid,
    }),

    "pool/state": (params) => pool.state({ secrets: params.secrets === true }),

    "tools/list": (params) => pool.tools(defined({ names: params.names, servers: params.servers })),

    "tools/call": async (params, ctx) => {
      const options: CallOptions = defined({
        servers: params.servers,
        timeoutMs: params.timeoutMs,
        raw: params.raw,
        maxResultChars: params.maxResultChars,
        signal: ctx.signal,
      });
      const out = await pool.call(params.name, params.arguments, options);
      if (params.raw === true) return { result: out as CallToolResult };
      return { text: typeof out === "string" ? out : JSON.stringify(out) };
    },

    "tools/catalog": (params) => pool.catalog(params.servers),

    "server/probe": (params) => pool.probe(params.row),

    "server/stop": async (params) => {
      await pool.stop(params.id);
      return {};
    },

    "server/reconnect": async (params) => {
      await pool.reconnect(params.id);
      return {};
    },

    "pool/reload": () => deps.reload(),

    "pool/subscribe": (params, ctx) => {
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
      if (params.events === true && sub.offEvents === undefined) {
        sub.offEvents = pool.onEvent((event) => ctx.notify("event", event));
      } else if (params.events === false && sub.offEvents !== undefined) {
        sub.offEvents();
        sub.offEvents = undefined;
      }
      if (params.notifications === true && sub.offNotifications === undefined) {
        sub.offNotifications = pool.onNotification((serverId, notification) =>
          ctx.notify("notification", { serverId, notification }),
        );
      } else if (params.notifications === false && sub.offNotifications !== undefined) {
        sub.offNotifications();
        sub.offNotifications = undefined;
      }
      return {};
    },

    "daemon/status": () => deps.status(),

    "daemon/shutdown": () => {
      // After this answer is written: close() drains, and this request must not be the
      // one it waits for.
      setImmediate(() => deps.shutdown());
      return {};
    },
  };
}
