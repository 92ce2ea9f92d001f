/**
 * McpPool: long-lived MCP connections to stdio and Streamable HTTP servers, reconciled
 * against a list of rows, with their tools exposed to an agent loop as `<slug>__<tool>`.
 *
 * A facade: the reconciler (reconciler.ts) owns the servers and the queue, the catalogue
 * (catalogue.ts) answers what is offered, the pin gate (pin-gate.ts) withholds what moved
 * since it was approved, and the call pipeline (call-pipeline.ts) sends calls. Each
 * server's connection, crash handling and backoff live in its ServerEntry.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../config/rows.js";
import type { HookContext, HookEvent, HookOutcome } from "../config/hooks.js";

import { CallPipeline } from "./call-pipeline.js";
import { CallRoutes } from "./call-routes.js";
import { Catalogue, type CatalogServer } from "./catalogue.js";
import { ConversationRegistry } from "./conversations.js";
import { checkPoolDurations } from "./duration-checks.js";
import { McpPoolError } from "./errors.js";
import { keepAliveFetch, type KeepAliveFetch } from "./fetch.js";
import { Passthrough } from "./passthrough.js";
import type { PassthroughArgs, PassthroughMethod, PassthroughResult } from "./passthrough.js";
import type { ResourceListener } from "./passthrough.js";
import { PinGate } from "./pin-gate.js";
import { PinLedger } from "./pinning.js";
import { PoolAuth, signInKey } from "./pool-auth.js";
import { entryContext } from "./pool-context.js";
import { PoolEvents } from "./pool-events.js";
import { probeAsPool } from "./probe.js";
import { Reconciler, READY_WAIT_MS } from "./reconciler.js";
import { ResultCache } from "./result-cache.js";
import { runHooks, type RunHooksOptions } from "./run-hooks.js";
import type { EntryContext } from "./entry-context.js";
import { holding, withSession } from "./session.js";
import type {
  CallOptions,
  PinInfo,
  PoolEvent,
  PoolLog,
  ProbeResult,
  ServerAuthState,
  ServerNotification,
  ServerState,
  ToolDefinition,
  ToolDescription,
} from "./types.js";
import {
  DEFAULT_CRASH_BACKOFF_MS,
  DEFAULT_MAX_CONCURRENT_STARTS,
  DEFAULT_TOOLS_TOKEN_WARNING,
  type McpPoolOptions,
} from "./pool-options.js";

export {
  DEFAULT_CRASH_BACKOFF_MS,
  DEFAULT_MAX_CONCURRENT_STARTS,
  DEFAULT_TOOLS_TOKEN_WARNING,
  READY_WAIT_MS,
  type CatalogServer,
  type McpPoolOptions,
};

export class McpPool {
  readonly #options: McpPoolOptions;
  readonly #log: PoolLog;
  readonly #context: EntryContext;
  readonly #servers: Reconciler;
  readonly #catalogue: Catalogue;
  readonly #pins: PinGate;
  readonly #calls: CallPipeline;
  readonly #events: PoolEvents;
  readonly #cache: ResultCache | undefined;
  readonly #auth: PoolAuth;
  readonly #passthrough: Passthrough;
  readonly #conversations: ConversationRegistry;
  /** The default fetch of http rows, when the pool was given none: ours to close. */
  readonly #ownFetch: KeepAliveFetch | undefined;
  /** `<id>\0<VAR>` of unset placeholder variables already logged, so each is said once. */
  readonly #warnedUnset = new Set<string>();

  constructor(options: McpPoolOptions) {
    checkPoolDurations(options);
    this.#options = options;
    const log = options.log ?? { error: (message) => process.stderr.write(`${message}\n`) };
    this.#log = log;
    this.#cache = options.resultCache ? new ResultCache(options.resultCache) : undefined;
    this.#events = new PoolEvents(log);
    const auth = new PoolAuth({
      tokenStore: options.tokenStore,
      authProvider: options.authProvider,
      lost: (serverId) => this.#servers.find(serverId)?.authLost(),
      log: (message) => log.error?.(message),
    });
    this.#auth = auth;
    const routes = new CallRoutes(options, log);
    this.#passthrough = new Passthrough({
      entry: (id) => this.#servers.entry(id),
      find: (id) => this.#servers.find(id),
      authRefusal: (id, error) => auth.refusal(id, error),
      timeoutMs: (entry) => entry.row.callTimeoutMs ?? options.callTimeoutMs,
      log,
    });
    const indexTools = options.indexTools !== false;
    this.#pins = new PinGate(
      new PinLedger(options.pins, (id, error) =>
        log.error?.(`mcpool: ${id}: reading the pin store failed: ${error.message}`),
      ),
      { log, emit: (event) => this.#emit(event), checks: indexTools },
    );
    this.#ownFetch = options.fetch ? undefined : keepAliveFetch();
    this.#context = entryContext(
      options,
      {
        log,
        auth,
        ownFetch: this.#ownFetch,
        onUnsetVariable: (id, name) => this.#warnUnset(id, name),
        capabilities: { ...routes.capabilities },
      },
      {
        emit: (event) => this.#emit(event),
        notify: (serverId, notification) => this.#notify(serverId, notification),
        changed: (entry) => {
          this.#catalogue.invalidate();
          this.#pins.check(entry);
        },
        schedule: (work) => this.#servers.schedule(work),
        listed: (entry) => this.#servers.saveTools(entry),
        elicit: (serverId, params, signal) => routes.elicit({ serverId }, params, signal),
        sample: (serverId, params, signal) => routes.sample({ serverId }, params, signal),
        held: (serverId) => this.#passthrough.held(serverId),
        revives: (entry) => this.#servers.revives(entry),
      },
    );
    this.#conversations = new ConversationRegistry({
      context: this.#context,
      options: options.conversations,
      log,
      emit: (event) => this.#emit(event),
      entryOf: (id) => this.#servers.find(id),
      routes,
      maxResultChars: options.maxResultChars,
      maxDescriptionChars: options.maxDescriptionChars,
    });
    this.#servers = new Reconciler({
      options,
      context: this.#context,
      conversations: this.#conversations,
      log,
      changed: () => {
        this.#catalogue.invalidate();
        this.#events.serversChanged(this.#servers.entries().map((entry) => entry.id));
      },
      updated: (entry) => this.#pins.check(entry),
    });
    this.#catalogue = new Catalogue({
      entries: () => this.#servers.entries(),
      pins: this.#pins,
      log,
      maxDescriptionChars: options.maxDescriptionChars,
      indexTools,
      toolsTokenWarning: options.toolsTokenWarning ?? DEFAULT_TOOLS_TOKEN_WARNING,
      extras: (id) => ({
        conversations: this.#conversations.statsOf(id),
        signIn: auth.request(id),
      }),
    });
    this.#calls = new CallPipeline({
      catalogue: this.#catalogue,
      entries: () => this.#servers.entries(),
      conversations: this.#conversations,
      routes,
      cache: this.#cache,
      auth,
      events: this.#events,
      assertOpen: () => this.#assertOpen(),
      starting: () => this.#servers.starting(),
      ready: () => this.#servers.ready(),
      coerceArguments: options.coerceArguments,
      maxResultChars: options.maxResultChars,
      callTimeoutMs: options.callTimeoutMs,
    });
  }

  /**
   * The clients of `session: "conversation"` rows (B9): leases, terminate(), listings,
   * stats(). Calls reach them through call() with `identity`.
   */
  get conversations(): ConversationRegistry {
    return this.#conversations;
  }

  // ── Reconcile (reconciler.ts) ────────────────────────────────────────────────────

  /**
   * Reconciles against `configs`, or against `load()` when given nothing. Runs on the
   * queue: never beside another reconcile. `sync([])` closes everything.
   */
  sync(configs?: readonly McpServerConfig[]): Promise<void> {
    return this.#servers.sync(configs);
  }

  /** A sync() after the debounce; calls within it share one reconcile. */
  syncSoon(): Promise<void> {
    return this.#servers.syncSoon();
  }

  /**
   * Resolves once the first reconcile has finished — every eager server connected or
   * failed — or after `timeoutMs` (default {@link READY_WAIT_MS}), whichever comes first;
   * at once when no sync was asked for yet. Never rejects. A listing made before it would
   * miss the servers still starting (F4); call() waits for it by itself.
   */
  ready(timeoutMs = READY_WAIT_MS): Promise<void> {
    return this.#servers.ready(timeoutMs);
  }

  /** Runs a pending syncSoon() now and waits for the queue to drain. */
  flush(): Promise<void> {
    return this.#servers.flush();
  }

  /** Closes one server's connection and keeps its row: `idle`, no error, no backoff. */
  stop(id: string): Promise<void> {
    return this.#servers.stop(id);
  }

  /** Closes one server's connection and dials it again, changed or not. */
  reconnect(id: string): Promise<void> {
    return this.#servers.reconnect(id);
  }

  /** Replaces a server whose process group is over its `maxMemoryMb` (G5; monitor.ts). */
  replaceOverMemory(id: string, rssBytes: number, limitMb: number): Promise<void> {
    this.#emit({ type: "over-memory", serverId: id, rssBytes, limitMb });
    return this.reconnect(id);
  }

  // ── Sign-in (pool-auth.ts) ───────────────────────────────────────────────────────

  /**
   * Hands an http server the OAuth credentials an interactive sign-in got (`mcpool login`):
   * they go to the token store under the server's url, and the server is dialled again.
   * Resolves with the status the dial left, never with a connect failure; refuses an
   * unknown id, a stdio row and credentials without an access token (`invalid-arguments`).
   */
  storeCredentials(id: string, credentials: unknown): Promise<ServerAuthState> {
    return this.#changeSignIn(id, (key) => this.#auth.save(id, key, credentials));
  }

  /** Forgets what a sign-in left for an http server (`mcpool logout`) and dials it again. */
  forgetCredentials(id: string): Promise<ServerAuthState> {
    return this.#changeSignIn(id, (key) => this.#auth.forget(id, key));
  }

  async #changeSignIn(
    id: string,
    change: (key: string) => Promise<void>,
  ): Promise<ServerAuthState> {
    this.#assertOpen();
    await change(signInKey(this.#servers.entry(id).row, this.#context.transportContext.env));
    // A failed dial is the answer, not an error: the state says what it was.
    await this.reconnect(id).catch(() => undefined);
    const { status, error } = this.#servers.entry(id);
    return { id, status, ...(error !== undefined ? { error } : {}) };
  }

  // ── One server's protocol (passthrough.ts) ───────────────────────────────────────

  /** Dials a row that need not be saved, lists its tools and hangs up. Never throws. */
  probe(row: McpServerConfig): Promise<ProbeResult> {
    // Stored tokens serve a probe too; its refusal says nothing about the live server.
    return probeAsPool(row, this.#options, this.#context, (dialled) =>
      this.#auth.provider(dialled, false),
    );
  }

  /**
   * The connected SDK Client of one server, for what call() does not carry. Starts an idle
   * server; refuses a disabled or unknown one (`disabled`, `unknown-server`). A client held
   * past a session loss is refused by the server; use() handles that.
   */
  async client(id: string): Promise<Client> {
    this.#assertOpen();
    return (await this.#servers.entry(id).ensure()).client;
  }

  /**
   * `run` with the server's connected Client, counted as a use. When the remote has
   * forgotten the session (B6) the server is redialled once and `run` called again with
   * the new Client; any other failure is passed through.
   */
  async use<T>(id: string, run: (client: Client) => Promise<T>): Promise<T> {
    this.#assertOpen();
    const entry = this.#servers.entry(id);
    return withSession(entry, (connection) => holding(connection, () => run(connection.client)));
  }

  /**
   * Sends one MCP request that call() does not carry to server `id` (C15): resources,
   * prompts, completion, logging/setLevel, ping. Refused with `not-offered` where the
   * server's capabilities lack the surface; otherwise as use(). See passthrough.ts.
   */
  async request<M extends PassthroughMethod>(
    id: string,
    method: M,
    ...[params, options]: PassthroughArgs<M>
  ): Promise<PassthroughResult<M>> {
    this.#assertOpen();
    return this.#passthrough.request(id, method, params, options);
  }

  /**
   * Listens to server `id`'s `notifications/resources/updated` for `uri` (C15), subscribing
   * upstream for the first listener; the last one to stop unsubscribes upstream.
   */
  async subscribeResource(
    id: string,
    uri: string,
    listener: ResourceListener,
  ): Promise<() => Promise<void>> {
    this.#assertOpen();
    return this.#passthrough.subscribe(id, uri, listener);
  }

  // ── What the pool offers (catalogue.ts) ──────────────────────────────────────────

  /** Every configured server, in configuration order. Secrets only when asked for. */
  state(options: { secrets?: boolean } = {}): ServerState[] {
    return this.#catalogue.state(options);
  }

  /**
   * OpenAI-shaped definitions: configuration order, then each server's order; frozen.
   * `servers` absent = every server, empty = none. Hidden tools are left out.
   */
  tools(
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): ToolDefinition[] {
    return this.#catalogue.tools(options);
  }

  /** Every tool's name and description per server, no schemas. Connects nothing. */
  catalog(servers?: readonly string[]): CatalogServer[] {
    return this.#catalogue.catalog(servers);
  }

  /** catalog() cut to the `limit` (default 20) best matches for `query` (C6). Connects nothing. */
  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number } = {},
  ): CatalogServer[] {
    return this.#catalogue.search(query, options);
  }

  /** Qualified names of the rows' `alwaysLoad` tools that tools() would hand out (C8). */
  alwaysLoaded(servers?: readonly string[]): string[] {
    return this.#catalogue.alwaysLoaded(servers);
  }

  /** What a definition has no room for (C7); undefined where call() would refuse. Connects nothing. */
  describe(
    qualified: string,
    options: { servers?: readonly string[]; hidden?: boolean } = {},
  ): ToolDescription | undefined {
    return this.#catalogue.describe(qualified, options);
  }

  // ── Pinning (pin-gate.ts, C18) ───────────────────────────────────────────────────

  /** What a person approving a server's tools is shown; dials an idle server for a live list. */
  async pinInfo(id: string): Promise<PinInfo> {
    this.#assertOpen();
    return this.#pins.info(this.#servers.entry(id));
  }

  /** Records that a person approved the live list hashing to `fingerprint` (`pin-mismatch` if it moved). */
  async approve(id: string, fingerprint: string): Promise<PinInfo> {
    this.#assertOpen();
    return this.#pins.approve(this.#servers.entry(id), fingerprint);
  }

  // ── Calls (call-pipeline.ts) ─────────────────────────────────────────────────────

  /**
   * Calls a tool by its qualified name and returns its result flattened to a string
   * (or the CallToolResult with `raw: true`). `options` may be the scope alone.
   */
  call(
    qualified: string,
    input?: unknown,
    options?: CallOptions & { raw?: false },
  ): Promise<string>;
  call(
    qualified: string,
    input: unknown,
    options: CallOptions & { raw: true },
  ): Promise<CallToolResult>;
  call(qualified: string, input?: unknown, servers?: readonly string[]): Promise<string>;
  call(
    qualified: string,
    input: unknown = {},
    options?: CallOptions | readonly string[],
  ): Promise<string | CallToolResult> {
    const opts: CallOptions = isScope(options) ? { servers: options } : (options ?? {});
    return this.#calls.call(qualified, input, opts);
  }

  /**
   * Runs the hooks rows attach to `event` as calls of their (possibly hidden) tools (C17).
   * Parallel, bounded, outcomes in configuration order; never rejects. See run-hooks.ts.
   */
  runHooks(
    event: HookEvent,
    context: HookContext,
    options: RunHooksOptions = {},
  ): Promise<HookOutcome[]> {
    const rows = (): McpServerConfig[] => this.#servers.entries().map((entry) => entry.row);
    return runHooks(
      { rows, call: (name, input, opts) => this.call(name, input, opts) },
      event,
      context,
      options,
    );
  }

  // ── Events and notifications (pool-events.ts) ────────────────────────────────────

  /** Listens to what the pool does, as data. Returns the unsubscribe function. */
  onEvent(listener: (event: PoolEvent) => void): () => void {
    return this.#events.onEvent(listener);
  }

  /** Listens to what servers send, with the id of the server that sent it. */
  onNotification(
    listener: (serverId: string, notification: ServerNotification) => void,
  ): () => void {
    return this.#events.onNotification(listener);
  }

  /**
   * Listens to the set of servers: called with their ids, in configuration order, when a
   * reconcile (or the close) added, removed or reordered rows — and never for a call.
   */
  onServersChanged(listener: (ids: readonly string[]) => void): () => void {
    return this.#events.onServersChanged(listener);
  }

  #emit(event: PoolEvent): void {
    // What a server answered before a close or a new tool list is not what it would now.
    if (event.type === "close" || event.type === "tools-changed")
      this.#cache?.clear(event.serverId);
    // Resource subscriptions die with a connection: a new one is subscribed again (C15).
    if (event.type === "connect") {
      this.#passthrough.connected(event.serverId);
      this.#auth.satisfied(event.serverId, "connect");
    }
    this.#events.emit(event);
  }

  #notify(serverId: string, notification: ServerNotification): void {
    this.#passthrough.deliver(serverId, notification);
    this.#events.notify(serverId, notification);
  }

  #warnUnset(serverId: string, name: string): void {
    const key = `${serverId}\0${name}`;
    if (this.#warnedUnset.has(key)) return;
    this.#warnedUnset.add(key);
    this.#log.error?.(
      `mcpool: ${serverId}: \${${name}} is not set and has no default; it is passed to the server as written`,
    );
  }

  // ── Shutdown ─────────────────────────────────────────────────────────────────────

  /** Closes every server and forgets them; the pool refuses everything afterwards. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.#servers.closed) return;
    await this.#servers.shutdown();
    // Every transport is closed: what is left on the agent is idle sockets.
    await this.#ownFetch?.destroy();
  }

  /** shutdown() under its Node-style name. */
  close(): Promise<void> {
    return this.shutdown();
  }

  #assertOpen(): void {
    if (this.#servers.closed) throw new McpPoolError("closed", "the pool is closed");
  }
}

function isScope(value: unknown): value is readonly string[] {
  return Array.isArray(value);
}
