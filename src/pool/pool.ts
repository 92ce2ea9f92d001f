/**
 * McpPool: long-lived MCP connections to stdio and Streamable HTTP servers, reconciled
 * against a list of rows, with their tools exposed to an agent loop as `<slug>__<tool>`.
 *
 * A facade: the reconciler (reconciler.ts) owns the servers and the queue, the catalog
 * (catalog.ts) answers what is offered, the pin gate (pin-gate.ts) withholds what moved
 * since it was approved, and the call pipeline (calls/pipeline.ts) sends calls; a server's
 * connection, crash handling and backoff live in its ServerEntry. The parts and their
 * callbacks are built in pool-parts.ts; each method here delegates.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpClient } from "./mcp/client.js";
import type { McpServerConfig } from "../config/rows.js";
import type { HookContext, HookEvent, HookOutcome } from "../config/hooks.js";

import type { CatalogServer } from "./catalog/catalog.js";
import type { ConversationRegistry } from "./conversations/registry.js";
import type {
  PassthroughArgs,
  PassthroughMethod,
  PassthroughResult,
} from "./calls/server-passthrough.js";
import type { ResourceListener } from "./calls/server-passthrough.js";
import type { Subscriptions } from "./calls/subscriptions.js";

/** What a hand-over does with the pool's resource subscriptions (McpPool.handedSubscriptions). */
export type HandoverSubscriptions = Pick<
  Subscriptions,
  | "holdSubscriptions"
  | "unholdSubscriptions"
  | "handedSubscriptions"
  | "expectSubscriptions"
  | "adoptSubscriptions"
>;
import { poolParts, type PoolParts } from "./pool-parts.js";
import type { NotificationListener } from "./pool-events.js";
import {
  handOff,
  handOffSessions,
  type AdoptedConversation,
  type AdoptedProfile,
  type HandedHttpOff,
  type HandedOff,
  type OpenedConversation,
} from "./server/handoff.js";
import { READY_WAIT_MS } from "./reconcile/reconciler.js";
import { runHooks, type HookHost, type RunHooksOptions } from "./calls/hooks.js";
import { holding, withSession } from "./server/session.js";
import type { CallOptions } from "./calls/options.js";
import type { LeftTask, TaskMethod, TaskOwner, TaskRequestOptions } from "./calls/tasks.js";
import type { MovedTask, TaskName, TaskPlace } from "./calls/moved-records.js";
import { isProfileEntry } from "./server/profile-entry.js";
import type {
  PinInfo,
  PoolEvent,
  ProbeResult,
  ServerAuthState,
  ServerState,
  ToolDefinition,
  ToolDescription,
} from "./core/types.js";
import type { McpPoolOptions } from "./pool-options.js";
import type { HostProfile } from "mcpool-protocol";

export type { CatalogServer, McpPoolOptions };

export class McpPool {
  /** The parts and the callbacks between them: pool-parts.ts. */
  readonly #parts: PoolParts;
  /** What the hook runner calls through: this pool's rows and call(). */
  readonly #hooks: HookHost = {
    rows: () => this.#parts.servers.entries().map((entry) => entry.row),
    call: (name, input, options) => this.call(name, input, options),
  };

  constructor(options: McpPoolOptions) {
    this.#parts = poolParts(options);
  }

  /** The `session: "conversation"` rows' clients: leases, terminate(), listings, stats(). */
  get conversations(): ConversationRegistry {
    return this.#parts.conversations;
  }

  /** A 2025-11-25 host's project children, opened ahead of its roots (prepared-children.ts). */
  get profiles(): Pick<PoolParts["profiles"], "prepare" | "release"> {
    return this.#parts.profiles;
  }

  // ── Reconcile (reconciler.ts) ────────────────────────────────────────────────────

  /**
   * Reconciles against `configs`, or against `load()` when given nothing. Runs on the
   * queue: never beside another reconcile. `sync([])` closes everything.
   */
  sync(configs?: readonly McpServerConfig[]): Promise<void> {
    return this.#parts.servers.sync(configs);
  }

  /** A sync() after the debounce; calls within it share one reconcile. */
  syncSoon(): Promise<void> {
    return this.#parts.servers.syncSoon();
  }

  /**
   * Resolves once the first reconcile has finished — every eager server connected or
   * failed — or after `timeoutMs` (default {@link READY_WAIT_MS}), whichever comes first;
   * at once when no sync was asked for yet. Never rejects. A listing made before it would
   * miss the servers still starting; call() waits for it by itself.
   */
  ready(timeoutMs = READY_WAIT_MS): Promise<void> {
    return this.#parts.servers.ready(timeoutMs);
  }

  /** Reconciler.handingOver(): a hand-over as one turn of the queue; resolved, no reconcile after. */
  handingOver<T>(work: () => Promise<T>): Promise<T> {
    return this.#parts.servers.handingOver(work);
  }

  /** Runs a pending syncSoon() now and waits for the queue to drain. */
  flush(): Promise<void> {
    return this.#parts.servers.flush();
  }

  /** Closes one server's connection and keeps its row: `idle`, no error, no backoff. */
  async stop(id: string): Promise<void> {
    await Promise.all([this.#parts.profiles.end(id), this.#parts.servers.stop(id)]);
  }

  /** Closes one server's connection and dials it again, changed or not. */
  async reconnect(id: string): Promise<void> {
    await Promise.all([this.#parts.profiles.end(id), this.#parts.servers.reconnect(id)]);
  }

  /** Replaces a server whose process group is over its `maxMemoryMb` (monitor.ts). */
  replaceOverMemory(id: string, rssBytes: number, limitMb: number): Promise<void> {
    this.#parts.events.emit({ type: "over-memory", serverId: id, rssBytes, limitMb });
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
    this.#parts.assertOpen();
    return this.#parts.auth.storeCredentials(id, credentials);
  }

  /** Forgets what a sign-in left for an http server (`mcpool logout`) and dials it again. */
  forgetCredentials(id: string): Promise<ServerAuthState> {
    this.#parts.assertOpen();
    return this.#parts.auth.forgetCredentials(id);
  }

  // ── One server's protocol (server-passthrough.ts) ────────────────────────────────

  /** Dials a row that need not be saved, lists its tools and hangs up. Never throws. */
  probe(row: McpServerConfig): Promise<ProbeResult> {
    return this.#parts.probe(row);
  }

  /**
   * The connected client of one server, for what call() does not carry: the SDK Client's
   * request methods (listResources, readResource, getPrompt, request…), results as the
   * server sent them unless a schema is passed. Starts an idle
   * server; refuses a disabled or unknown one (`disabled`, `unknown-server`). A client held
   * past a session loss is refused by the server; use() handles that.
   */
  async client(id: string): Promise<McpClient> {
    this.#parts.assertOpen();
    return (await this.#parts.servers.entry(id).ensure()).client;
  }

  /**
   * `run` with the server's connected client, counted as a use. When the remote has
   * forgotten the session the server is redialled once and `run` called again with
   * the new client; any other failure is passed through.
   */
  async use<T>(id: string, run: (client: McpClient) => Promise<T>): Promise<T> {
    this.#parts.assertOpen();
    const entry = this.#parts.servers.entry(id);
    return withSession(entry, (connection) => holding(connection, () => run(connection.client)));
  }

  /**
   * Sends one MCP request that call() does not carry to server `id`: resources,
   * prompts, completion, logging/setLevel, ping. Refused with `not-offered` where the
   * server's capabilities lack the surface; otherwise as use(). See server-passthrough.ts.
   */
  async request<M extends PassthroughMethod>(
    id: string,
    method: M,
    ...[params, options]: PassthroughArgs<M>
  ): Promise<PassthroughResult<M>> {
    this.#parts.assertOpen();
    return this.#parts.passthrough.request(id, method, params, options);
  }

  /**
   * `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel` to server `id` for the host
   * `owner` (the key its task-augmented calls named): to the connection that created the
   * task, and only the owner's tasks. See calls/tasks.ts.
   */
  async task(
    id: string,
    method: TaskMethod,
    params: Record<string, unknown>,
    owner: string | TaskOwner,
    options: TaskRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    this.#parts.assertOpen();
    return this.#parts.tasks.request(id, method, params, owner, options);
  }

  /**
   * The task records that move with the servers to a new daemon (a row's own child's, a
   * host profile's child's); until resumeTasks(), a host that goes cancels nothing here.
   */
  handOffTasks(): MovedTask[] {
    const { servers, tasks } = this.#parts;
    return tasks.handOff((entry) => {
      if (servers.find(entry.id) === entry) return {};
      return isProfileEntry(entry) ? { profileKey: entry.key } : undefined;
    });
  }

  /** A hand-over begins: from now on a host that goes changes no task record (all move). */
  holdTasks(): void {
    this.#parts.tasks.holdReleases();
  }

  /**
   * The hand-over failed: the task records are this pool's again; those of a named host that
   * was disconnected are kept for it by name (a live one holds its child for `holdMs`).
   */
  resumeTasks(holdMs: number): void {
    this.#parts.tasks.resume(holdMs);
  }

  /**
   * The task records a previous daemon hands over, known before this pool serves: a host's
   * `tasks/*` that may be about one waits for adoptTasks(); the first that does calls `onWait`.
   */
  expectTasks(moved: readonly MovedTask[], onWait?: () => void): void {
    this.#parts.tasks.expect(moved, onWait);
  }

  /** The adoption failed (`why`): no task record is taken up; who waited for one is told. */
  forgoTasks(why: string): void {
    this.#parts.tasks.forgo(why);
  }

  /** Takes up a previous daemon's task records (an unclaimed live one holds its child `holdMs`): those left, each with why. */
  adoptTasks(moved: readonly MovedTask[], holdMs: number): LeftTask[] {
    const { servers, profiles, tasks } = this.#parts;
    const place: TaskPlace = (id, key) =>
      key === undefined ? servers.find(id) : profiles.child(id, key);
    return tasks.adopt(moved, place, holdMs);
  }

  /** Host `owner` is gone (`disconnected`: its connection closed): its live tasks cancelled. */
  releaseTasks(owner: string | TaskOwner, disconnected = false): Promise<void> {
    return this.#parts.tasks.release(owner, disconnected);
  }

  /** Host `name`'s tasks by its ids (`naming` one first), once its moved ones are taken up. */
  taskNames(name: string, naming?: TaskName): Promise<TaskName[]> {
    return this.#parts.tasks.names(name, naming);
  }

  /**
   * Listens to server `id`'s `notifications/resources/updated` for `uri`, subscribing
   * upstream for the first listener; the last one to stop unsubscribes upstream. `name`: the
   * host the listener is for, whose place a hand-over keeps for that name alone. `profile`:
   * that host's, whose requests go to the row's child for it: the subscription is held there.
   */
  async subscribeResource(
    id: string,
    uri: string,
    listener: ResourceListener,
    name?: string,
    profile?: HostProfile,
  ): Promise<() => Promise<void>> {
    this.#parts.assertOpen();
    return this.#parts.passthrough.subscribe(id, uri, listener, name, profile);
  }

  // ── What the pool offers (catalog.ts) ────────────────────────────────────────────

  /** Every configured server, in configuration order. Secrets only when asked for. */
  state(options: { secrets?: boolean } = {}): ServerState[] {
    return this.#parts.catalog.state(options);
  }

  /**
   * OpenAI-shaped definitions: configuration order, then each server's order; frozen.
   * `servers` absent = every server, empty = none. Hidden tools are left out.
   */
  tools(
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): ToolDefinition[] {
    return this.#parts.catalog.tools(options);
  }

  /**
   * Lists again each live tool list in scope (`servers`, absent = all) whose server's cache
   * hint (`ttlMs`) ran out, so a tools() or describe() that follows is fresh.
   * Resolves at once when none has; an idle pool is never woken for it. hostTools() and
   * call() do this by themselves.
   */
  fresh(servers?: readonly string[]): Promise<void> {
    this.#parts.assertOpen();
    return this.#parts.catalog.fresh(servers);
  }

  /**
   * tools() as a host with `profile` would list them direct: each row served
   * by its child for that profile, started for this listing when it has never listed.
   */
  async hostTools(
    profile: HostProfile,
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): Promise<ToolDefinition[]> {
    this.#parts.assertOpen();
    await this.#parts.servers.ready();
    return this.#parts.profiles.tools(profile, options);
  }

  /** Every tool's name and description per server, no schemas. Connects nothing. */
  catalog(servers?: readonly string[]): CatalogServer[] {
    return this.#parts.catalog.catalog(servers);
  }

  /** catalog() cut to the `limit` (default 20) best matches for `query`. Connects nothing. */
  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number } = {},
  ): CatalogServer[] {
    return this.#parts.catalog.search(query, options);
  }

  /** Qualified names of the rows' `alwaysLoad` tools that tools() would hand out. */
  alwaysLoaded(servers?: readonly string[]): string[] {
    return this.#parts.catalog.alwaysLoaded(servers);
  }

  /** What a definition has no room for; undefined where call() would refuse. Connects nothing. */
  describe(
    qualified: string,
    options: { servers?: readonly string[]; hidden?: boolean; profile?: HostProfile } = {},
  ): ToolDescription | undefined {
    const { profile, ...rest } = options;
    if (profile !== undefined) return this.#parts.profiles.describe(profile, qualified, rest);
    return this.#parts.catalog.describe(qualified, rest);
  }

  // ── Pinning (pin-gate.ts) ────────────────────────────────────────────────────────

  /** What a person approving a server's tools is shown; dials an idle server for a live list. */
  async pinInfo(id: string): Promise<PinInfo> {
    this.#parts.assertOpen();
    return this.#parts.pins.info(this.#parts.servers.entry(id));
  }

  /** Records that a person approved the live list hashing to `fingerprint` (`pin-mismatch` if it moved). */
  async approve(id: string, fingerprint: string): Promise<PinInfo> {
    this.#parts.assertOpen();
    return this.#parts.pins.approve(this.#parts.servers.entry(id), fingerprint);
  }

  // ── Calls (calls/pipeline.ts) ────────────────────────────────────────────────────

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
    return this.#parts.calls.call(qualified, input, opts);
  }

  /**
   * Runs the hooks rows attach to `event` as calls of their (possibly hidden) tools.
   * Parallel, bounded, outcomes in configuration order; never rejects. See calls/hooks.ts.
   */
  runHooks(
    event: HookEvent,
    context: HookContext,
    options: RunHooksOptions = {},
  ): Promise<HookOutcome[]> {
    return runHooks(this.#hooks, event, context, options);
  }

  // ── Events and notifications (pool-events.ts) ────────────────────────────────────

  /** Listens to what the pool does, as data. Returns the unsubscribe function. */
  onEvent(listener: (event: PoolEvent) => void): () => void {
    return this.#parts.events.onEvent(listener);
  }

  /** Listens to what servers send: the server's id, and which of its connections sent it. */
  onNotification(listener: NotificationListener): () => void {
    return this.#parts.events.onNotification(listener);
  }

  /**
   * Listens to the set of servers: called with their ids, in configuration order, when a
   * reconcile (or the close) added, removed or reordered rows — and never for a call.
   */
  onServersChanged(listener: (ids: readonly string[]) => void): () => void {
    return this.#parts.events.onServersChanged(listener);
  }

  // ── Shutdown ─────────────────────────────────────────────────────────────────────

  /** Closes every server and forgets them; the pool refuses everything afterwards. Idempotent. */
  shutdown(): Promise<void> {
    return this.#parts.shutdown();
  }

  // ── Hand-over to another daemon (server/handoff.ts) ─────────────────────────────

  /**
   * Stops reading every live stdio child, once its calls settle (within `drainMs`), and
   * says what another process needs to go on with each. Then releaseHandedOff() or
   * resumeHandedOff() with the same list.
   */
  handOff(drainMs: number): Promise<HandedOff[]> {
    const rows = this.#parts.servers.entries().map((entry) => ({ entry }));
    const { profiles, conversations } = this.#parts;
    return handOff([...rows, ...profiles.handable(), ...conversations.handable()], drainMs);
  }

  /**
   * The live http sessions (a row's own, a host profile's, a conversation's), once their calls
   * settle (within `drainMs`): see handOffSessions(). Then release or resume the same list.
   */
  handOffSessions(drainMs: number): Promise<HandedHttpOff[]> {
    const rows = this.#parts.servers.entries().map((entry) => ({ entry }));
    const { profiles, conversations } = this.#parts;
    return handOffSessions([...rows, ...profiles.handable(), ...conversations.handable()], drainMs);
  }

  /**
   * Takes up the host profiles' children a previous daemon handed over (each dialled over
   * its fds, as its row's own is by the reconcile); resolves once each is up or failed.
   */
  adoptProfileChildren(children: readonly AdoptedProfile[]): Promise<void> {
    return this.#parts.profiles.adopt(children);
  }

  /**
   * Takes up the conversations' children a previous daemon handed over, as above; resolves
   * with each child whose conversation's client opened, and its pid.
   */
  adoptConversationChildren(
    children: readonly AdoptedConversation[],
  ): Promise<OpenedConversation[]> {
    return this.#parts.conversations.adopt(children);
  }

  /**
   * The upstream resource subscriptions across a hand-over (server-passthrough.ts): the old
   * daemon holds them (a listener that leaves is kept, nothing is unsubscribed) and hands the
   * live ones on; the new one adopts those of the connections it took over, and each awaits
   * the kept listeners until their deadline.
   */
  get handedSubscriptions(): HandoverSubscriptions {
    return this.#parts.passthrough.subscriptions;
  }

  /** shutdown() under its Node-style name. */
  close(): Promise<void> {
    return this.shutdown();
  }
}

function isScope(value: unknown): value is readonly string[] {
  return Array.isArray(value);
}
