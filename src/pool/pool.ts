/**
 * McpPool: long-lived MCP connections to stdio and Streamable HTTP servers, reconciled
 * against a list of rows, with their tools exposed to an agent loop as `<slug>__<tool>`.
 *
 * The pool owns the reconcile queue, the tool index, scope and the call pipeline; each
 * server's connection, crash handling and backoff live in its ServerEntry.
 */
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  isEnabled,
  labelOf,
  slugOf,
  withoutSecrets,
  type McpServerConfig,
} from "../config/rows.js";
import { VERSION } from "../version.js";
import type { ChildEnvPolicy } from "./child-env.js";
import { McpPoolError } from "./errors.js";
import { qualifiedName } from "./naming.js";
import { probe as probeRow } from "./probe.js";
import { planReconcile } from "./reconcile-plan.js";
import { connectionHash, type CachedTools, type ToolsCacheStore } from "./tools-cache.js";
import { ReconcileQueue } from "./reconcile-queue.js";
import { resultText, truncateText } from "./results.js";
import { ServerEntry, type Connection, type EntryContext } from "./server-entry.js";
import { buildToolIndex, type IndexedTool, type ToolIndex } from "./tool-index.js";
import {
  createDefaultTransport,
  type ChildListener,
  type CreateTransport,
  type FetchLike,
} from "./transport.js";
import type {
  CallOptions,
  PoolEvent,
  PoolLog,
  ProbeResult,
  ServerNotification,
  ServerState,
  ToolDefinition,
} from "./types.js";

/** How long a server that failed is left alone before a call or reconcile dials it again. */
export const DEFAULT_CRASH_BACKOFF_MS = 5000;
/** tools() logs once when a set it hands out is estimated above this many tokens. */
export const DEFAULT_TOOLS_TOKEN_WARNING = 3000;
/** Children started at once by a reconcile, so forty `npx` servers do not trample each other. */
export const DEFAULT_MAX_CONCURRENT_STARTS = 8;

export interface McpPoolOptions {
  /** Where sync() with no argument reads its rows. Without it, sync() needs rows. */
  load?: () => readonly McpServerConfig[] | Promise<readonly McpServerConfig[]>;
  /** clientInfo.name of the MCP handshake: the whole of what a server learns about us. */
  clientName: string;
  /** clientInfo.version. Default: this package's version. */
  clientVersion?: string;
  /** Where the pool logs. Both halves optional; `{}` is silence. Default: errors to stderr. */
  log?: PoolLog;
  /** Connect budget in ms over initialize plus every tools/list page. Default: the SDK's 60 s per request. */
  connectTimeoutMs?: number;
  /** Per-call timeout in ms. Default: the SDK's 60 s. Progress does not extend it. */
  callTimeoutMs?: number;
  /** Probe budget in ms. Default: `connectTimeoutMs`. */
  probeTimeoutMs?: number;
  /** First backoff after a failure, ms, doubling per failure in a row (capped). Default 5000. */
  crashBackoffMs?: number;
  /** Cap on the characters call() returns; 0 or unset is no cap. */
  maxResultChars?: number;
  /** Cap on each description tools() hands out, `[Label] ` prefix included; unset is no cap. */
  maxDescriptionChars?: number;
  /** Estimated tokens above which tools() logs a warning once per larger set; 0 silences. Default 3000. */
  toolsTokenWarning?: number;
  /** Builds the transport for a row; tests and custom transports plug in here. */
  createTransport?: CreateTransport;
  /** fetch used by http rows. */
  fetch?: FetchLike;
  /** Environment policy for stdio children. Default `inherit`. */
  childEnv?: ChildEnvPolicy;
  /** Children a reconcile starts at once. Default 8. */
  maxConcurrentStarts?: number;
  /** Debounce of syncSoon(), ms. Default 100. */
  syncDebounceMs?: number;
  /** Told when a stdio child starts and when it and its process group are gone (pid records). */
  onChild?: ChildListener;
  /** Register rows without dialling; the first use starts a server. Rows may override. Default false. */
  lazy?: boolean;
  /** Close a server after this many ms without a use; rows may override, 0 never. Default: never. */
  idleTimeoutMs?: number;
  /** false: never list tools (a proxy that passes tools/list through). Default true. */
  indexTools?: boolean;
  /** Where last-known tool lists outlive the process, so a lazy pool has a catalogue at once. */
  toolsCache?: ToolsCacheStore;
}

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
  #closed = false;
  readonly #eventListeners = new Set<Listener<[PoolEvent]>>();
  readonly #notificationListeners = new Set<Listener<[string, ServerNotification]>>();

  constructor(options: McpPoolOptions) {
    this.#options = options;
    this.#log = options.log ?? { error: (message) => process.stderr.write(`${message}\n`) };
    this.#queue = new ReconcileQueue({
      ...(options.syncDebounceMs !== undefined ? { debounceMs: options.syncDebounceMs } : {}),
      onError: (error) =>
        this.#log.error?.(`mcpool: reconcile failed: ${(error as Error).message}`),
    });
    const capabilities: ClientCapabilities = {};
    this.#context = {
      clientInfo: { name: options.clientName, version: options.clientVersion ?? VERSION },
      capabilities,
      createTransport: options.createTransport ?? createDefaultTransport,
      transportContext: {
        childEnv: options.childEnv ?? "inherit",
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.onChild ? { onChild: options.onChild } : {}),
        onJunk: (line) =>
          this.#log.info?.(
            `mcpool: skipped a stdout line that is not JSON-RPC: ${line.slice(0, 200)}`,
          ),
      },
      connectTimeoutMs: options.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs,
      crashBackoffMs: options.crashBackoffMs ?? DEFAULT_CRASH_BACKOFF_MS,
      log: this.#log,
      emit: (event) => this.#emit(event),
      notify: (serverId, notification) => this.#notify(serverId, notification),
      changed: () => {
        this.#index = undefined;
      },
      idleTimeoutMs: options.idleTimeoutMs,
      indexTools: options.indexTools !== false,
      schedule: (work) => this.#queue.run(work),
      listed: (entry) => this.#saveTools(entry),
    };
  }

  // ── Reconcile ────────────────────────────────────────────────────────────────────

  /**
   * Reconciles against `configs`, or against `load()` when given nothing. Runs on the
   * queue: never beside another reconcile. `sync([])` closes everything.
   */
  sync(configs?: readonly McpServerConfig[]): Promise<void> {
    return this.#enqueue(() => this.#reconcile(configs));
  }

  /** A sync() after the debounce; calls within it share one reconcile. */
  syncSoon(): Promise<void> {
    if (this.#closed) return Promise.reject(new McpPoolError("closed", "the pool is closed"));
    return this.#queue.soon(() => this.#reconcile(undefined));
  }

  /** Runs a pending syncSoon() now and waits for the queue to drain. */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  async #reconcile(configs: readonly McpServerConfig[] | undefined): Promise<void> {
    if (this.#closed) return;
    const rows = configs ?? (await this.#loadRows());
    this.#rows = rows;
    const previous = new Map([...this.#entries].map(([id, entry]) => [id, entry.row]));
    const plan = planReconcile(previous, rows);
    const closing: Promise<void>[] = [];
    for (const id of plan.remove) {
      const entry = this.#entries.get(id)!;
      entry.removed = true;
      this.#entries.delete(id);
      closing.push(entry.close("removed"));
    }
    for (const row of plan.restart) closing.push(this.#entries.get(row.id)!.replace(row));
    for (const row of plan.update) {
      const entry = this.#entries.get(row.id)!;
      entry.update(row);
      if (!isEnabled(row) && entry.connection) closing.push(entry.close("changed"));
    }
    for (const row of plan.add) this.#entries.set(row.id, new ServerEntry(row, this.#context));
    this.#order = plan.order;
    this.#index = undefined;
    await Promise.all(closing);

    const now = Date.now();
    // A lazy row is registered, not dialled: its last-known list comes from the tools cache.
    await Promise.all(
      plan.add
        .filter((row) => this.#isLazy(row) && isEnabled(row))
        .map((row) => this.#loadCachedTools(this.#entries.get(row.id)!)),
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
      entry.stopped = true;
      await entry.close("stop");
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
      await entry.close("reconnect");
      entry.resetBackoff();
      entry.stopped = false;
      if (isEnabled(entry.row)) await entry.ensure();
    });
  }

  /** Dials a row that need not be saved, lists its tools and hangs up. Never throws. */
  probe(row: McpServerConfig): Promise<ProbeResult> {
    const timeoutMs =
      row.probeTimeoutMs ??
      row.connectTimeoutMs ??
      this.#options.probeTimeoutMs ??
      this.#options.connectTimeoutMs;
    return probeRow(row, this.#context.clientInfo, {
      createTransport: this.#context.createTransport,
      childEnv: this.#context.transportContext.childEnv,
      ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
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
      const row = entry.row;
      const connection = entry.connection;
      const hidden = new Set(row.hiddenTools ?? []);
      const lost = index.lostTo.has(id);
      const slug = slugOf(row);
      const state: ServerState = {
        id,
        slug,
        label: labelOf(row),
        config: structuredClone(options.secrets ? row : withoutSecrets(row)),
        status: entry.status,
        tools: entry.tools.map((tool) => ({
          name: tool.name,
          qualified: qualifiedName(slug, tool.name),
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          ...(tool.title !== undefined ? { title: tool.title } : {}),
          ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
          hidden: hidden.has(tool.name),
          ...(lost ? { clashed: true } : {}),
        })),
      };
      if (entry.error !== undefined) state.error = entry.error;
      if (entry.retryAt !== undefined) state.retryAt = entry.retryAt;
      if (connection) {
        if (connection.pid !== undefined) state.pid = connection.pid;
        state.startedAt = connection.startedAt;
        if (connection.inflight > 0) state.inflight = connection.inflight;
        if (connection.instructions !== undefined) state.instructions = connection.instructions;
        if (connection.capabilities !== undefined)
          state.capabilities = structuredClone(connection.capabilities);
      }
      if (entry.fingerprint !== undefined) state.toolsFingerprint = entry.fingerprint;
      if (entry.stale) state.stale = true;
      return state;
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

  #visible(indexed: IndexedTool, scope: ReadonlySet<string> | undefined, hidden: boolean): boolean {
    if (scope && !scope.has(indexed.entry.id)) return false;
    return hidden || !(indexed.entry.row.hiddenTools ?? []).includes(indexed.tool.name);
  }

  #currentIndex(): ToolIndex {
    this.#index ??= buildToolIndex(
      this.#order.map((id) => this.#entries.get(id)!),
      {
        maxDescriptionChars: this.#options.maxDescriptionChars,
        onClash: (key, message) => {
          if (this.#reportedClashes.has(key)) return;
          this.#reportedClashes.add(key);
          this.#log.error?.(`mcpool: ${message}`);
        },
      },
    );
    return this.#index;
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
    try {
      this.#assertOpen();
      indexed = await this.#resolve(qualified, opts);
      const { result, text, chars, truncated } = await this.#invoke(indexed, input, opts);
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
    if (found) {
      // A last-known (stale) tool: its server comes back first, and may offer other tools.
      await found.entry.ensure();
      const again = this.#lookup(qualified, scope, opts.hidden === true);
      if (again) return again;
      throw unknownTool(qualified);
    }
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
    const indexed = this.#currentIndex().byName.get(qualified);
    if (!indexed) return undefined;
    if (scope && !scope.has(indexed.entry.id)) throw unknownTool(qualified, "out-of-scope");
    if (!this.#visible(indexed, undefined, hidden)) throw unknownTool(qualified);
    return indexed;
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
      result = await this.#send(
        await entry.ensure(),
        tool.name,
        args,
        timeoutMs,
        opts.signal,
        entry.id,
      );
    } catch (error) {
      const retryable =
        error instanceof McpPoolError &&
        error.code === "connection-lost" &&
        row.trustAnnotations === true &&
        (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true);
      if (!retryable) throw error;
      // A read cut off by a crash is safe to send again, once, to the restarted server.
      result = await this.#send(
        await entry.ensure({ ignoreBackoff: true }),
        tool.name,
        args,
        timeoutMs,
        opts.signal,
        entry.id,
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
    connection: Connection,
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    serverId: string,
  ): Promise<CallToolResult> {
    connection.inflight += 1;
    try {
      return (await connection.client.callTool({ name, arguments: args }, CallToolResultSchema, {
        ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}),
        ...(signal ? { signal } : {}),
      })) as CallToolResult;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        const ms = timeoutMs ?? 60_000;
        throw new McpPoolError(
          "timeout",
          `call to "${name}" on server "${serverId}" timed out after ${ms} ms`,
          {
            serverId,
            timeoutMs: ms,
          },
        );
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        throw new McpPoolError(
          "connection-lost",
          `server "${serverId}" closed the connection during the call to "${name}"`,
          {
            serverId,
          },
        );
      }
      if (error instanceof McpError) {
        throw new McpPoolError("tool-error", error.message, { serverId, mcpCode: error.code });
      }
      throw error;
    } finally {
      connection.inflight -= 1;
      if (connection.inflight === 0) connection.drained?.();
    }
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
    for (const listener of this.#eventListeners) {
      try {
        listener(event);
      } catch (error) {
        this.#log.error?.(`mcpool: an event listener threw: ${(error as Error).message}`);
      }
    }
  }

  #notify(serverId: string, notification: ServerNotification): void {
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
    await this.#queue.run(async () => {
      const entries = [...this.#entries.values()];
      for (const entry of entries) entry.removed = true;
      await Promise.all(
        entries.map(async (entry) => {
          await entry.close("shutdown");
          await entry.retired();
        }),
      );
      this.#entries.clear();
      this.#order = [];
      this.#index = undefined;
    });
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
