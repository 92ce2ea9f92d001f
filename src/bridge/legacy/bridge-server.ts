/**
 * The bridge: an MCP server whose every answer comes from the daemon, through
 * one PoolClient shared by all the host sessions of this process. `createBridge()` checks the
 * scope against the pool, subscribes to the pool's events and notifications, and hands out
 * one low-level SDK `Server` per host connection (`createServer()`); the transports are the
 * caller's (stdio in the CLI, Streamable HTTP in http.ts). `serve()` serves a stdio-shaped
 * connection in the era its host opens with: a 2026-07-28 host gets the SDK v2 side on
 * the same core (era-switch.ts, modern/bridge.ts).
 *
 * The parts, each with its own state: the tools in scope, their names and calls (tools.ts),
 * what the pool sends unasked — list changes, log lines, resource updates (pool-traffic.ts),
 * the legacy host sessions and their handlers (sessions.ts), resources, prompts and
 * completion (resources-prompts.ts) and tools on demand (catalog/on-demand.ts).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient, ServerState } from "mcpool-client";

import { connectionIdentity, type BridgeIdentityOptions } from "../core/conversation.js";
import { scopeOf, type Scope } from "../core/naming.js";
import {
  capabilitiesFor,
  taskServers,
  instructionsFor,
  knownStates,
  legacyFaced,
  serverInfoFor,
  speaksOnlyLegacy,
  subscribesResources,
} from "../core/offer.js";
import { modernCatalog } from "../catalog/modern-catalog.js";
import { ResourcesPromptsRouter } from "../core/resources-prompts.js";
import { createCatalog, type Catalog, type CatalogOptions } from "../catalog/on-demand.js";
import { Sessions, type HostName } from "../core/session.js";
import { dualEra, type ServedConnection, type StdioLike } from "../modern/era-switch.js";
import type { BridgeCore } from "../modern/bridge-core.js";
import type { ModernBridge } from "../modern/bridge.js";
import { BridgeTools } from "./tools.js";
import { PoolTraffic } from "./pool-traffic.js";
import { LegacySessions } from "./sessions.js";

export interface BridgeOptions {
  /** The daemon, reached through mcpool-client; the bridge does not close it. */
  client: PoolClient;
  /** `--servers`: the server ids served; absent = every server. */
  servers?: readonly string[];
  /** `--server`: serve exactly this server, under its own names. */
  server?: string;
  /** serverInfo sent to hosts. Default `{ name: "mcpool", version: "0.0.0" }`. */
  name?: string;
  version?: string;
  /** Where what a host cannot be told goes (the CLI passes stderr). Default: nowhere. */
  log?: (line: string) => void;
  /** Whose conversations the host connections are, for per-conversation servers (conversation.ts). */
  identity?: BridgeIdentityOptions;
  /**
   * `--catalog` (catalog/on-demand.ts): list the rows' `alwaysLoad` tools and the pool's
   * search, describe and call tools instead of every definition. Absent: every definition.
   */
  catalog?: CatalogOptions;
}

export interface Bridge {
  /** A new SDK Server for one host connection (named `host`, if it is); connect it to a transport. */
  createServer(host?: HostName): Server;
  /**
   * Serves one stdio-shaped connection (stdio, an MCP socket) in the era its host opens
   * with (era-switch.ts): a legacy host gets a `createServer()` session, a modern one the
   * SDK v2 entry (modern/bridge.ts). Starts the transport. `host`: the name its host's
   * session goes by, once its entry gave it (an MCP socket's first line).
   */
  serve(transport: StdioLike, host?: HostName): Promise<ServedConnection>;
  /** The modern side (SDK v2), loaded on the first modern host. */
  modern(): Promise<ModernBridge>;
  /** Host sessions open now. */
  readonly sessions: number;
  /** The capabilities every session declares. */
  readonly capabilities: ServerCapabilities;
  /**
   * The servers in scope speak only the legacy era (offer.ts speaksOnlyLegacy), as last
   * found: a modern host is led to fall back to it.
   */
  readonly legacyOnly: boolean;
  /** Closes every session and stops listening to the pool. Idempotent; the client stays open. */
  close(): Promise<void>;
}

/** The scope names a server the pool does not have (`--server`), or nothing at all. */
export class BridgeScopeError extends Error {
  override readonly name = "BridgeScopeError";
}

function describeScope(states: readonly ServerState[]): string {
  return states.length === 0 ? "no servers" : states.map((s) => s.id).join(", ");
}

export async function createBridge(options: BridgeOptions): Promise<Bridge> {
  const upstream = options.client;
  const scope = scopeOf(options);
  const log = options.log ?? (() => undefined);
  const states = await knownStates(upstream, scope.single, log);
  if (scope.single !== undefined && !states.some((s) => s.id === scope.single)) {
    throw new BridgeScopeError(
      `the pool has no server "${scope.single}" (it has ${describeScope(states)})`,
    );
  }
  for (const id of scope.servers ?? []) {
    if (!states.some((s) => s.id === id)) log(`mcpool bridge: the pool has no server "${id}"`);
  }
  const capabilities = capabilitiesFor(scope, states, options.catalog !== undefined);
  // A catalog is the pool's own tools, not the server as it is: any era serves it.
  const eraWatch = watchLegacyOnly(upstream, scope, states, options.catalog !== undefined);
  const instructions = instructionsFor(scope, states);
  const sessions = new Sessions();
  const router = new ResourcesPromptsRouter({ client: upstream, scope, log });
  const tools = new BridgeTools({ client: upstream, scope, states, sessions, log });

  const catalog: Catalog | undefined =
    options.catalog === undefined
      ? undefined
      : createCatalog(options.catalog, {
          client: upstream,
          scope,
          hostName: (qualified) => tools.hostName(qualified),
          qualify: (name) => tools.qualify(name),
          definitions: (session, qualified, identity) => tools.list(session, identity, qualified),
          call: (session, name, args, extra) => tools.call(session, name, args, extra),
        });

  const traffic = new PoolTraffic({
    client: upstream,
    scope,
    states,
    capabilities,
    sessions,
    router,
    log,
    modern: () => eras.ready(),
  });

  const ours = { name: options.name ?? "mcpool", version: options.version ?? "0.0.0" };
  const serverInfo = serverInfoFor(scope, states, ours);
  // A 2025-11-25 host is told what the servers declare in its era (offer.ts legacyFaced).
  const legacyStates = legacyFaced(states);
  const legacy = new LegacySessions({
    client: upstream,
    serverInfo: serverInfoFor(scope, legacyStates, ours),
    capabilities: capabilitiesFor(scope, legacyStates, options.catalog !== undefined),
    instructions: instructionsFor(scope, legacyStates),
    identity: options.identity,
    sessions,
    tools,
    catalog,
    router,
    traffic,
    taskServers: taskServers(scope, legacyStates, options.catalog !== undefined),
    scope,
    log,
  });
  const createServer = (host?: HostName): Server => legacy.create(host);

  // The modern era: SDK v2, loaded with the first modern host.
  const core: BridgeCore = {
    upstream,
    scope,
    capabilities,
    get legacyOnly() {
      return eraWatch.legacyOnly;
    },
    resourceSubscriptions: subscribesResources(scope, states),
    instructions,
    serverInfo,
    listTools: (identity, profile) =>
      tools.list({ profile: { get: () => Promise.resolve(profile) } }, identity),
    qualify: (name) => tools.qualify(name),
    serverOf: (qualified) => tools.serverOf(qualified),
    router,
    newIdentity: () => connectionIdentity(options.identity ?? {}),
    sharedLists: catalog === undefined,
    ...(catalog !== undefined ? { catalog: modernCatalog(catalog) } : {}),
    toolsHint: async () => {
      const states = (await upstream.state()).filter((state) => scope.includes(state.id));
      const own = scope.single !== undefined ? states[0]?.toolsCache : undefined;
      if (own?.ttlMs !== undefined) {
        return { ttlMs: own.ttlMs, ...(own.scope !== undefined ? { cacheScope: own.scope } : {}) };
      }
      return states.some((state) => state.toolsCache?.scope === "private")
        ? { cacheScope: "private" as const }
        : {};
    },
    log,
  };
  const eras = dualEra(core, createServer);

  let closing: Promise<void> | undefined;
  return {
    createServer,
    serve: eras.serve,
    modern: eras.modern,
    capabilities,
    get legacyOnly() {
      return eraWatch.legacyOnly;
    },
    get sessions() {
      return legacy.size;
    },
    close() {
      closing ??= (async () => {
        traffic.close();
        eraWatch.close();
        eras.ready()?.close();
        await legacy.close();
      })();
      return closing;
    },
  };
}

/**
 * Whether the servers in scope speak only the legacy era, kept as the pool finds their eras:
 * read again from the states whenever one of them connects or closes (a server upgraded to
 * both eras) and whenever a reconcile adds, removes or changes rows (a lazy row says so by
 * nothing else), so a bridge's verdict never outlives the servers'. The states asked for are
 * numbered: an answer is taken only when no later one was asked, so an older picture of the
 * pool never overwrites a newer. Never, for a catalog (`never`): that is the pool's own tools,
 * which any era serves.
 */
export function watchLegacyOnly(
  upstream: Pick<PoolClient, "onEvent" | "state">,
  scope: Scope,
  states: readonly ServerState[],
  never: boolean,
): { readonly legacyOnly: boolean; close(): void } {
  let legacyOnly = !never && speaksOnlyLegacy(scope, states);
  let asked = 0;
  const decide = (): void => {
    const number = ++asked;
    upstream.state().then(
      (now) => {
        if (number === asked) legacyOnly = speaksOnlyLegacy(scope, now);
      },
      () => undefined,
    );
  };
  const close = never
    ? () => undefined
    : upstream.onEvent(
        (event) => {
          if (event.type === "rows-changed") return decide();
          if (event.serverId !== undefined && scope.includes(event.serverId)) decide();
        },
        { types: ["connect", "close", "rows-changed"] },
      );
  return {
    get legacyOnly() {
      return legacyOnly;
    },
    close,
  };
}
