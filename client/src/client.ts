/**
 * PoolClient: the daemon's pool, seen from an agent (SPEC D3). One connection at a time;
 * `hello` first on each; when the daemon goes away, calls in flight fail at once with
 * `daemon-unavailable` and the client redials in the background, redoing hello and the
 * subscriptions. The socket keeps the process alive only while a call is pending, so an
 * agent that is done simply exits (esbuild's service does the same with reference counts).
 */
import { Connection } from "./connection.js";
import type { ConversationIdentity } from "./conversation-shapes.js";
import {
  conversationsClient,
  identified,
  type ConversationsClient,
  type IdentifiedClient,
} from "./conversations.js";
import { reachDaemon } from "./dial.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./codec.js";
import { McpPoolError } from "./errors.js";
import { defaultSocketPath } from "./paths.js";
import {
  PROTOCOL_VERSION,
  type CallParams,
  type HelloResult,
  type MethodName,
  type NotificationName,
  type ParamsOf,
  type ResultOf,
  type ServerNotificationParams,
} from "./protocol.js";
import type {
  CallToolResult,
  CatalogServer,
  ConfigStatus,
  DaemonStatus,
  HookContext,
  HookEvent,
  HookOutcome,
  PinInfo,
  PoolEvent,
  ProbeResult,
  ServerAuthState,
  ServerRow,
  ServerState,
  ToolDefinition,
  ToolDescription,
  UsageReport,
} from "./shapes.js";
import type {
  CompleteResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  LoggingLevel,
  ReadResourceResult,
} from "./mcp-shapes.js";
import type { CompleteParams, ElicitParams, ProgressParams, SampleParams } from "./protocol.js";
import {
  CallRouting,
  type ElicitHandler,
  type PassthroughOptions,
  type SampleHandler,
} from "./routing.js";

import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_AUTO_START_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  type ConnectOptions,
  type CallOptions,
  type RunHooksOptions,
  type EventListener,
  type NotificationListener,
  type PoolClient,
} from "./pool-client.js";

// First pause after a lost connection: a daemon restarted by its service manager needs a
// moment to bind, and ten redials a second cost nothing. Doubles up to the maximum.
const FIRST_RECONNECT_DELAY_MS = 100;

export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_AUTO_START_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  type ConnectOptions,
  type CallOptions,
  type RunHooksOptions,
  type EventListener,
  type NotificationListener,
  type PoolClient,
};

/** Connects to the daemon and exchanges hello. Fails with `daemon-unavailable` or `protocol-mismatch`. */
export async function connect(options: ConnectOptions): Promise<PoolClient> {
  const client = new SocketPoolClient(options);
  await client.start(options.signal);
  return client;
}

function defined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item;
  return out as T;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function report(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

class SocketPoolClient implements PoolClient {
  daemon: HelloResult | undefined;
  private readonly socketPath: string;
  private readonly clientName: string;
  private readonly autoStart: boolean;
  private readonly autoStartCommand: readonly string[];
  private readonly autoStartTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly maxReconnectDelayMs: number;
  private current: Connection | undefined;
  /** A connection still exchanging hello; closed with the client if it closes first. */
  private opening: Connection | undefined;
  private dialling: Promise<Connection> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = FIRST_RECONNECT_DELAY_MS;
  /** Redialling is for a daemon that went away; a first connect that fails just throws. */
  private connectedOnce = false;
  /** Calls in progress, dials they wait for included: the socket is ref'd while > 0. */
  private holds = 0;
  private closing: Promise<void> | undefined;
  private readonly eventListeners = new Set<EventListener>();
  private readonly notificationListeners = new Set<NotificationListener>();
  private readonly routing = new CallRouting();
  /** `<serverId>\0<uri>` of resource subscriptions, sent again after a redial. */
  private readonly resourceSubscriptions = new Set<string>();

  constructor(options: ConnectOptions) {
    this.socketPath = options.socketPath ?? defaultSocketPath();
    this.clientName = options.clientName;
    this.autoStart = options.autoStart ?? false;
    this.autoStartCommand = options.autoStartCommand ?? [];
    this.autoStartTimeoutMs = options.autoStartTimeoutMs ?? DEFAULT_AUTO_START_TIMEOUT_MS;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.maxReconnectDelayMs = options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS;
  }

  async start(signal: AbortSignal | undefined): Promise<void> {
    this.hold(1);
    try {
      await abortable(this.dial(true), signal);
    } catch (error) {
      await this.close();
      throw error;
    } finally {
      this.hold(-1);
    }
  }

  state(options: { secrets?: boolean; resources?: boolean } = {}): Promise<readonly ServerState[]> {
    return this.run(
      "pool/state",
      defined({ secrets: options.secrets, resources: options.resources }),
    );
  }

  usage(options: { since?: number; servers?: readonly string[] } = {}): Promise<UsageReport> {
    return this.run("pool/usage", defined({ since: options.since, servers: options.servers }));
  }

  tools(
    options: {
      names?: readonly string[];
      servers?: readonly string[];
      identity?: ConversationIdentity;
    } = {},
  ): Promise<readonly ToolDefinition[]> {
    const { names, servers, identity } = options;
    return this.run("tools/list", defined({ names, servers, identity }));
  }

  readonly conversations: ConversationsClient = conversationsClient((method, params, signal) =>
    this.run(method, params, signal),
  );

  withIdentity(identity: ConversationIdentity): IdentifiedClient {
    return identified(this, identity);
  }

  catalog(servers?: readonly string[]): Promise<readonly CatalogServer[]> {
    return this.run("tools/catalog", defined({ servers }));
  }

  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number } = {},
  ): Promise<readonly CatalogServer[]> {
    return this.run(
      "tools/search",
      defined({ query, servers: options.servers, limit: options.limit }),
    );
  }

  async describe(
    name: string,
    options: { servers?: readonly string[]; hidden?: boolean } = {},
  ): Promise<ToolDescription | undefined> {
    const params = defined({ name, servers: options.servers, hidden: options.hidden });
    return (await this.run("tools/describe", params)) ?? undefined;
  }

  alwaysLoaded(servers?: readonly string[]): Promise<readonly string[]> {
    return this.run("tools/always-loaded", defined({ servers }));
  }

  async runHooks(
    event: HookEvent,
    context: HookContext,
    options: RunHooksOptions = {},
  ): Promise<readonly HookOutcome[]> {
    let outcomes: readonly HookOutcome[];
    try {
      const params = defined({ event, context, servers: options.servers });
      outcomes = await this.run("hooks/run", params, options.signal);
    } catch {
      return [];
    }
    for (const outcome of outcomes) {
      if (outcome.ok || options.onNotice === undefined) continue;
      try {
        options.onNotice(outcome);
      } catch {
        // A host's logging bug must not cost the turn its other outcomes.
      }
    }
    return outcomes;
  }

  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions & { raw?: false },
  ): Promise<string>;
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions & { raw: true },
  ): Promise<CallToolResult>;
  async call(
    name: string,
    args?: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<string | CallToolResult> {
    const params: CallParams = defined({
      name,
      arguments: args,
      servers: options.servers,
      timeoutMs: options.timeoutMs,
      raw: options.raw,
      maxResultChars: options.maxResultChars,
      coerce: options.coerce,
      cache: options.cache,
      hidden: options.hidden,
      identity: options.identity,
      bindings: options.bindings === undefined ? undefined : { ...options.bindings },
    });
    const route = this.routing.open(options);
    try {
      const answer = await this.run(
        "tools/call",
        { ...params, ...route.params },
        options.signal,
        route.sent,
      );
      return "result" in answer ? answer.result : answer.text;
    } finally {
      route.close();
    }
  }

  onElicit(handler: ElicitHandler): () => void {
    this.routing.handler = handler;
    this.updateSubscription();
    return () => {
      if (this.routing.handler !== handler) return;
      this.routing.handler = undefined;
      this.updateSubscription();
    };
  }

  onSample(handler: SampleHandler): () => void {
    this.routing.sampler = handler;
    this.updateSubscription();
    return () => {
      if (this.routing.sampler !== handler) return;
      this.routing.sampler = undefined;
      this.updateSubscription();
    };
  }

  listResources(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListResourcesResult> {
    const params = defined({ serverId, cursor: options.cursor });
    return this.run("resources/list", params, options.signal);
  }

  listResourceTemplates(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListResourceTemplatesResult> {
    const params = defined({ serverId, cursor: options.cursor });
    return this.run("resources/templates/list", params, options.signal);
  }

  readResource(
    serverId: string,
    uri: string,
    options: PassthroughOptions = {},
  ): Promise<ReadResourceResult> {
    return this.run("resources/read", { serverId, uri }, options.signal);
  }

  async subscribeResource(serverId: string, uri: string): Promise<void> {
    await this.run("resources/subscribe", { serverId, uri });
    this.resourceSubscriptions.add(`${serverId}\0${uri}`);
  }

  async unsubscribeResource(serverId: string, uri: string): Promise<void> {
    this.resourceSubscriptions.delete(`${serverId}\0${uri}`);
    await this.run("resources/unsubscribe", { serverId, uri });
  }

  listPrompts(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListPromptsResult> {
    const params = defined({ serverId, cursor: options.cursor });
    return this.run("prompts/list", params, options.signal);
  }

  getPrompt(
    serverId: string,
    name: string,
    args?: Record<string, string>,
    options: PassthroughOptions = {},
  ): Promise<GetPromptResult> {
    return this.run("prompts/get", defined({ serverId, name, arguments: args }), options.signal);
  }

  complete(
    serverId: string,
    request: Omit<CompleteParams, "serverId">,
    options: PassthroughOptions = {},
  ): Promise<CompleteResult> {
    return this.run("completion/complete", { ...request, serverId }, options.signal);
  }

  async ping(serverId: string, options: PassthroughOptions = {}): Promise<void> {
    await this.run("server/ping", { serverId }, options.signal);
  }

  async setLoggingLevel(
    serverId: string,
    level: LoggingLevel,
    options: PassthroughOptions = {},
  ): Promise<void> {
    await this.run("logging/setLevel", { serverId, level }, options.signal);
  }

  probe(row: ServerRow): Promise<ProbeResult> {
    return this.run("server/probe", { row });
  }

  async stop(id: string): Promise<void> {
    await this.run("server/stop", { id });
  }

  async reconnect(id: string): Promise<void> {
    await this.run("server/reconnect", { id });
  }

  pinInfo(id: string): Promise<PinInfo> {
    return this.run("server/pin-info", { id });
  }

  approve(id: string, fingerprint: string): Promise<PinInfo> {
    return this.run("server/approve", { id, fingerprint });
  }

  storeCredentials(
    id: string,
    credentials: { tokens: Record<string, unknown>; clientInformation?: Record<string, unknown> },
  ): Promise<ServerAuthState> {
    return this.run(
      "auth/store",
      defined({ id, tokens: credentials.tokens, clientInformation: credentials.clientInformation }),
    );
  }

  forgetCredentials(id: string): Promise<ServerAuthState> {
    return this.run("auth/forget", { id });
  }

  reload(): Promise<ConfigStatus> {
    return this.run("pool/reload", {});
  }

  status(options: { resources?: boolean } = {}): Promise<DaemonStatus> {
    return this.run("daemon/status", defined({ resources: options.resources }));
  }

  async shutdown(): Promise<void> {
    await this.run("daemon/shutdown", {});
  }

  onEvent(listener: EventListener): () => void {
    this.eventListeners.add(listener);
    this.updateSubscription();
    return () => {
      if (this.eventListeners.delete(listener)) this.updateSubscription();
    };
  }

  onNotification(listener: NotificationListener): () => void {
    this.notificationListeners.add(listener);
    this.updateSubscription();
    return () => {
      if (this.notificationListeners.delete(listener)) this.updateSubscription();
    };
  }

  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const error = new McpPoolError("closed", "the client was closed");
    const connections = [this.current, this.opening].filter((c) => c !== undefined);
    this.current = undefined;
    this.opening = undefined;
    this.daemon = undefined;
    this.closing = Promise.all(connections.map((c) => c.close(error))).then(() => undefined);
    return this.closing;
  }

  private closedError(): McpPoolError {
    return new McpPoolError("closed", "the client was closed");
  }

  private async run<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
    onId?: (id: number) => void,
  ): Promise<ResultOf<M>> {
    if (this.closing !== undefined) throw this.closedError();
    if (signal?.aborted) throw signal.reason;
    this.hold(1);
    try {
      const current = this.current;
      const connection =
        current !== undefined && current.isOpen
          ? current
          : await abortable(this.dial(true), signal);
      return await connection.request(method, params, signal, onId);
    } finally {
      this.hold(-1);
    }
  }

  private hold(delta: 1 | -1): void {
    const before = this.holds > 0;
    this.holds += delta;
    const after = this.holds > 0;
    if (before === after) return;
    this.current?.setRef(after);
    this.opening?.setRef(after);
  }

  /** The one dial in progress, or a new one. `user`: a caller waits on it (autoStart applies). */
  private dial(user: boolean): Promise<Connection> {
    const starts = user && this.autoStart;
    if (this.dialling !== undefined) {
      // A background redial never starts a daemon: a caller who may start one dials again
      // itself when it fails (after its handlers below have cleared `dialling`).
      return starts ? this.dialling.catch(() => this.dial(true)) : this.dialling;
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const attempt = starts ? this.dialStarting() : this.dialOnce(user);
    this.dialling = attempt;
    attempt.then(
      () => {
        this.dialling = undefined;
        this.retryDelayMs = FIRST_RECONNECT_DELAY_MS;
      },
      () => {
        this.dialling = undefined;
        this.scheduleRedial();
      },
    );
    return attempt;
  }

  /**
   * A dial that may start the daemon. A daemon dying as we dial can accept the connect and
   * reset it before its hello; a reset or an end (not a hello that ran out of time) is
   * dialled once more, which finds the socket refused and starts a daemon (F5).
   */
  private async dialStarting(): Promise<Connection> {
    try {
      return await this.dialOnce(true);
    } catch (error) {
      const reset =
        error instanceof McpPoolError &&
        error.code === "daemon-unavailable" &&
        error.detail.timeoutMs === undefined;
      if (!reset || this.closing !== undefined) throw error;
      return this.dialOnce(true);
    }
  }

  private async dialOnce(user: boolean): Promise<Connection> {
    const socket = await reachDaemon(
      this.socketPath,
      { timeoutMs: this.connectTimeoutMs, ref: this.holds > 0 },
      user && this.autoStart
        ? { command: this.autoStartCommand, timeoutMs: this.autoStartTimeoutMs }
        : undefined,
    );
    if (this.closing !== undefined) {
      socket.destroy();
      throw this.closedError();
    }
    const connection: Connection = new Connection(socket, this.maxFrameBytes, {
      onNotification: (name, params) => this.dispatch(name, params),
      // The daemon's requests (`elicit`, `sample`) are for a call this client has in flight.
      onRequest: (name, params, signal) =>
        name === "sample"
          ? this.routing.sample(params as SampleParams, signal)
          : this.routing.elicit(params as ElicitParams, signal),
      onClose: () => this.lost(connection),
    });
    connection.setRef(this.holds > 0);
    this.opening = connection;
    const timer = setTimeout(() => {
      void connection.close(
        new McpPoolError(
          "daemon-unavailable",
          `the daemon at ${this.socketPath} did not answer hello within ${this.connectTimeoutMs} ms`,
          { socketPath: this.socketPath, timeoutMs: this.connectTimeoutMs },
        ),
      );
    }, this.connectTimeoutMs);
    timer.unref();
    try {
      const hello = await connection.request("hello", {
        protocolVersion: PROTOCOL_VERSION,
        clientName: this.clientName,
        pid: process.pid,
      });
      if (hello.protocolVersion !== PROTOCOL_VERSION) {
        throw new McpPoolError(
          "protocol-mismatch",
          `the daemon at ${this.socketPath} speaks protocol ${hello.protocolVersion}, this client ${PROTOCOL_VERSION}: upgrade the older one`,
          { expected: PROTOCOL_VERSION, received: hello.protocolVersion },
        );
      }
      await this.syncSubscription(connection);
      if (this.closing !== undefined) throw this.closedError();
      this.daemon = hello;
    } catch (error) {
      await connection.close(
        error instanceof McpPoolError
          ? error
          : new McpPoolError("daemon-unavailable", "the hello exchange failed"),
      );
      throw error;
    } finally {
      clearTimeout(timer);
      if (this.opening === connection) this.opening = undefined;
    }
    this.current = connection;
    this.connectedOnce = true;
    // A listener added while hello was in flight is not in what syncSubscription sent.
    this.updateSubscription();
    this.resubscribeResources(connection);
    return connection;
  }

  /** A new connection: the daemon forgot the old one's resource subscriptions. */
  private resubscribeResources(connection: Connection): void {
    for (const key of this.resourceSubscriptions) {
      const [serverId, uri] = key.split("\0") as [string, string];
      connection.request("resources/subscribe", { serverId, uri }).catch(() => undefined);
    }
  }

  /** A connection closed: its calls have failed; redial unless it was never current or we closed. */
  private lost(connection: Connection): void {
    if (this.current !== connection) return;
    this.current = undefined;
    this.daemon = undefined;
    this.scheduleRedial();
  }

  private scheduleRedial(): void {
    if (!this.connectedOnce || this.closing !== undefined || this.retryTimer !== undefined) return;
    if (this.dialling !== undefined || this.current !== undefined) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(delay * 2, this.maxReconnectDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A failed background dial schedules the next one itself (dial()).
      this.dial(false).catch(() => undefined);
    }, delay);
    this.retryTimer.unref();
  }

  private wanted(): { events: boolean; notifications: boolean; elicit: boolean; sample: boolean } {
    return {
      events: this.eventListeners.size > 0,
      notifications: this.notificationListeners.size > 0,
      elicit: this.routing.handler !== undefined,
      sample: this.routing.sampler !== undefined,
    };
  }

  private async syncSubscription(connection: Connection): Promise<void> {
    const want = this.wanted();
    const had = connection.subscribed;
    if (
      want.events === had.events &&
      want.notifications === had.notifications &&
      want.elicit === had.elicit &&
      want.sample === had.sample
    )
      return;
    connection.subscribed = want;
    try {
      await connection.request("pool/subscribe", want);
    } catch (error) {
      // Not subscribed after all: the next change (or the next connection) sends it again.
      if (connection.subscribed === want) connection.subscribed = had;
      throw error;
    }
  }

  private updateSubscription(): void {
    const connection = this.current;
    if (connection === undefined) return; // the next dial subscribes
    this.syncSubscription(connection).catch(() => undefined);
  }

  private dispatch(name: NotificationName, params: unknown): void {
    if (typeof params !== "object" || params === null) return;
    if (name === "event") {
      const event = params as PoolEvent;
      if (typeof event.type !== "string") return;
      for (const listener of [...this.eventListeners]) {
        try {
          listener(event);
        } catch (error) {
          report(error);
        }
      }
    } else if (name === "progress") {
      const { progressToken, ...progress } = params as ProgressParams;
      const listener = this.routing.progressListener(progressToken);
      if (listener === undefined || typeof progress.progress !== "number") return;
      try {
        listener(progress);
      } catch (error) {
        report(error);
      }
    } else {
      const { serverId, notification } = params as ServerNotificationParams;
      if (
        typeof serverId !== "string" ||
        typeof notification !== "object" ||
        notification === null
      ) {
        return;
      }
      for (const listener of [...this.notificationListeners]) {
        try {
          listener(serverId, notification);
        } catch (error) {
          report(error);
        }
      }
    }
  }
}
