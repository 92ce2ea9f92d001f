/**
 * The pool's parts, built from its options and wired to each other in one place: the
 * reconciler owns the servers, the catalog answers what is offered, the pin gate withholds
 * what moved, the call pipeline sends calls, the passthrough carries the rest of MCP, and
 * PoolAuth, PoolEvents and the conversation registry serve them all. Every callback between
 * two parts is written here; McpPool (pool.ts) only delegates to what this returns.
 */
import type { McpServerConfig } from "../config/rows.js";
import { CallPipeline } from "./calls/pipeline.js";
import { CallRoutes } from "./calls/routes.js";
import { Catalog } from "./catalog/catalog.js";
import { ConversationRegistry } from "./conversations/registry.js";
import { checkPoolDurations } from "./calls/duration-checks.js";
import type { EntryContext } from "./server/context.js";
import { McpPoolError } from "./core/errors.js";
import { keepAliveFetch } from "./transport/fetch.js";
import { Passthrough } from "./calls/server-passthrough.js";
import { PoolTasks } from "./calls/tasks.js";
import { PinGate } from "./catalog/pin-gate.js";
import { PinLedger } from "./catalog/pinning.js";
import { PoolAuth } from "./auth/pool-auth.js";
import { entryContext, type EntryHooks } from "./pool-context.js";
import { PoolEvents } from "./pool-events.js";
import { DEFAULT_TOOLS_TOKEN_WARNING, type McpPoolOptions } from "./pool-options.js";
import { probeAsPool } from "./server/probe.js";
import { HostProfiles } from "./host-profiles.js";
import { toolListChanges } from "./tool-list-changes.js";
import { answering } from "./profile-facts.js";
import { Reconciler } from "./reconcile/reconciler.js";
import { ResultCache } from "./calls/result-cache.js";
import type { PoolLog, ProbeResult } from "./core/types.js";
import type { ServerEntry } from "./server/entry.js";
import type { HostProfile } from "mcpool-protocol";
import { serverLog } from "./core/server-log.js";

export interface PoolParts {
  log: PoolLog;
  context: EntryContext;
  servers: Reconciler;
  catalog: Catalog;
  pins: PinGate;
  calls: CallPipeline;
  events: PoolEvents;
  auth: PoolAuth;
  passthrough: Passthrough;
  /** The tasks of task-augmented calls: their connections and owners. */
  tasks: PoolTasks;
  conversations: ConversationRegistry;
  /** The rows' children for hosts with other capabilities or roots than the pool's. */
  profiles: HostProfiles;
  /** Throws `closed` once the pool is shut down. */
  assertOpen(): void;
  /** Dials a row that need not be saved, lists its tools and hangs up. Never throws. */
  probe(row: McpServerConfig): Promise<ProbeResult>;
  /** Closes every server, then the fetch the pool made for itself. Idempotent. */
  shutdown(): Promise<void>;
}

/** The parts that carry what is not a tool call: sign-in, events, host routes, passthrough. */
interface TrafficParts {
  auth: PoolAuth;
  events: PoolEvents;
  routes: CallRoutes;
  passthrough: Passthrough;
  tasks: PoolTasks;
  /** What a row's own entries say (host-profiles.ts makes its children's). */
  rowHooks: Pick<EntryHooks, "emit" | "notify">;
}

/**
 * Builds the traffic parts, wired to each other; they reach the servers and the host
 * profiles' children through `later`, which are built after them and called only once the
 * pool is running.
 */
function trafficParts(
  options: McpPoolOptions,
  log: PoolLog,
  cache: ResultCache | undefined,
  later: () => { servers: Reconciler; profiles: HostProfiles },
): TrafficParts {
  const servers = (): Reconciler => later().servers;
  const profiles = (): HostProfiles => later().profiles;
  // A host's passthrough goes where its calls go: the row's child for its profile, if any.
  const profiled = (id: string, profile: HostProfile): ServerEntry =>
    profiles().entryFor(id, profile) ?? servers().entry(id);
  const auth = new PoolAuth({
    tokenStore: options.tokenStore,
    authProvider: options.authProvider,
    lost: (serverId) => servers().find(serverId)?.authLost(),
    log: (message, about) => log.error?.(message, about),
    env: options.env,
    entry: (id) => servers().entry(id),
    reconnect: (id) => servers().reconnect(id),
  });
  const events = new PoolEvents({
    log,
    react: (event) => {
      // What a server answered before a close or a new tool list is not what it would now.
      if (event.type === "close" || event.type === "tools-changed") cache?.clear(event.serverId);
      // Resource subscriptions die with a connection: a new one is subscribed again.
      if (event.type === "connect") {
        passthrough.connected(event.serverId);
        auth.satisfied(event.serverId, "connect");
      }
    },
    deliver: (serverId, notification, connection, profileKey) => {
      passthrough.deliver(serverId, notification, profileKey);
      // A task is its child's process's: the status goes by the connection that sent it.
      tasks.status(serverId, notification, connection, profileKey);
    },
    servedBy: (serverId, profile) => profiles().servedBy(serverId, profile),
  });
  const routes = new CallRoutes(options, log);
  const passthrough = new Passthrough({
    entry: (id, profile) => (profile === undefined ? servers().entry(id) : profiled(id, profile)),
    find: (id) => servers().find(id),
    child: (id, key) => profiles().child(id, key),
    authRefusal: (id, error) => auth.refusal(id, error),
    timeoutMs: (entry) => entry.row.callTimeoutMs ?? options.callTimeoutMs,
    answerer: (id, asking) => routes.answerer(id, asking),
    register: (route, asking) => routes.register(route, asking),
    log,
  });
  const tasks = new PoolTasks({
    entry: (id) => servers().entry(id),
    timeoutMs: (entry) => entry.row.callTimeoutMs ?? options.callTimeoutMs,
  });
  // A row's own connection says its tool list changed as a host profile's child does.
  const own = toolListChanges(
    (serverId, notification, connection) => events.notify(serverId, notification, connection),
    (id) => servers().find(id)?.connection,
    options.indexTools !== false,
  );
  const rowHooks: TrafficParts["rowHooks"] = {
    emit: (event) => {
      events.emit(event);
      own.emitted(event);
    },
    notify: (serverId, notification, connection, profileKey) =>
      profileKey === undefined
        ? own.notify(serverId, notification, connection)
        : events.notify(serverId, notification, connection, profileKey),
  };
  return { auth, events, routes, passthrough, tasks, rowHooks };
}

/** Builds the parts of one pool; nothing is dialled until a sync. Throws on a bad duration. */
export function poolParts(options: McpPoolOptions): PoolParts {
  checkPoolDurations(options);
  const log = options.log ?? { error: (message) => process.stderr.write(`${message}\n`) };
  const cache = options.resultCache ? new ResultCache(options.resultCache) : undefined;
  const indexTools = options.indexTools !== false;
  // The callbacks below reach parts built after them; none runs before poolParts returns.
  const traffic = trafficParts(options, log, cache, () => ({ servers, profiles }));
  const { auth, events, routes, passthrough, tasks } = traffic;
  const emit = events.emit.bind(events);
  const pins = new PinGate(
    new PinLedger(options.pins, (id, error) =>
      serverLog(log, id).error(`reading the pin store failed: ${error.message}`),
    ),
    { log, emit, checks: indexTools },
  );
  /** The default fetch of http rows, when the pool was given none: ours to close. */
  const ownFetch = options.fetch ? undefined : keepAliveFetch();
  const context = entryContext(
    options,
    {
      log,
      auth,
      ownFetch,
      onUnsetVariable: (id, name) => events.unsetVariable(id, name),
      capabilities: { ...routes.capabilities },
    },
    {
      ...traffic.rowHooks,
      changed: (entry) => {
        catalog.invalidate();
        profiles.invalidate();
        pins.check(entry);
      },
      schedule: (work) => servers.schedule(work),
      listed: (entry) => servers.saveTools(entry),
      ...answering(routes, (id, question) => profiles.asked(id, question)),
      held: (serverId, key) => passthrough.held(serverId, key),
      revives: (entry) => servers.revives(entry),
    },
  );
  const conversations: ConversationRegistry = new ConversationRegistry({
    context,
    options: options.conversations,
    log,
    emit,
    entryOf: (id) => servers.find(id),
    routes,
    maxResultChars: options.maxResultChars,
    maxDescriptionChars: options.maxDescriptionChars,
  });
  const servers: Reconciler = new Reconciler({
    options,
    context,
    conversations,
    log,
    changed: () => {
      catalog.invalidate();
      void profiles.sync();
      events.serversChanged(servers.entries().map((entry) => entry.id));
    },
    rowsChanged: (change) => emit({ type: "rows-changed", ...change }),
    updated: (entry) => pins.check(entry),
    profiles: {
      learn: (entry, memo) => profiles.learn(entry, memo),
      memo: (id) => profiles.memo(id),
    },
  });
  const catalogOver = (entries: () => readonly ServerEntry[]): Catalog =>
    new Catalog({
      entries,
      pins,
      log,
      maxDescriptionChars: options.maxDescriptionChars,
      indexTools,
      toolsTokenWarning: options.toolsTokenWarning ?? DEFAULT_TOOLS_TOKEN_WARNING,
      extras: (id) => ({
        conversations: conversations.statsOf(id),
        signIn: auth.request(id),
        signInNotice: auth.notice(id),
        profiles: profiles.stateOf(id),
        legacyFace: profiles.legacyFaceOf(id),
      }),
    });
  const catalog = catalogOver(() => servers.entries());
  const profiles: HostProfiles = new HostProfiles({
    context,
    entries: () => servers.entries(),
    routes,
    catalog: catalogOver,
    learnt: (id) => {
      // Kept beside the row's list, which it needs: a row never listed keeps it in memory only.
      const entry = servers.find(id);
      if (entry?.fingerprint !== undefined) servers.saveTools(entry);
    },
    maxChildren: options.maxChildrenPerServer,
    connected: (id, key) => passthrough.connected(id, key),
    log,
  });
  const assertOpen = (): void => {
    if (servers.closed) throw new McpPoolError("closed", "the pool is closed");
  };
  const calls = new CallPipeline({
    catalog,
    entries: () => servers.entries(),
    conversations,
    profiles,
    routes,
    cache,
    tasks,
    auth,
    events,
    assertOpen,
    starting: () => servers.starting(),
    ready: () => servers.ready(),
    coerceArguments: options.coerceArguments,
    maxResultChars: options.maxResultChars,
    callTimeoutMs: options.callTimeoutMs,
  });
  return {
    log,
    context,
    servers,
    catalog,
    pins,
    calls,
    events,
    auth,
    passthrough,
    tasks,
    conversations,
    profiles,
    assertOpen,
    // Stored tokens serve a probe too; its refusal says nothing about the live server.
    probe: (row) => probeAsPool(row, options, context, (dialled) => auth.provider(dialled, false)),
    shutdown: async () => {
      if (servers.closed) return;
      // A live task is no call to wait for: its server ends with the pool, and the work with it.
      tasks.close();
      await Promise.all([profiles.close(), servers.shutdown()]);
      // Every transport is closed: what is left on the agent is idle sockets.
      await ownFetch?.destroy();
    },
  };
}
