/**
 * The bridge (SPEC D7, D8): an MCP server whose every answer comes from the daemon, through
 * one PoolClient shared by all the host sessions of this process. `createBridge()` checks the
 * scope against the pool, subscribes to the pool's events and notifications, and hands out
 * one low-level SDK `Server` per host connection (`createServer()`); the transports are the
 * caller's (stdio in the CLI, Streamable HTTP in http.ts). `serve()` serves a stdio-shaped
 * connection in the era its host opens with: a 2026-07-28 host gets the SDK v2 side on
 * the same core (era-switch.ts, modern.ts; SPEC H3).
 *
 * - tools/list: the pool's definitions in scope (`parameters` as the inputSchema untouched;
 *   title, annotations, outputSchema and `_meta` from describe()); tools/call: `call(name,
 *   args, { raw: true })`, the CallToolResult returned as it came, isError included
 *   (errors.ts for refusals).
 * - `tools/list_changed` (and resources/prompts list changes) go to every session when the
 *   pool's lists change: `tools-changed`, `connect` and `close` events of an in-scope server,
 *   a pooled server's own list_changed notifications, and a daemon that was replaced (the
 *   client reconnected: the last level a host set is set again on the new daemon too).
 * - Logging: the pooled servers' `notifications/message`, filtered by the level each host
 *   set (logger prefixed with the slug in pool scope); while the host has a call in flight on
 *   that server, on that call's stream.
 * - Progress, cancellation and elicitation ride on the client's per-call routing (SPEC C14):
 *   the host's progressToken gets that call's progress, the host's `notifications/cancelled`
 *   aborts the call (cancelled upstream by the daemon), and a pooled server's elicitation
 *   during the call goes to the host on the call's own stream when the host declared the
 *   capability (url mode only when it declared that too; host-requests.ts), else is refused
 *   (-32601) as the host itself would refuse it (SPEC I4).
 * - Sampling rides the same way: a pooled server's `sampling/createMessage` during the call
 *   goes to the host with createMessage on the call's stream when the host declared
 *   `sampling`, else the daemon refuses it (-32601).
 * - Each listing and call names the session's profile (host-profile.ts: its declared
 *   sampling, elicitation and roots, the roots asked of the host), so a pooled server is
 *   served to it by a child that declared what the host declared (SPEC I4, I5).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  RootsListChangedNotificationSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type Implementation,
  type LoggingLevel,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  CallOptions,
  ConversationIdentity,
  HostProfile,
  PoolClient,
  PoolEvent,
  ServerNotification,
  ServerState,
} from "mcpool-client";

import { callFailure, toMcpError, unknownTool } from "../core/errors.js";
import {
  connectionIdentity,
  endConversation,
  identityFor,
  type BridgeIdentityOptions,
} from "../core/conversation.js";
import { scopeOf, toolNames, type ToolNames } from "../core/naming.js";
import {
  capabilitiesFor,
  forLegacyHost,
  instructionsFor,
  knownStates,
  serverInfoFor,
  subscribesResources,
} from "../core/offer.js";
import { PassthroughRouter } from "../core/resources-prompts.js";
import {
  createCatalog,
  isMetaTool,
  type Catalog,
  type CatalogOptions,
} from "../catalog/on-demand.js";
import { Sessions, passesLevel, sessionCaller, type Extra, type Session } from "../core/session.js";
import { SessionProfile } from "../core/host-profile.js";
import { elicitFor, sampleFor } from "../core/host-requests.js";
import { dualEra, type ServedConnection, type StdioLike } from "../modern/era-switch.js";
import type { BridgeCore, ModernBridge } from "../modern/bridge.js";
import { modernCatalog } from "../catalog/modern-catalog.js";

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
   * `--catalog` (SPEC J1–J3, catalog.ts): list the rows' `alwaysLoad` tools and the pool's
   * search, describe and call tools instead of every definition. Absent: every definition.
   */
  catalog?: CatalogOptions;
}

export interface Bridge {
  /** A new SDK Server for one host connection; connect it to a transport. */
  createServer(): Server;
  /**
   * Serves one stdio-shaped connection (stdio, an MCP socket) in the era its host opens
   * with (era-switch.ts): a legacy host gets a `createServer()` session, a modern one the
   * SDK v2 entry (modern.ts). Starts the transport.
   */
  serve(transport: StdioLike): Promise<ServedConnection>;
  /** The modern side (SDK v2), loaded on the first modern host. */
  modern(): Promise<ModernBridge>;
  /** Host sessions open now. */
  readonly sessions: number;
  /** The capabilities every session declares. */
  readonly capabilities: ServerCapabilities;
  /** Closes every session and stops listening to the pool. Idempotent; the client stays open. */
  close(): Promise<void>;
}

/** The scope names a server the pool does not have (`--server`), or nothing at all. */
export class BridgeScopeError extends Error {
  override readonly name = "BridgeScopeError";
}

const LIST_CHANGED = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
];

type ListKind = "tools" | "resources" | "prompts";

/** The pool events that change what a host lists; the bridge subscribes to these alone. */
const LIST_EVENTS: PoolEvent["type"][] = ["connect", "close", "tools-changed"];

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
  const serverInfo = serverInfoFor(scope, states, {
    name: options.name ?? "mcpool",
    version: options.version ?? "0.0.0",
  });
  const instructions = instructionsFor(scope, states);
  const sessions = new Sessions();
  const router = new PassthroughRouter({ client: upstream, scope, log });

  // ── Tools ──────────────────────────────────────────────────────────────────────────

  /** `--server` names, from the last state() seen; refreshed on each list and on a miss. */
  let names: ToolNames = toolNames(states, scope.single);
  /** Qualified name → server id, for routing a call's traffic back (pool scope). */
  let owners = new Map<string, string>();
  /**
   * `--server` names of tools only a profile's child lists (server-everything's
   * `get-roots-list` for a host with roots), learnt from describe(): host → qualified.
   */
  const ownNames = new Map<string, string>();

  /**
   * The servers this bridge names (`--server`, `--servers`) that have never said what tools
   * they have — a lazy row with no cached list: a host's tools/list is their first use, so
   * they start for it as a call would start them. A whole-pool bridge wakes nothing.
   */
  const wakeNamed = async (): Promise<void> => {
    const named = scope.servers;
    if (named === undefined) return;
    // Not ready and nothing listed: idle, or already connecting (the ping joins that dial),
    // or backing off (the ping is refused at once and said in the log).
    const asleep = (await upstream.state()).filter(
      (s) =>
        named.includes(s.id) &&
        s.status !== "ready" &&
        s.status !== "disabled" &&
        s.tools.length === 0,
    );
    await Promise.all(
      asleep.map((s) =>
        upstream.ping(s.id).catch((error: Error) => log(`mcpool bridge: ${error.message}`)),
      ),
    );
  };

  /** The host's definitions in scope; with `only`, of those qualified names alone (catalogue). */
  const listTools = async (
    session: Session | { profile: { get(): Promise<HostProfile> } },
    identity?: ConversationIdentity,
    only?: readonly string[],
    requestId?: string | number,
  ): Promise<Tool[]> => {
    if (only !== undefined && only.length === 0) return [];
    const profile = await session.profile.get(requestId);
    const scoped = {
      ...(scope.servers ? { servers: scope.servers } : {}),
      ...(only !== undefined ? { names: only } : {}),
      profile,
    };
    await wakeNamed();
    // The definitions first: a listing waits for the daemon's first reconcile (F4), and the
    // state read after it then knows every tool the definitions name.
    const definitions = await upstream.tools(identity ? { ...scoped, identity } : scoped);
    // Only one server's own names need the state (qualified names are their own table);
    // in pool scope it would be every server's every tool, read for nothing (P12: a search
    // at 5,000 tools spent most of its 63 ms here).
    if (scope.single !== undefined) names = toolNames(await upstream.state(), scope.single);
    // What a definition has no room for (title, annotations, outputSchema, _meta, icons,
    // execution), per tool;
    // a tool that went away meanwhile is described as its definition alone.
    const described = await Promise.all(
      definitions.map((d) =>
        upstream
          .describe(d.function.name, {
            ...(scope.servers ? { servers: scope.servers } : {}),
            profile,
          })
          .catch(() => undefined),
      ),
    );
    // A catalogue listing names a few tools: it adds to what routes, it does not replace it.
    const next = only !== undefined ? owners : new Map<string, string>();
    const tools: Tool[] = [];
    definitions.forEach((definition, i) => {
      const qualified = definition.function.name;
      const about = described[i];
      const name =
        scope.single === undefined
          ? qualified
          : (names.toHost.get(qualified) ??
            (about?.serverId === scope.single ? about.toolName : undefined));
      if (name === undefined) return;
      if (scope.single !== undefined && !names.toPool.has(name)) ownNames.set(name, qualified);
      if (about !== undefined) next.set(qualified, about.serverId);
      const tool: Tool = {
        name,
        description: about?.description ?? definition.function.description,
        inputSchema: definition.function.parameters as Tool["inputSchema"],
      };
      if (about?.title !== undefined) tool.title = about.title;
      if (about?.annotations !== undefined) tool.annotations = { ...about.annotations };
      if (about?.outputSchema !== undefined) {
        tool.outputSchema = about.outputSchema as Tool["outputSchema"];
      }
      if (about?.meta !== undefined) tool._meta = about.meta;
      if (about?.icons !== undefined) tool.icons = about.icons as Tool["icons"];
      if (about?.execution !== undefined) tool.execution = about.execution as Tool["execution"];
      tools.push(tool);
    });
    owners = next;
    return tools;
  };

  /** The qualified name a host's tool name stands for, or undefined. */
  const qualify = async (name: string): Promise<string | undefined> => {
    if (scope.single === undefined) return name;
    const known = names.toPool.get(name) ?? ownNames.get(name);
    if (known !== undefined) return known;
    // A daemon just (re)started may not know the server's tools yet: a listing waits for its
    // first reconcile (F4), and the state read after it names them.
    await upstream.tools({ servers: [scope.single] });
    names = toolNames(await upstream.state(), scope.single);
    return names.toPool.get(name);
  };

  const callTool = async (
    session: Session,
    name: string,
    args: Record<string, unknown> | undefined,
    extra: Extra,
  ): Promise<CallToolResult> => {
    let qualified: string | undefined;
    try {
      qualified = await qualify(name);
    } catch (error) {
      throw toMcpError(error);
    }
    if (qualified === undefined) throw unknownTool(name);
    session.found?.touch(qualified);
    const serverId = scope.single ?? owners.get(qualified);
    const options: CallOptions & { raw: true } = {
      raw: true,
      signal: extra.signal,
      profile: await session.profile.get(extra.requestId),
    };
    if (scope.servers !== undefined) options.servers = scope.servers;
    // The host's own clientInfo and level, for a modern server's envelope (SPEC H2).
    options.caller = sessionCaller(session);
    if (session.identity) options.identity = identityFor(session.identity, extra._meta);
    // The request's own `_meta` (trace context) goes on to the server, less the pool's keys.
    if (extra._meta !== undefined) options.meta = extra._meta;
    const elicit = elicitFor(session, extra);
    if (elicit !== undefined) options.onElicit = elicit;
    const sample = sampleFor(session, extra);
    if (sample !== undefined) options.onSample = sample;
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      options.onProgress = (progress) => {
        extra
          .sendNotification({
            method: "notifications/progress",
            params: { ...progress, progressToken: token },
          })
          .catch(() => undefined);
      };
    }
    const forget = sessions.track({ session, serverId, extra });
    try {
      const result = (await upstream.call(qualified, args, options)) as CallToolResult;
      return forLegacyHost(result);
    } catch (error) {
      if (extra.signal.aborted) throw error; // the host gave up: the SDK sends no answer
      return callFailure(error, name);
    } finally {
      forget();
    }
  };

  const catalog: Catalog | undefined =
    options.catalog === undefined
      ? undefined
      : createCatalog(options.catalog, {
          client: upstream,
          scope,
          hostName: (qualified) =>
            scope.single !== undefined ? names.toHost.get(qualified) : qualified,
          qualify: (name) => qualify(name),
          definitions: (session, qualified, identity) => listTools(session, identity, qualified),
          call: (session, name, args, extra) => callTool(session, name, args, extra),
        });

  // ── Traffic back from the pool ─────────────────────────────────────────────────────

  const notifyListChanged = (kinds: readonly ListKind[]): void => {
    eras
      .ready()
      ?.listChanged(kinds.filter((kind) => kind === "tools" || capabilities[kind] !== undefined));
    for (const session of sessions) {
      for (const kind of kinds) {
        if (kind !== "tools" && capabilities[kind] === undefined) continue;
        const send =
          kind === "tools"
            ? session.server.sendToolListChanged()
            : kind === "resources"
              ? session.server.sendResourceListChanged()
              : session.server.sendPromptListChanged();
        send.catch(() => undefined);
      }
    }
  };

  let daemonPid = upstream.daemon?.pid;
  /** A replaced daemon may hold another pool: every list the host has may be stale. */
  const checkDaemon = (): void => {
    const pid = upstream.daemon?.pid;
    if (pid === undefined || pid === daemonPid) return;
    daemonPid = pid;
    notifyListChanged(["tools", "resources", "prompts"]);
  };

  const slugOf = new Map(states.map((s) => [s.id, s.slug]));
  const deliverLog = (serverId: string, notification: ServerNotification): void => {
    const params = { ...notification.params };
    if (scope.single === undefined) {
      const slug = slugOf.get(serverId) ?? serverId;
      params.logger = typeof params.logger === "string" ? `${slug}/${params.logger}` : slug;
    }
    const message = {
      method: "notifications/message" as const,
      params: params as { level: "info"; data: unknown },
    };
    // A modern host's requests in flight, each by the level its envelope asked for (SPEC H2).
    eras.ready()?.deliverLog(serverId, message);
    for (const session of sessions) {
      if (!passesLevel(params.level, session.level)) continue;
      const call = sessions.latestCall(serverId, session);
      const sent =
        call !== undefined
          ? call.extra.sendNotification(message)
          : session.server.notification(message);
      sent.catch(() => undefined);
    }
  };

  // Only the events that change a list: the daemon then encodes and writes no `call`
  // event to this connection for every call made by anyone (issue 16).
  const offEvents = upstream.onEvent(
    (event) => {
      checkDaemon();
      if (event.type === "call" || event.serverId === undefined) return;
      if (!scope.includes(event.serverId)) return;
      if (event.type === "tools-changed") notifyListChanged(["tools"]);
      else if (event.type === "connect" || event.type === "close") {
        notifyListChanged(["tools", "resources", "prompts"]);
      }
    },
    { types: LIST_EVENTS },
  );

  // A new daemon (a restart, an upgrade): the server's log level it was given is gone, and
  // every list may differ. The client sent its subscriptions again already.
  const offReconnect = upstream.onReconnect((daemon) => {
    daemonPid = daemon.pid;
    notifyListChanged(["tools", "resources", "prompts"]);
    if (lastLevel === undefined) return;
    router.setLoggingLevel(lastLevel).catch((error: unknown) => {
      log(`mcpool bridge: logging/setLevel again: ${(error as Error).message}`);
    });
  });
  /** The level a host set last, set again on a new daemon (one-server scope passes it on). */
  let lastLevel: LoggingLevel | undefined;

  const offNotifications = upstream.onNotification((serverId, notification) => {
    checkDaemon();
    if (!scope.includes(serverId)) return;
    switch (notification.method) {
      case "notifications/message":
        deliverLog(serverId, notification);
        break;
      case "notifications/resources/list_changed":
        notifyListChanged(["resources"]);
        break;
      case "notifications/prompts/list_changed":
        notifyListChanged(["prompts"]);
        break;
      case "notifications/resources/updated":
        router.deliverUpdated(serverId, notification);
        break;
      default:
        break;
    }
  });

  // ── Sessions ───────────────────────────────────────────────────────────────────────

  const createServer = (): Server => {
    const server = new Server(serverInfo as Implementation, {
      capabilities,
      ...(instructions !== undefined ? { instructions } : {}),
      debouncedNotificationMethods: LIST_CHANGED,
    });
    const identity = connectionIdentity(options.identity ?? {});
    const session: Session = {
      server,
      level: undefined,
      subscriptions: new Map(),
      identity,
      ...(catalog !== undefined ? { found: catalog.foundTools() } : {}),
      profile: new SessionProfile(server, log),
    };
    sessions.add(session);
    server.onclose = () => {
      endConversation(upstream, identity);
      sessions.delete(session);
      router.closeSession(session).catch(() => undefined);
    };
    server.onerror = (error) => log(`mcpool bridge: ${error.message}`);

    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      try {
        // Every definition, or (catalogue) the meta tools and this session's set.
        const named = identityFor(identity, request.params?._meta);
        if (catalog === undefined) {
          return { tools: await listTools(session, named, undefined, extra.requestId) };
        }
        await session.profile.get(extra.requestId);
        return { tools: await catalog.list(session, named) };
      } catch (error) {
        throw toMcpError(error);
      }
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const { name, arguments: args } = request.params;
      if (catalog !== undefined && isMetaTool(name)) {
        return catalog
          .answer(session, name, args, extra, identityFor(identity, extra._meta))
          .catch((error: unknown) => {
            throw toMcpError(error);
          });
      }
      return callTool(session, name, args, extra);
    });
    // New roots may be another project's child (SPEC I5): asked again, listed again.
    server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      session.profile.changed();
      await server.sendToolListChanged().catch(() => undefined);
    });
    // A lone server without logging: the host is told "Method not found", as it is direct.
    if (capabilities.logging !== undefined) {
      server.setRequestHandler(SetLevelRequestSchema, async (request) => {
        const level = LoggingLevelSchema.parse(request.params.level);
        session.level = level;
        lastLevel = level;
        // Only a one-server bridge passes the level on: in pool scope it would change the
        // level of servers every other agent shares, so there the bridge only filters.
        await router.setLoggingLevel(level).catch((error: unknown) => {
          log(`mcpool bridge: logging/setLevel: ${(error as Error).message}`);
        });
        return {};
      });
    }
    router.install(server, session, capabilities);
    return server;
  };

  // ── The modern era (SPEC H3): SDK v2, loaded with the first modern host ───────────

  const core: BridgeCore = {
    upstream,
    scope,
    capabilities,
    resourceSubscriptions: subscribesResources(scope, states),
    instructions,
    serverInfo,
    listTools: (identity, profile) =>
      listTools({ profile: { get: () => Promise.resolve(profile) } }, identity),
    qualify,
    serverOf: (qualified) => scope.single ?? owners.get(qualified),
    router,
    newIdentity: () => connectionIdentity(options.identity ?? {}),
    sharedLists: catalog === undefined,
    ...(catalog !== undefined ? { catalog: modernCatalog(catalog) } : {}),
    privateTools: async () =>
      (await upstream.state()).some(
        (state) => scope.includes(state.id) && state.toolsCache?.scope === "private",
      ),
    log,
  };
  const eras = dualEra(core, createServer);

  let closing: Promise<void> | undefined;
  return {
    createServer,
    serve: eras.serve,
    modern: eras.modern,
    capabilities,
    get sessions() {
      return sessions.size;
    },
    close() {
      closing ??= (async () => {
        offEvents();
        offNotifications();
        offReconnect();
        eras.ready()?.close();
        await Promise.allSettled([...sessions].map((session) => session.server.close()));
      })();
      return closing;
    },
  };
}
