/**
 * PoolClient over the socket: thin wrappers over `request()`, each turning its positional
 * arguments into one method's params as the protocol's descriptors type them. The link
 * (daemon-link.ts) dials, starts, says hello, redials and counts references; subscriptions.ts
 * keeps what the daemon pushes; routing.ts answers the daemon's requests for a call in flight.
 */
import {
  type CallParams,
  type CallToolResult,
  type CatalogServer,
  type CompleteParams,
  type CompleteResult,
  type Caller,
  callerProblem,
  McpPoolError,
  type CallerInfo,
  type ConfigStatus,
  type ConversationIdentity,
  type HostProfile,
  type DaemonStatus,
  type HandoverResult,
  DEFAULT_MAX_FRAME_BYTES,
  CALL_VALUE_PARAMS,
  defined,
  type ElicitParams,
  type GetPromptResult,
  type HelloResult,
  type HookContext,
  type HookEvent,
  type HookOutcome,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type LoggingLevel,
  type MethodName,
  type ParamsOf,
  type PinInfo,
  type ProbeResult,
  type ReadResourceResult,
  type ResultOf,
  type SampleParams,
  type RootsParams,
  type ServerAuthState,
  type ServerRow,
  type ServerState,
  type ToolDefinition,
  type ToolDescription,
  type UsageReport,
} from "mcpool-protocol";
import { conversationsClient, identified } from "./conversations.js";
import { DaemonLink } from "./daemon-link.js";
import { defaultDaemonCommand } from "./daemon-start.js";
import { ownSocketPath } from "./paths.js";
import {
  CallRouting,
  type AskingOptions,
  type ElicitHandler,
  type PassthroughOptions,
  type SampleHandler,
} from "./routing.js";
import { resourceParams, Subscriptions, type HostOption } from "./subscriptions.js";

import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_AUTO_START_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  type ConnectOptions,
  type CallOptions,
  type ConversationsClient,
  type DescribeOptions,
  type IdentifiedClient,
  type RunHooksOptions,
  type EventListener,
  type EventOptions,
  type NotificationListener,
  type PoolClient,
  type Credentials,
} from "./pool-client.js";
import { TaskRequests } from "./tasks.js";
import { ProfileRequests } from "./profiles.js";

/** Connects to the daemon and exchanges hello. Fails with `daemon-unavailable` or `protocol-mismatch`. */
export async function connect(options: ConnectOptions): Promise<PoolClient> {
  // Refused here rather than by the daemon on every call it would ride.
  const problem = callerProblem(defined({ clientInfo: options.clientInfo }));
  if (problem !== undefined) throw new McpPoolError("invalid-arguments", problem);
  const client = new SocketPoolClient(options);
  await client.start(options.signal);
  return client;
}

class SocketPoolClient implements PoolClient {
  private readonly routing = new CallRouting();
  private readonly link: DaemonLink;
  private readonly subscriptions: Subscriptions;
  private readonly reconnectListeners = new Set<(daemon: HelloResult) => void>();
  /** Connections that became current so far: every one after the first is a reconnect. */
  private connections = 0;
  /** The agent's own clientInfo (ConnectOptions), named in each request's caller. */
  private readonly clientInfo: CallerInfo | undefined;

  constructor(options: ConnectOptions) {
    this.clientInfo = options.clientInfo;
    this.subscriptions = new Subscriptions(this.routing, () => this.link.connection);
    this.link = new DaemonLink(
      {
        socketPath: ownSocketPath(options.socketPath),
        clientName: options.clientName,
        autoStart:
          options.autoStart === true
            ? {
                command: options.autoStartCommand ?? defaultDaemonCommand(),
                timeoutMs: options.autoStartTimeoutMs ?? DEFAULT_AUTO_START_TIMEOUT_MS,
                ...(options.onAutoStart ? { spawned: options.onAutoStart } : {}),
              }
            : undefined,
        maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        maxReconnectDelayMs: options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS,
        reconnectWaitMs: options.reconnectWaitMs ?? 0,
      },
      {
        onNotification: (name, params) => this.subscriptions.dispatch(name, params),
        // The daemon's requests (`elicit`, `sample`) are for a call this client has in flight.
        onRequest: (name, params, signal) =>
          name === "sample"
            ? this.routing.sample(params as SampleParams, signal)
            : name === "roots"
              ? this.routing.roots(params as RootsParams, signal)
              : this.routing.elicit(params as ElicitParams, signal),
        prepare: (connection) => this.subscriptions.sync(connection),
        ready: (connection) => {
          this.subscriptions.ready(connection);
          const hello = this.link.daemon;
          if (this.connections++ === 0 || hello === undefined) return;
          for (const listener of [...this.reconnectListeners]) {
            try {
              listener(hello);
            } catch (error) {
              process.nextTick(() => {
                throw error;
              });
            }
          }
        },
      },
    );
  }

  get daemon(): HelloResult | undefined {
    return this.link.daemon;
  }

  start(signal: AbortSignal | undefined): Promise<void> {
    return this.link.start(signal);
  }

  request<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    options: { signal?: AbortSignal } = {},
  ): Promise<ResultOf<M>> {
    return this.run(method, params, options.signal);
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
      profile?: HostProfile;
    } = {},
  ): Promise<readonly ToolDefinition[]> {
    const { names, servers, identity, profile } = options;
    return this.run("tools/list", defined({ names, servers, identity, profile }));
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
    options: DescribeOptions = {},
  ): Promise<ToolDescription | undefined> {
    const { servers, hidden, profile, identity } = options;
    const params = defined({ name, servers, hidden, profile, identity });
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
    // Only what the call gave, in the wire's order: no 15-key object copied per call.
    const params: CallParams = { name };
    if (args !== undefined) params.arguments = args;
    const given: Partial<Record<keyof CallParams, unknown>> = params;
    for (const key of CALL_VALUE_PARAMS) if (options[key] !== undefined) given[key] = options[key];
    if (options.profile !== undefined) params.profile = options.profile;
    if (options.bindings !== undefined) params.bindings = { ...options.bindings };
    if (options.meta !== undefined) params.meta = { ...options.meta };
    const caller = this.#caller(options.caller);
    if (caller !== undefined) params.caller = caller;
    if (options.task !== undefined) {
      params.task = options.task;
      params.taskOwner = options.taskOwner ?? this.tasks.owner;
    } else if (options.taskOwner !== undefined) params.taskOwner = options.taskOwner;
    const route = this.routing.open(options);
    try {
      const answer = await this.run(
        "tools/call",
        Object.assign(params, route.params),
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
    this.subscriptions.update();
    return () => {
      if (this.routing.handler !== handler) return;
      this.routing.handler = undefined;
      this.subscriptions.update();
    };
  }

  onSample(handler: SampleHandler): () => void {
    this.routing.sampler = handler;
    this.subscriptions.update();
    return () => {
      if (this.routing.sampler !== handler) return;
      this.routing.sampler = undefined;
      this.subscriptions.update();
    };
  }

  listResources(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListResourcesResult> {
    const params = defined({ serverId, cursor: options.cursor, profile: options.profile });
    return this.run("resources/list", params, options.signal);
  }

  listResourceTemplates(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListResourceTemplatesResult> {
    const params = defined({ serverId, cursor: options.cursor, profile: options.profile });
    return this.run("resources/templates/list", params, options.signal);
  }

  readResource(
    serverId: string,
    uri: string,
    options: AskingOptions = {},
  ): Promise<ReadResourceResult> {
    return this.#asking("resources/read", { serverId, uri }, options);
  }

  /** A request's caller: its own, else this client's clientInfo (connect()), else none. */
  #caller(caller: Caller | undefined): Caller | undefined {
    if (caller?.clientInfo !== undefined || this.clientInfo === undefined) return caller;
    return { ...caller, clientInfo: this.clientInfo };
  }

  /** A passthrough request whose server may ask inside it: its questions to `options`' handlers. */
  async #asking<M extends "resources/read" | "prompts/get">(
    method: M,
    params: ParamsOf<M>,
    options: AskingOptions,
  ): Promise<ResultOf<M>> {
    const route = this.routing.open(options);
    const caller = this.#caller(options.caller);
    try {
      return await this.run(
        method,
        {
          ...params,
          ...route.params,
          ...(caller !== undefined ? { caller } : {}),
          ...(options.profile !== undefined ? { profile: options.profile } : {}),
        },
        options.signal,
        route.sent,
      );
    } finally {
      route.close();
    }
  }

  async subscribeResource(serverId: string, uri: string, host: HostOption = {}): Promise<void> {
    const params = resourceParams(serverId, uri, host);
    await this.run("resources/subscribe", params);
    this.subscriptions.resources.add(JSON.stringify(params));
  }

  async unsubscribeResource(serverId: string, uri: string, host: HostOption = {}): Promise<void> {
    const params = resourceParams(serverId, uri, host);
    this.subscriptions.resources.delete(JSON.stringify(params));
    await this.run("resources/unsubscribe", params);
  }

  listPrompts(
    serverId: string,
    options: PassthroughOptions & { cursor?: string } = {},
  ): Promise<ListPromptsResult> {
    const params = defined({ serverId, cursor: options.cursor, profile: options.profile });
    return this.run("prompts/list", params, options.signal);
  }

  getPrompt(
    serverId: string,
    name: string,
    args?: Record<string, string>,
    options: AskingOptions = {},
  ): Promise<GetPromptResult> {
    return this.#asking("prompts/get", defined({ serverId, name, arguments: args }), options);
  }

  complete(
    serverId: string,
    request: Omit<CompleteParams, "serverId">,
    options: PassthroughOptions = {},
  ): Promise<CompleteResult> {
    const params = defined({ ...request, serverId, profile: options.profile });
    return this.run("completion/complete", params, options.signal);
  }

  async ping(serverId: string, options: PassthroughOptions = {}): Promise<void> {
    await this.run("server/ping", { serverId }, options.signal);
  }

  async setLoggingLevel(
    serverId: string,
    level: LoggingLevel,
    options: PassthroughOptions = {},
  ): Promise<void> {
    const params = defined({ serverId, level, profile: options.profile });
    await this.run("logging/setLevel", params, options.signal);
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

  storeCredentials(id: string, credentials: Credentials): Promise<ServerAuthState> {
    const { tokens, clientInformation, notice } = credentials;
    return this.run("auth/store", defined({ id, tokens, clientInformation, notice }));
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

  handover(): Promise<HandoverResult> {
    return this.run("daemon/handover", {});
  }

  onEvent(listener: EventListener, options: EventOptions = {}): () => void {
    return this.subscriptions.listenEvents(listener, options.types);
  }

  onNotification(listener: NotificationListener): () => void {
    return this.subscriptions.listen(this.subscriptions.notificationListeners, listener);
  }

  onReconnect(listener: (daemon: HelloResult) => void): () => void {
    this.reconnectListeners.add(listener);
    return () => void this.reconnectListeners.delete(listener);
  }

  readonly tasks = new TaskRequests((method, params, signal) => this.run(method, params, signal));

  readonly profiles = new ProfileRequests((method, params) => this.run(method, params));

  close(): Promise<void> {
    return this.link.close();
  }

  private run<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
    onId?: (id: number) => void,
  ): Promise<ResultOf<M>> {
    return this.link.request(method, params, signal, onId);
  }
}
