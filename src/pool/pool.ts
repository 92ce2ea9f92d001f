/**
 * McpPool: long-lived MCP connections to stdio and Streamable HTTP servers, reconciled
 * against a list of rows, with their tools exposed to an agent loop as `<slug>__<tool>`.
 *
 * The pool owns the reconcile queue, the tool index, scope and the call pipeline; each
 * server's connection, crash handling and backoff live in its ServerEntry.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { expandServerConfig } from "../config/placeholders.js";
import {
  isEnabled,
  labelOf,
  slugOf,
  type HttpServerConfig,
  type McpServerConfig,
} from "../config/rows.js";
import type { HookContext, HookEvent, HookOutcome } from "../config/hooks.js";
import { isConversationRow } from "../config/conversation.js";
import { VERSION } from "../version.js";

import { ConversationRegistry, isConversationTool, RowEntry } from "./conversations.js";
import { callArguments } from "./coercion.js";
import { describeTool } from "./describe.js";
import { McpPoolError } from "./errors.js";
import { keepAliveFetch, type KeepAliveFetch } from "./fetch.js";
import { JunkLog } from "./junk-log.js";
import { credentialsKey } from "./oauth.js";
import { PoolAuth } from "./pool-auth.js";
import { holding, sessionLost, withSession } from "./session.js";
import { ResultCache, type Invoked } from "./result-cache.js";
import { runHooks, type RunHooksOptions } from "./run-hooks.js";
import { searchCatalog, TermCache } from "./search.js";
import { qualifiedName } from "./naming.js";
import { probe as probeRow } from "./probe.js";
import { eachInTurns, mapInTurns } from "./batches.js";
import { checkCallTimeout, checkPoolDurations, checkRowDurations } from "./duration-checks.js";
import { planReconcile } from "./reconcile-plan.js";
import {
  Passthrough,
  type PassthroughArgs,
  type PassthroughMethod,
  type PassthroughResult,
  type ResourceListener,
} from "./passthrough.js";
import { ElicitationRouter, elicitationCapability, SamplingRouter } from "./routing.js";
import { connectionHash, type CachedTools } from "./tools-cache.js";
import { ReconcileQueue } from "./reconcile-queue.js";
import { resultText, truncateText } from "./results.js";
import { ServerEntry, type Connection, type EntryContext } from "./server-entry.js";
import { isBrokenPipe } from "./stdio-transport.js";
import { buildToolIndex, type IndexedTool, type ToolIndex } from "./tool-index.js";
import { serverState } from "./server-state.js";
import { PinLedger, samePin } from "./pinning.js";
import { createDefaultTransport } from "./transport.js";
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
  type McpPoolOptions,
};

/** Bound on how long an early listing or call waits for the first reconcile, ms (F4). */
export const READY_WAIT_MS = 10_000;

type Listener<T extends unknown[]> = (...args: T) => void;

export class McpPool {
  readonly #options: McpPoolOptions;
  readonly #log: PoolLog;
  readonly #queue: ReconcileQueue;
  readonly #context: EntryContext;
  readonly #entries = new Map<string, ServerEntry>();
  #order: string[] = [];
  #rows: readonly McpServerConfig[] | undefined;
  #index: ToolIndex | undefined;
  readonly #reportedClashes = new Set<string>();
  /** The fingerprint the tools cache holds per server, so an unchanged list is not saved again. */
  readonly #savedFingerprints = new Map<string, string | undefined>();
  #warnedTokens = 0;
  readonly #cache: ResultCache | undefined;
  readonly #terms = new TermCache();
  readonly #pins: PinLedger;
  /** The default fetch of http rows, when the pool was given none: ours to close. */
  readonly #ownFetch: KeepAliveFetch | undefined;
  /** `<id>\0<VAR>` of unset placeholder variables already logged, so each is said once. */
  readonly #warnedUnset = new Set<string>();
  #closed = false;
  /** The first reconcile, settled or not: what an early call or listing waits for (F4). */
  #firstSync: Promise<void> | undefined;
  #firstSyncDone = false;
  readonly #eventListeners = new Set<Listener<[PoolEvent]>>();
  readonly #auth: PoolAuth;
  readonly #notificationListeners = new Set<Listener<[string, ServerNotification]>>();
  readonly #elicitation: ElicitationRouter;
  readonly #sampling: SamplingRouter;
  readonly #passthrough: Passthrough;
  readonly #conversations: ConversationRegistry;

  constructor(options: McpPoolOptions) {
    checkPoolDurations(options);
    this.#options = options;
    this.#cache = options.resultCache ? new ResultCache(options.resultCache) : undefined;
    this.#log = options.log ?? { error: (message) => process.stderr.write(`${message}\n`) };
    this.#auth = new PoolAuth({
      tokenStore: options.tokenStore,
      authProvider: options.authProvider,
      lost: (serverId) => this.#entries.get(serverId)?.authLost(),
      log: (message) => this.#log.error?.(message),
    });
    this.#queue = new ReconcileQueue({
      ...(options.syncDebounceMs !== undefined ? { debounceMs: options.syncDebounceMs } : {}),
      onError: (error) =>
        this.#log.error?.(`mcpool: reconcile failed: ${(error as Error).message}`),
    });
    this.#pins = new PinLedger(options.pins, (id, error) =>
      this.#log.error?.(`mcpool: ${id}: reading the pin store failed: ${error.message}`),
    );
    const capabilities: ClientCapabilities = {};
    const elicitation = options.onElicit && elicitationCapability(options.elicitationModes);
    if (elicitation) capabilities.elicitation = elicitation;
    this.#elicitation = new ElicitationRouter(options.onElicit, this.#log);
    if (options.onSample) capabilities.sampling = {};
    this.#sampling = new SamplingRouter(options.onSample);
    this.#passthrough = new Passthrough({
      entry: (id) => this.#entry(id),
      find: (id) => this.#entries.get(id),
      timeoutMs: (entry) => entry.row.callTimeoutMs ?? options.callTimeoutMs,
      log: this.#log,
    });
    this.#ownFetch = options.fetch ? undefined : keepAliveFetch();
    const junk = new JunkLog({ log: (message) => this.#log.info?.(message) });
    this.#context = {
      clientInfo: { name: options.clientName, version: options.clientVersion ?? VERSION },
      capabilities,
      oauthSecrets: (serverId) => this.#auth.secrets(serverId),
      authRequired: (serverId, cause) => this.#auth.refusal(serverId, cause),
      createTransport: options.createTransport ?? createDefaultTransport,
      transportContext: {
        childEnv: options.childEnv ?? "inherit",
        fetch: options.fetch ?? this.#ownFetch,
        ...(options.env ? { env: options.env } : {}),
        onUnsetVariable: (serverId, name) => this.#warnUnset(serverId, name),
        ...(options.onChild ? { onChild: options.onChild } : {}),
        authProvider: (row) => this.#auth.provider(row, true),
        onAuthChallenge: (serverId, challenge) => this.#auth.challenged(serverId, challenge),
        onJunk: (serverId, line, redact) => junk.line(serverId, line, redact),
      },
      connectTimeoutMs: options.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs,
      crashBackoffMs: options.crashBackoffMs ?? DEFAULT_CRASH_BACKOFF_MS,
      log: this.#log,
      emit: (event) => this.#emit(event),
      notify: (serverId, notification) => this.#notify(serverId, notification),
      changed: (entry) => {
        this.#index = undefined;
        this.#checkPin(entry);
      },
      idleTimeoutMs: options.idleTimeoutMs,
      indexTools: options.indexTools !== false,
      schedule: (work) => this.#queue.run(work),
      listed: (entry) => this.#saveTools(entry),
      elicit: (serverId, params, signal) => this.#elicitation.elicit(serverId, params, signal),
      sample: (serverId, params, signal) => this.#sampling.sample(serverId, params, signal),
      held: (serverId) => this.#passthrough.held(serverId),
      ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
      revives: (entry) =>
        !this.#closed &&
        isEnabled(entry.row) &&
        !this.#isLazy(entry.row) &&
        !isConversationRow(entry.row) &&
        this.#entries.get(entry.id) === entry,
    };
    this.#conversations = new ConversationRegistry({
      context: this.#context,
      options: options.conversations,
      log: this.#log,
      emit: (event) => this.#emit(event),
      entryOf: (id) => this.#entries.get(id),
      maxResultChars: options.maxResultChars,
      maxDescriptionChars: options.maxDescriptionChars,
    });
  }

  /**
   * The clients of `session: "conversation"` rows (B9): leases, terminate(), listings,
   * stats(). Calls reach them through call() with `identity`.
   */
  get conversations(): ConversationRegistry {
    return this.#conversations;
  }

  // ── Reconcile ────────────────────────────────────────────────────────────────────

  /**
   * Reconciles against `configs`, or against `load()` when given nothing. Runs on the
   * queue: never beside another reconcile. `sync([])` closes everything.
   */
  sync(configs?: readonly McpServerConfig[]): Promise<void> {
    return this.#first(this.#enqueue(() => this.#reconcile(configs)));
  }

  /** A sync() after the debounce; calls within it share one reconcile. */
  syncSoon(): Promise<void> {
    if (this.#closed) return Promise.reject(new McpPoolError("closed", "the pool is closed"));
    return this.#first(this.#queue.soon(() => this.#reconcile(undefined)));
  }

  #first(run: Promise<void>): Promise<void> {
    this.#firstSync ??= run.then(
      () => void (this.#firstSyncDone = true),
      () => void (this.#firstSyncDone = true),
    );
    return run;
  }

  /**
   * Resolves once the first reconcile has finished — every eager server connected or
   * failed — or after `timeoutMs` (default {@link READY_WAIT_MS}), whichever comes first;
   * at once when no sync was asked for yet. Never rejects. A listing made before it would
   * miss the servers still starting (F4); call() waits for it by itself.
   */
  ready(timeoutMs = READY_WAIT_MS): Promise<void> {
    const first = this.#firstSync;
    if (first === undefined || this.#firstSyncDone) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    return Promise.race([first, bound]).finally(() => clearTimeout(timer));
  }

  /** Runs a pending syncSoon() now and waits for the queue to drain. */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  async #reconcile(configs: readonly McpServerConfig[] | undefined): Promise<void> {
    if (this.#closed) return;
    const rows = configs ?? (await this.#loadRows());
    checkRowDurations(rows);
    this.#rows = rows;
    const previous = new Map([...this.#entries].map(([id, entry]) => [id, entry.row]));
    const plan = planReconcile(previous, rows);
    // Built before anything changes, in turns: the pool stays consistent while it answers.
    const added = await mapInTurns(plan.add, (row) => new RowEntry(row, this.#context));
    const closing: Promise<void>[] = [];
    for (const id of plan.remove) {
      const entry = this.#entries.get(id)!;
      this.#entries.delete(id);
      closing.push(entry.remove("removed"));
    }
    for (const row of plan.restart) closing.push(this.#entries.get(row.id)!.replace(row));
    for (const row of plan.update) {
      const entry = this.#entries.get(row.id)!;
      entry.update(row);
      this.#checkPin(entry);
      if ((!isEnabled(row) || isConversationRow(row)) && entry.connection)
        closing.push(entry.close("changed"));
    }
    for (const entry of added) this.#entries.set(entry.id, entry);
    this.#order = plan.order;
    this.#index = undefined;
    this.#conversations.sync(rows);
    await Promise.all(closing);

    const now = Date.now();
    // A lazy row is registered, not dialled: its last-known list comes from the tools cache.
    await eachInTurns(
      added.filter((entry) => this.#isLazy(entry.row) && isEnabled(entry.row)),
      (entry) => this.#loadCachedTools(entry),
    );
    const due = this.#order
      .map((id) => this.#entries.get(id)!)
      .filter(
        (entry) =>
          isEnabled(entry.row) &&
          !this.#isLazy(entry.row) &&
          !entry.stopped &&
          !entry.connection &&
          !entry.connecting &&
          (entry.retryAt === undefined || entry.retryAt <= now),
      );
    await startAll(due, this.#options.maxConcurrentStarts ?? DEFAULT_MAX_CONCURRENT_STARTS);
  }

  #isLazy(row: McpServerConfig): boolean {
    return row.lazy ?? this.#options.lazy ?? false;
  }

  async #loadCachedTools(entry: ServerEntry): Promise<void> {
    const store = this.#options.toolsCache;
    if (!store || this.#options.indexTools === false) return;
    try {
      const cached = await store.load(entry.id);
      if (cached && cached.connection === connectionHash(entry.row)) {
        entry.adoptCached(cached.tools);
        this.#savedFingerprints.set(entry.id, entry.fingerprint);
      }
    } catch (error) {
      this.#log.error?.(
        `mcpool: ${entry.id}: reading the tools cache failed: ${(error as Error).message}`,
      );
    }
  }

  /** Hands a list the store does not hold yet to the tools cache; never awaited (B4). */
  #saveTools(entry: ServerEntry): void {
    const store = this.#options.toolsCache;
    if (!store || this.#savedFingerprints.get(entry.id) === entry.fingerprint) return;
    this.#savedFingerprints.set(entry.id, entry.fingerprint);
    const cached: CachedTools = { connection: connectionHash(entry.row), tools: entry.tools };
    Promise.resolve()
      .then(() => store.save(entry.id, cached))
      .catch((error: unknown) => {
        this.#savedFingerprints.delete(entry.id);
        this.#log.error?.(
          `mcpool: ${entry.id}: saving the tools cache failed: ${(error as Error).message}`,
        );
      });
  }

  async #loadRows(): Promise<readonly McpServerConfig[]> {
    if (!this.#options.load) {
      throw new McpPoolError(
        "no-configs",
        "sync() was given no rows and the pool has no load() to read them from",
      );
    }
    return this.#options.load();
  }

  // ── One server ───────────────────────────────────────────────────────────────────

  /** Closes one server's connection and keeps its row: `idle`, no error, no backoff. */
  stop(id: string): Promise<void> {
    return this.#enqueue(async () => {
      const entry = this.#entry(id);
      await Promise.all([entry.stop(), this.#conversations.end(id)]);
    });
  }

  /** Closes one server's connection and dials it again, changed or not. */
  reconnect(id: string): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#rows === undefined && !this.#options.load) {
        throw new McpPoolError(
          "no-configs",
          `reconnect("${id}") has no rows to reconcile against; call sync(rows) first`,
        );
      }
      const entry = this.#entry(id);
      await Promise.all([entry.reset(), this.#conversations.end(id)]);
      if (isEnabled(entry.row) && !isConversationRow(entry.row)) await entry.ensure();
    });
  }

  /**
   * Hands an http server the OAuth credentials an interactive sign-in got (`mcpool login`):
   * they go to the token store under the server's url, and the server is dialled again.
   * Resolves with the status the dial left, never with a connect failure; refuses an
   * unknown id, a stdio row and credentials without an access token (`invalid-arguments`).
   */
  async storeCredentials(id: string, credentials: unknown): Promise<ServerAuthState> {
    this.#assertOpen();
    await this.#auth.save(id, this.#credentialsKeyOf(id), credentials);
    return this.#redialAfterAuth(id);
  }

  /** Forgets what a sign-in left for an http server (`mcpool logout`) and dials it again. */
  async forgetCredentials(id: string): Promise<ServerAuthState> {
    this.#assertOpen();
    await this.#auth.forget(id, this.#credentialsKeyOf(id));
    return this.#redialAfterAuth(id);
  }

  #credentialsKeyOf(id: string): string {
    const row = this.#entry(id).row;
    if (row.transport !== "http") {
      throw new McpPoolError(
        "invalid-arguments",
        `server "${id}" is a stdio server; only http servers sign in`,
        { serverId: id },
      );
    }
    const env = this.#context.transportContext.env ?? process.env;
    // The key is the url as dialled, so it is the one the transport's provider reads.
    return credentialsKey((expandServerConfig(row, env) as HttpServerConfig).url);
  }

  async #redialAfterAuth(id: string): Promise<ServerAuthState> {
    // A failed dial is the answer, not an error: the state says what it was.
    await this.reconnect(id).catch(() => undefined);
    const entry = this.#entry(id);
    return {
      id,
      status: entry.status,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
    };
  }

  /** Dials a row that need not be saved, lists its tools and hangs up. Never throws. */
  probe(row: McpServerConfig): Promise<ProbeResult> {
    const timeoutMs =
      row.probeTimeoutMs ??
      row.connectTimeoutMs ??
      this.#options.probeTimeoutMs ??
      this.#options.connectTimeoutMs;
    const { childEnv, fetch, env, onUnsetVariable } = this.#context.transportContext;
    return probeRow(row, this.#context.clientInfo, {
      createTransport: this.#context.createTransport,
      childEnv,
      ...(fetch ? { fetch } : {}),
      ...(env ? { env } : {}),
      ...(onUnsetVariable ? { onUnsetVariable } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      // Stored tokens serve a probe too; its refusal says nothing about the live server.
      authProvider: (dialled) => this.#auth.provider(dialled, false),
    });
  }

  /**
   * The connected SDK Client of one server, for what call() does not carry: resources,
   * prompts, subscriptions. Starts an idle server; refuses a disabled or unknown one
   * (`disabled`, `unknown-server`). A client held past a session loss is refused by the
   * server; use() handles that.
   */
  async client(id: string): Promise<Client> {
    this.#assertOpen();
    return (await this.#entry(id).ensure()).client;
  }

  /**
   * `run` with the server's connected Client, counted as a use (nothing retires the
   * connection under it). When the remote has forgotten the session (B6) the server is
   * redialled once — one redial for every request that saw the loss — and `run` called
   * again with the new Client; any other failure is passed through.
   */
  async use<T>(id: string, run: (client: Client) => Promise<T>): Promise<T> {
    this.#assertOpen();
    const entry = this.#entry(id);
    return withSession(entry, (connection) => holding(connection, () => run(connection.client)));
  }

  /**
   * Sends one MCP request that call() does not carry to server `id` (C15): resources/list,
   * resources/templates/list, resources/read, prompts/list, prompts/get,
   * completion/complete, logging/setLevel, ping. Refused with `not-offered` where the
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
   * upstream for the first listener. Resolves with the function that stops listening; the
   * last one to stop unsubscribes upstream. Refused with `not-offered` where the server does
   * not offer resource subscriptions.
   */
  async subscribeResource(
    id: string,
    uri: string,
    listener: ResourceListener,
  ): Promise<() => Promise<void>> {
    this.#assertOpen();
    return this.#passthrough.subscribe(id, uri, listener);
  }

  #warnUnset(serverId: string, name: string): void {
    const key = `${serverId}\0${name}`;
    if (this.#warnedUnset.has(key)) return;
    this.#warnedUnset.add(key);
    this.#log.error?.(
      `mcpool: ${serverId}: \${${name}} is not set and has no default; it is passed to the server as written`,
    );
  }

  #entry(id: string): ServerEntry {
    const entry = this.#entries.get(id);
    if (!entry)
      throw new McpPoolError("unknown-server", `unknown server "${id}"`, { serverId: id });
    return entry;
  }

  // ── What the pool holds ──────────────────────────────────────────────────────────

  /** Every configured server, in configuration order. Secrets only when asked for. */
  state(options: { secrets?: boolean } = {}): ServerState[] {
    const index = this.#currentIndex();
    return this.#order.map((id) => {
      const entry = this.#entries.get(id)!;
      return serverState(entry, index, {
        secrets: options.secrets === true,
        pinDiff: index.pinMismatch.has(id) ? this.#pins.diff(entry) : undefined,
        conversations: this.#conversations.statsOf(id),
        signIn: this.#auth.request(id),
      });
    });
  }

  /**
   * OpenAI-shaped definitions: configuration order, then each server's order; frozen.
   * `servers` absent = every server, empty = none. Hidden tools are left out.
   */
  tools(
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): ToolDefinition[] {
    const names = options.names ? new Set(options.names) : undefined;
    const scope = options.servers ? new Set(options.servers) : undefined;
    const out: ToolDefinition[] = [];
    let tokens = 0;
    for (const indexed of this.#currentIndex().ordered) {
      if (names && !names.has(indexed.qualified)) continue;
      if (!this.#visible(indexed, scope, false)) continue;
      out.push(indexed.definition);
      tokens += indexed.tokens;
    }
    const warnAt = this.#options.toolsTokenWarning ?? DEFAULT_TOOLS_TOKEN_WARNING;
    if (warnAt > 0 && tokens > warnAt && tokens > this.#warnedTokens) {
      this.#warnedTokens = tokens;
      this.#log.info?.(
        `mcpool: tools() is handing out ${out.length} definitions, about ${tokens} tokens (over toolsTokenWarning ${warnAt}); a small context window may be truncated without a word`,
      );
    }
    return out;
  }

  /** Every tool's name and description per server, no schemas. Connects nothing. */
  catalog(servers?: readonly string[]): CatalogServer[] {
    const scope = servers ? new Set(servers) : undefined;
    const byServer = new Map<string, CatalogServer>();
    for (const indexed of this.#currentIndex().ordered) {
      if (!this.#visible(indexed, scope, false)) continue;
      const { entry, tool } = indexed;
      let server = byServer.get(entry.id);
      if (!server) {
        server = { id: entry.id, slug: slugOf(entry.row), label: labelOf(entry.row), tools: [] };
        if (entry.stale) server.stale = true;
        byServer.set(entry.id, server);
      }
      server.tools.push({
        name: indexed.qualified,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
        tokens: indexed.tokens,
      });
    }
    return [...byServer.values()];
  }

  /** catalog() cut to the `limit` (default 20) best matches for `query` (C6). Connects nothing. */
  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number } = {},
  ): CatalogServer[] {
    return searchCatalog(query, this.catalog(options.servers), {
      cache: this.#terms,
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
  }

  /** Qualified names of the rows' `alwaysLoad` tools that tools() would hand out (C8). */
  alwaysLoaded(servers?: readonly string[]): string[] {
    const scope = servers ? new Set(servers) : undefined;
    return this.#currentIndex()
      .ordered.filter(
        (indexed) =>
          this.#visible(indexed, scope, false) &&
          (indexed.entry.row.alwaysLoad ?? []).includes(indexed.tool.name),
      )
      .map((indexed) => indexed.qualified);
  }

  /** What a definition has no room for (C7); undefined where call() would refuse. Connects nothing. */
  describe(
    qualified: string,
    options: { servers?: readonly string[]; hidden?: boolean } = {},
  ): ToolDescription | undefined {
    const indexed = this.#currentIndex().byName.get(qualified);
    const scope = options.servers ? new Set(options.servers) : undefined;
    if (!indexed || !this.#visible(indexed, scope, options.hidden === true)) return undefined;
    const hidden = (indexed.entry.row.hiddenTools ?? []).includes(indexed.tool.name);
    return describeTool(indexed.tool, { ...indexed, serverId: indexed.entry.id, hidden });
  }

  #visible(indexed: IndexedTool, scope: ReadonlySet<string> | undefined, hidden: boolean): boolean {
    if (scope && !scope.has(indexed.entry.id)) return false;
    return hidden || !(indexed.entry.row.hiddenTools ?? []).includes(indexed.tool.name);
  }

  #currentIndex(): ToolIndex {
    this.#index ??= buildToolIndex(
      this.#order.map((id) => this.#entries.get(id)!),
      {
        maxDescriptionChars: this.#options.maxDescriptionChars,
        checkPins: this.#options.indexTools !== false,
        onClash: (key, message) => {
          if (this.#reportedClashes.has(key)) return;
          this.#reportedClashes.add(key);
          this.#log.error?.(`mcpool: ${message}`);
        },
      },
    );
    return this.#index;
  }

  // ── Pinning (C18) ────────────────────────────────────────────────────────────────

  /**
   * What a person approving a server's tools is shown: the row's pin, the live list and,
   * when the pin store knows the list the pin was approved for, what changed since. Dials
   * an idle server, so the list shown is a live one and not a last-known one.
   */
  async pinInfo(id: string): Promise<PinInfo> {
    this.#assertOpen();
    const entry = this.#entry(id);
    entry.busy();
    try {
      if (!entry.connection) await entry.ensure();
      await entry.settled();
    } finally {
      entry.idle();
    }
    const fingerprint = entry.fingerprint;
    if (fingerprint === undefined) {
      throw new McpPoolError("connection-lost", `server "${id}" has no tool list to approve`, {
        serverId: id,
      });
    }
    return this.#pins.info({ id, row: entry.row, fingerprint, tools: entry.tools });
  }

  /**
   * Records in the pin store that a person approved the live list hashing to `fingerprint`,
   * refusing (`pin-mismatch`) when the list has moved on since it was shown. The pin itself
   * is the row's: the tools are offered again once a sync brings a row pinning it.
   */
  async approve(id: string, fingerprint: string): Promise<PinInfo> {
    const info = await this.pinInfo(id);
    if (!samePin(fingerprint, info.fingerprint)) {
      throw new McpPoolError(
        "pin-mismatch",
        `the tools of server "${id}" changed after they were shown (they now hash to ${info.fingerprint.slice(0, 12)}…); look again with \`mcpool approve ${id} --show\``,
        { serverId: id, expected: fingerprint, actual: info.fingerprint },
      );
    }
    await this.#pins.save(info);
    return info;
  }

  /** Emits pin-mismatch for a server whose list stopped matching its row's pin (once per list). */
  #checkPin(entry: ServerEntry): void {
    const event = this.#pins.check(entry, entry.removed || this.#options.indexTools === false);
    if (!event) return;
    const { diff } = event;
    this.#log.error?.(
      `mcpool: ${entry.id}: its tools no longer match the approved pin and are withheld${diff ? ` (added: ${diff.added.join(", ") || "none"}; removed: ${diff.removed.join(", ") || "none"}; changed: ${diff.changed.join(", ") || "none"})` : ""}; review with \`mcpool approve ${entry.id} --show\``,
    );
    this.#emit(event);
  }

  /** A name only a withheld server lists, in scope and not hidden: refused with why. */
  #refuseWithheld(
    index: ToolIndex,
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    hidden: boolean,
  ): void {
    const withheld = index.withheld.get(qualified);
    // Not connected: its list is a last-known one; the caller dials it and looks again.
    if (!withheld?.entry.connection) return;
    const { entry, tool } = withheld;
    if (scope && !scope.has(entry.id)) return;
    if (!hidden && (entry.row.hiddenTools ?? []).includes(tool.name)) return;
    throw new McpPoolError(
      "pin-mismatch",
      `the tools of server "${entry.id}" changed since they were approved and are withheld; review the change and run \`mcpool approve ${entry.id}\``,
      { serverId: entry.id, expected: entry.row.pin, actual: entry.fingerprint },
    );
  }

  // ── Calls ────────────────────────────────────────────────────────────────────────

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
  async call(
    qualified: string,
    input: unknown = {},
    options?: CallOptions | readonly string[],
  ): Promise<string | CallToolResult> {
    const opts: CallOptions = isScope(options) ? { servers: options } : (options ?? {});
    const started = performance.now();
    let indexed: IndexedTool | undefined;
    let unroute: (() => void) | undefined;
    let unsample: (() => void) | undefined;
    try {
      this.#assertOpen();
      checkCallTimeout(opts.timeoutMs);
      indexed = await this.#resolve(qualified, opts);
      // From here until the call settles, the server's elicitations may be this caller's (C14).
      if (opts.onElicit) unroute = this.#elicitation.register(indexed.entry.id, opts.onElicit);
      if (opts.onSample) unsample = this.#sampling.register(indexed.entry.id, opts.onSample);
      const { result, text, chars, truncated, cached } = await this.#prepared(indexed, input, opts);
      if (this.#eventListeners.size > 0) {
        this.#emit({
          type: "call",
          qualified,
          serverId: indexed.entry.id,
          toolName: indexed.tool.name,
          ms: performance.now() - started,
          ok: true,
          chars,
          truncated,
          ...(opts.hidden ? { hidden: true } : {}),
          ...(opts.raw ? { raw: true } : {}),
          ...(cached ? { cached: true } : {}),
        });
      }
      return opts.raw ? result : text;
    } catch (error) {
      if (this.#eventListeners.size > 0) {
        this.#emit({
          type: "call",
          qualified,
          ...(indexed ? { serverId: indexed.entry.id, toolName: indexed.tool.name } : {}),
          ms: performance.now() - started,
          ok: false,
          ...(error instanceof McpPoolError ? { code: error.code } : {}),
          error: (error as Error).message,
        });
      }
      throw error;
    } finally {
      unroute?.();
      unsample?.();
      // The use is over: the idle clock starts again (B1).
      indexed?.entry.idle();
    }
  }

  /** The tool a qualified name answers to, for this scope, waking a server that could offer it. */
  async #resolve(qualified: string, opts: CallOptions): Promise<IndexedTool> {
    const scope = opts.servers ? new Set(opts.servers) : undefined;
    const found = this.#lookup(qualified, scope, opts.hidden === true);
    // Synchronously, before anything awaits: an idle reap already queued must see the use.
    found?.entry.busy();
    if (found && found.entry.connection) return found;
    if (!found && !this.#firstSyncDone && this.#firstSync) {
      // The pool is still starting: the name may be one a server has yet to list (F4).
      await this.ready();
      return this.#resolve(qualified, opts);
    }
    if (found) {
      // A last-known (stale) tool: its server comes back first, and may offer other tools.
      await found.entry.ensure();
      const again = this.#lookup(qualified, scope, opts.hidden === true);
      if (again) return again;
      throw unknownTool(qualified);
    }
    // A conversation row's tools are listed on the caller's own client (B9).
    const conversational = await this.#conversations.resolve(qualified, scope, opts);
    if (conversational) return conversational;
    // Nothing answers to the name: wake the servers in scope whose slug could have made it.
    const candidates = this.#order
      .map((id) => this.#entries.get(id)!)
      .filter(
        (entry) =>
          (!scope || scope.has(entry.id)) &&
          !entry.connection &&
          isEnabled(entry.row) &&
          qualified.startsWith(qualifiedName(slugOf(entry.row), "")),
      );
    const failures: unknown[] = [];
    for (const entry of candidates) {
      try {
        await entry.ensure();
      } catch (error) {
        failures.push(error);
      }
    }
    const woken = this.#lookup(qualified, scope, opts.hidden === true);
    if (woken) return woken;
    if (candidates.length === 1 && failures.length === 1) throw failures[0];
    throw unknownTool(qualified);
  }

  #lookup(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    hidden: boolean,
  ): IndexedTool | undefined {
    const index = this.#currentIndex();
    const indexed = index.byName.get(qualified);
    if (!indexed) {
      this.#refuseWithheld(index, qualified, scope, hidden);
      return undefined;
    }
    if (scope && !scope.has(indexed.entry.id)) throw unknownTool(qualified, "out-of-scope");
    if (!this.#visible(indexed, undefined, hidden)) throw unknownTool(qualified);
    return indexed;
  }

  /** After the scope and hiding refusals: coercion (C9), then the result cache (C11). */
  #prepared(
    indexed: IndexedTool,
    input: unknown,
    opts: CallOptions,
  ): Promise<Invoked & { cached?: true }> {
    const { entry, tool } = indexed;
    const row = entry.row;
    const coerce = opts.coerce ?? row.coerceArguments ?? this.#options.coerceArguments ?? true;
    const args = callArguments(indexed.qualified, input, tool.inputSchema, coerce);
    // Never cached: a conversation's answers are its session's (B9).
    if (isConversationTool(indexed)) return this.#conversations.invoke(indexed, args, opts);
    if (!this.#cache) return this.#invoke(indexed, args, opts);
    return this.#cache.run(
      {
        serverId: entry.id,
        toolName: tool.name,
        annotations: tool.annotations,
        trusted: row.trustAnnotations === true,
        args,
        raw: opts.raw,
        cache: opts.cache,
        maxResultChars:
          opts.maxResultChars ?? row.maxResultChars ?? this.#options.maxResultChars ?? 0,
      },
      () => this.#invoke(indexed, args, opts),
    );
  }

  async #invoke(
    indexed: IndexedTool,
    input: unknown,
    opts: CallOptions,
  ): Promise<{ result: CallToolResult; text: string; chars: number; truncated: boolean }> {
    const { entry, tool } = indexed;
    const row = entry.row;
    const timeoutMs = opts.timeoutMs ?? row.callTimeoutMs ?? this.#options.callTimeoutMs;
    const args = (typeof input === "object" && input !== null ? input : {}) as Record<
      string,
      unknown
    >;
    let result: CallToolResult;
    try {
      // A remote that forgot our session is redialled once and sent the call again (B6).
      result = await withSession(entry, (connection) =>
        this.#send(entry, connection, tool.name, args, timeoutMs, opts.signal, opts.onProgress),
      );
    } catch (error) {
      const retryable =
        error instanceof McpPoolError &&
        error.code === "server-crashed" &&
        row.trustAnnotations === true &&
        (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true);
      if (!retryable) throw error;
      // A read cut off by a crash is safe to send again, once, to the restarted server (F2).
      result = await this.#send(
        entry,
        await entry.ensure({ ignoreBackoff: true }),
        tool.name,
        args,
        timeoutMs,
        opts.signal,
        opts.onProgress,
      );
    }
    const max = opts.maxResultChars ?? row.maxResultChars ?? this.#options.maxResultChars ?? 0;
    const full = resultText(result);
    if (result.isError && !opts.raw) {
      throw new McpPoolError("tool-error", truncateText(full, max), { serverId: entry.id });
    }
    const text = opts.raw ? full : truncateText(full, max);
    return { result, text, chars: full.length, truncated: text !== full };
  }

  async #send(
    entry: ServerEntry,
    connection: Connection,
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    onProgress?: CallOptions["onProgress"],
  ): Promise<CallToolResult> {
    connection.inflight += 1;
    try {
      // onprogress makes the SDK send a progressToken of its own; resetTimeoutOnProgress
      // stays false, so a chatty server cannot hold a call past its timeout.
      const result = (await connection.client.callTool(
        { name, arguments: args },
        CallToolResultSchema,
        {
          ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
          ...(signal ? { signal } : {}),
          ...(onProgress ? { onprogress: onProgress } : {}),
        },
      )) as CallToolResult;
      connection.answered = true;
      this.#auth.satisfied(entry.id, "call");
      return result;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        // Slow, or hung? A ping on a small budget tells, and a hung server is replaced (F3).
        entry.timedOut(connection);
      }
      if (isBrokenPipe(error)) entry.brokenPipe(connection);
      const refusal = this.#auth.refusal(entry.id, error);
      // A refusal the SDK gave up on (a step-up it could not make) retires the connection.
      if (refusal !== undefined) entry.authLost();
      throw callError(entry, connection, name, timeoutMs, error, refusal);
    } finally {
      connection.inflight -= 1;
      if (connection.inflight === 0) connection.drained?.();
    }
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
    const rows = (): McpServerConfig[] => this.#order.map((id) => this.#entries.get(id)!.row);
    return runHooks(
      { rows, call: (name, input, opts) => this.call(name, input, opts) },
      event,
      context,
      options,
    );
  }

  // ── Events and notifications ─────────────────────────────────────────────────────

  /** Listens to what the pool does, as data. Returns the unsubscribe function. */
  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** Listens to what servers send, with the id of the server that sent it. */
  onNotification(
    listener: (serverId: string, notification: ServerNotification) => void,
  ): () => void {
    this.#notificationListeners.add(listener);
    return () => this.#notificationListeners.delete(listener);
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
    for (const listener of this.#eventListeners) {
      try {
        listener(event);
      } catch (error) {
        this.#log.error?.(`mcpool: an event listener threw: ${(error as Error).message}`);
      }
    }
  }

  #notify(serverId: string, notification: ServerNotification): void {
    this.#passthrough.deliver(serverId, notification);
    for (const listener of this.#notificationListeners) {
      try {
        listener(serverId, notification);
      } catch (error) {
        this.#log.error?.(`mcpool: a notification listener threw: ${(error as Error).message}`);
      }
    }
  }

  // ── Shutdown ─────────────────────────────────────────────────────────────────────

  /** Closes every server and forgets them; the pool refuses everything afterwards. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#queue.cancel();
    this.#closed = true;
    await this.#conversations.close();
    await this.#queue.run(async () => {
      const entries = [...this.#entries.values()];
      await Promise.all(
        entries.map(async (entry) => {
          await entry.remove("shutdown");
          await entry.retired();
        }),
      );
      this.#entries.clear();
      this.#order = [];
      this.#index = undefined;
    });
    // Every transport is closed: what is left on the agent is idle sockets.
    await this.#ownFetch?.destroy();
  }

  #assertOpen(): void {
    if (this.#closed) throw new McpPoolError("closed", "the pool is closed");
  }

  /** Runs `work` on the reconcile queue; a closed pool rejects rather than throws. */
  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new McpPoolError("closed", "the pool is closed"));
    return this.#queue.run(work);
  }
}

export interface CatalogServer {
  id: string;
  slug: string;
  label: string;
  stale?: boolean;
  tools: {
    name: string;
    description?: string;
    title?: string;
    annotations?: Record<string, unknown>;
    tokens: number;
  }[];
}

/** The tokens of a tool state() lists, when the index holds it for this server. */

function isScope(value: unknown): value is readonly string[] {
  return Array.isArray(value);
}

/** unknown-tool and out-of-scope share their message: a run must not learn what it may not reach. */
function unknownTool(
  qualified: string,
  code: "unknown-tool" | "out-of-scope" = "unknown-tool",
): McpPoolError {
  return new McpPoolError(code, `no server offers the tool "${qualified}"`);
}

/** What a failed tools/call becomes: one pool error code per way it can fail. */
function callError(
  entry: ServerEntry,
  connection: Connection,
  name: string,
  timeoutMs: number | undefined,
  error: unknown,
  authRefusal: string | undefined,
): unknown {
  const serverId = entry.id;
  // Passed through whole: withSession redials on it (B6).
  if (error instanceof McpPoolError || sessionLost(error)) return error;
  const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
  if (timedOut || connection.unresponsive) {
    const ms = timeoutMs ?? 60_000;
    const why = timedOut
      ? `timed out after ${ms} ms`
      : "got no answer: the server stopped answering and is being replaced";
    return new McpPoolError("timeout", `call to "${name}" on server "${serverId}" ${why}`, {
      serverId,
      timeoutMs: ms,
    });
  }
  const cutOff = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
  if (cutOff || isBrokenPipe(error)) {
    // Closed by us (a reconnect, a retirement past its drain bound): the call was cut short.
    if (connection.closing) {
      return new McpPoolError(
        "connection-lost",
        `the connection to server "${serverId}" was closed during the call to "${name}"`,
        { serverId },
      );
    }
    return new McpPoolError(
      "server-crashed",
      `server "${serverId}" went down during the call to "${name}"; the tool may have run`,
      { serverId },
    );
  }
  if (error instanceof McpError) {
    return new McpPoolError("tool-error", error.message, { serverId, mcpCode: error.code });
  }
  if (authRefusal !== undefined) {
    return new McpPoolError("auth-required", authRefusal, { serverId }, { cause: error });
  }
  // A remote that cannot be reached (connection refused, reset): name the server and the cause.
  const cause = error instanceof Error ? (error.cause as Error | undefined) : undefined;
  const detail = cause?.message ? `${(error as Error).message}: ${cause.message}` : String(error);
  return new McpPoolError(
    "connection-lost",
    entry.redact(`server "${serverId}" could not be reached for the call to "${name}": ${detail}`),
    { serverId },
    { cause: error },
  );
}

async function startAll(entries: readonly ServerEntry[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < entries.length) {
      const entry = entries[next++]!;
      // A failure is recorded on the entry and reported; it does not fail the reconcile.
      await entry.ensure().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, entries.length) }, worker));
}
