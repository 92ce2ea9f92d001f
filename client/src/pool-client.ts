/**
 * The PoolClient contract: what an agent holds once connected, its options and
 * its listeners. The implementation over the socket is client.ts; this file is the surface.
 */
import type { TaskRequests } from "./tasks.js";
import type { ProfileRequests } from "./profiles.js";
import type {
  CallerInfo,
  CallParams,
  CallToolResult,
  CatalogServer,
  CompleteParams,
  CompleteResult,
  ConfigStatus,
  ConversationIdentity,
  HostProfile,
  ConversationSelector,
  ConversationServerStats,
  ConversationTools,
  DaemonStatus,
  HandoverResult,
  GetPromptResult,
  HelloResult,
  HookContext,
  HookEvent,
  HookOutcome,
  ListPromptsResult,
  ListResourceTemplatesResult,
  ListResourcesResult,
  LoggingLevel,
  MethodName,
  ParamsOf,
  PinInfo,
  PoolEvent,
  ProbeResult,
  ReadResourceResult,
  ResultOf,
  ServerAuthState,
  ServerNotification,
  ServerRow,
  ServerState,
  TerminateResult,
  ToolDefinition,
  ToolDescription,
  UsageReport,
} from "mcpool-protocol";
import type {
  ElicitHandler,
  PassthroughOptions,
  ProgressListener,
  SampleHandler,
  RootsHandler,
  AskingOptions,
} from "./routing.js";

/** A hold on one conversation's client; the daemon lets go when this connection closes. */
export interface ConversationLeaseHandle extends AsyncDisposable {
  readonly leaseId: string;
  readonly serverId: string;
  readonly keyHash: string;
  /** Lets the client go; idempotent. */
  release(): Promise<void>;
}

export interface ConversationsClient {
  /**
   * Holds `identity`'s client on `serverId` — opening it if needed — until released, so it
   * is never evicted, swept or ended mid-turn. Refused at once (`pool-full`) when full.
   */
  acquire(
    serverId: string,
    identity: ConversationIdentity,
    options?: { signal?: AbortSignal },
  ): Promise<ConversationLeaseHandle>;
  /** The conversation's tools with a binding per row; refused rows are named, not thrown. */
  tools(
    identity: ConversationIdentity,
    options?: { servers?: readonly string[]; names?: readonly string[] },
  ): Promise<ConversationTools>;
  /** Ends remote sessions and reports each outcome (`resolved` only for the three good ones). */
  terminate(
    selector: ConversationSelector,
    options?: { servers?: readonly string[]; timeoutMs?: number },
  ): Promise<readonly TerminateResult[]>;
  /** Counts only, per conversation row. */
  stats(servers?: readonly string[]): Promise<readonly ConversationServerStats[]>;
  /** Every listing of the tenant (and the principal's own) is listed again before use. */
  permissionsChanged(selector?: { tenant?: string; principal?: string }): Promise<void>;
  /** Every listing of the rows (all when absent) is listed again before use. */
  toolsChanged(servers?: readonly string[]): Promise<void>;
}

/**
 * A tool call by its qualified name: the answer's text, or with `raw: true` the whole
 * CallToolResult.
 */
export interface ToolCaller {
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
}

/** A PoolClient's calls and listings for one conversation. */
export interface IdentifiedClient extends ToolCaller {
  readonly identity: Readonly<ConversationIdentity>;
  /** The shared tools and this conversation's, as the model is offered them. */
  tools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Promise<readonly ToolDefinition[]>;
  /** This conversation's tools with their bindings; later calls present them. */
  listTools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Promise<ConversationTools>;
  acquire(serverId: string, options?: { signal?: AbortSignal }): Promise<ConversationLeaseHandle>;
  /** Ends this conversation's remote sessions. */
  terminate(options?: {
    servers?: readonly string[];
    timeoutMs?: number;
  }): Promise<readonly TerminateResult[]>;
}

/** Bound on reaching the daemon and hearing its hello, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Bound on waiting for an auto-started daemon to answer on its socket, ms. Generous: a new
 * daemon first reaps a dead one's children (up to 4 s for one that ignores SIGTERM), and a
 * loaded machine was seen taking 8 s to start one.
 */
export const DEFAULT_AUTO_START_TIMEOUT_MS = 20_000;
/** Longest pause between background redials, ms; a restarting daemon is back within it. */
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 5_000;

export interface ConnectOptions {
  /** The daemon's socket. Default: defaultSocketPath(). */
  socketPath?: string;
  /** Sent in hello; the daemon shows it in its logs. */
  clientName: string;
  /**
   * Start the daemon when none answers: its socket is absent, or a daemon that died left it
   * behind. It starts with the environment a service would have (PATH, HOME, the XDG, LANG
   * and LC_ variables, USER, LOGNAME, TMPDIR, TZ, MCPOOL_*), never the rest of this
   * process's: put secrets for `${VAR}` in the daemon's env file (`~/.config/mcpool/env`).
   * Only ever this user's own daemon: a socket whose folder belongs to another user is
   * refused with `daemon-unavailable` before anything starts. Default false.
   */
  autoStart?: boolean;
  /**
   * The daemon's argv for `autoStart`, e.g. `[process.execPath, "/…/mcpool/dist/cli/main.js",
   * "serve"]`. Spawned detached with MCPOOL_SOCKET set to the socket path. Default: the
   * `mcpool` CLI this client belongs to (the `mcpool` package among the client's ancestors
   * or in their `node_modules`, run with this Node), else `mcpool serve` from PATH.
   */
  autoStartCommand?: readonly string[];
  /** Bound on an auto-started daemon answering on its socket, ms. Default 20000. */
  autoStartTimeoutMs?: number;
  /**
   * Called once `autoStart` has spawned the daemon, before the wait for it to answer: from
   * then on the daemon starts whatever becomes of this process (it is nobody's child). E.g. an
   * entry that answers its host from a recording meanwhile holds those answers until then, so
   * that a host which kills it the moment it has them still leaves a daemon starting.
   */
  onAutoStart?: () => void;
  /** Largest frame accepted from the daemon, bytes. Default 16 MiB. */
  maxFrameBytes?: number;
  /** Bound on connecting plus hello, ms, for each dial. Default 5000. */
  connectTimeoutMs?: number;
  /** Longest pause between background redials, ms. Default 5000. */
  maxReconnectDelayMs?: number;
  /**
   * After the daemon went away, how long a new request waits for the redial (a daemon
   * restarting), ms from the loss, instead of failing with `daemon-unavailable` at once.
   * Default 0. With `autoStart`, such a request starts a daemon only 5 s after the loss (or
   * after reconnectWaitMs, if shorter), so that a service manager restarting the daemon binds
   * first. Requests in flight at the loss fail at once all the same (`detail.inFlight: true`:
   * the daemon may or may not have acted on them).
   */
  reconnectWaitMs?: number;
  /** Aborts connect() itself (not the client it returns). */
  signal?: AbortSignal;
  /**
   * The agent's own MCP clientInfo (name, version, title…): a modern server reads it in the
   * envelope of this client's calls, `prompts/get` and `resources/read` in place of the
   * pool's, unless a request names its own `caller`. At most 4096 characters as
   * JSON. Default: none (the pool's).
   */
  clientInfo?: CallerInfo;
}

/** What a call may set that the wire carries as it is (CallParams' own doc comments). */
type CallWireOptions = Pick<
  CallParams,
  | "servers"
  | "timeoutMs"
  | "raw"
  | "maxResultChars"
  | "coerce"
  | "cache"
  | "hidden"
  | "unlisted"
  | "identity"
  | "profile"
  | "meta"
  | "caller"
  | "task"
  | "taskOwner"
  | "awaitTask"
>;

/** A sign-in's credentials for an http server (`storeCredentials`). */
export interface Credentials {
  tokens: Record<string, unknown>;
  clientInformation?: Record<string, unknown>;
  notice?: string;
}

export interface CallOptions extends CallWireOptions {
  /**
   * Rejects the call with the signal's reason (an AbortError) when aborted, and cancels it:
   * the daemon aborts it and the server is sent `notifications/cancelled`.
   */
  signal?: AbortSignal;
  /** Told of each progress notification the server sends for this call (and only this call). */
  onProgress?: ProgressListener;
  /**
   * Answers the elicitations the server sends while this call is in flight on it; without
   * it, the handler given to onElicit() does, else they are declined.
   */
  onElicit?: ElicitHandler;
  /**
   * Answers the sampling requests the server sends while this call is in flight on it;
   * without it, the handler given to onSample() does, else the server is refused.
   */
  onSample?: SampleHandler;
  /**
   * Answers a modern server's `roots/list` asked inside this call with the caller's roots
   * (a bridge asks its modern host in turn); without it, the pool answers as for any caller.
   */
  onRoots?: RootsHandler;
  /** Server id → binding from conversations.tools(): a stale tool is refused before it is sent. */
  bindings?: Readonly<Record<string, string>>;
}

/** What describe() is asked with: the scope, the host's profile, the conversation. */
export interface DescribeOptions {
  servers?: readonly string[];
  /** Describe a tool the row hides. */
  hidden?: boolean;
  /** The calling host's profile: a tool only its child lists. */
  profile?: HostProfile;
  /** The conversation: a tool of a `session: "conversation"` row, as its listing has it. */
  identity?: ConversationIdentity;
}

export interface RunHooksOptions {
  /** Servers whose hooks run: absent = every server, empty = none. */
  servers?: readonly string[];
  /**
   * Stops waiting: runHooks() resolves at once with no outcomes. The daemon's hooks run on
   * to their own bounds (the wire has no per-request cancellation).
   */
  signal?: AbortSignal;
  /** Told of each outcome that is not ok. A listener that throws is ignored. */
  onNotice?: (outcome: HookOutcome) => void;
}

export type EventListener = (event: PoolEvent) => void;

export interface EventOptions {
  /**
   * Only events of these types: the daemon pushes none of the others to this connection
   * unless another listener wants them (a `call` event per call is the bulk of them).
   */
  types?: readonly PoolEvent["type"][];
}
/**
 * A pooled server's notification; `about.taskOwner` names the host of this connection whose
 * task a `notifications/tasks/status` is about (it may come before the call's answer), or
 * whose resource subscription an update answers, and `about.subscription` the profile that
 * subscription named (mcpool-protocol's subscriptionKey(); "" for none).
 */
/**
 * What the daemon says of a server's notification besides it: whose task or subscription it
 * is (`taskOwner`, `subscription`), and for a log line or list change the child that sent it
 * (`child`, absent: the row's own) and the hosts of this client it is for (`hosts`: the
 * subscriptionKey() of each profile this client named that the child serves, "" for none).
 */
export interface NotificationAbout {
  taskOwner?: string;
  subscription?: string;
  child?: string;
  hosts?: readonly string[];
}

export type NotificationListener = (
  serverId: string,
  notification: ServerNotification,
  about: NotificationAbout,
) => void;

/** Which host of a client a resource subscription is for, and that host's profile. */
export type ResourceHost = { taskOwner?: string; profile?: HostProfile };

export interface PoolClient extends ToolCaller {
  /** The daemon's hello on the current connection; undefined while disconnected. */
  readonly daemon: HelloResult | undefined;
  /**
   * Any method of the protocol's METHODS, its params and result typed by the descriptor
   * (vscode-jsonrpc's sendRequest): a method added to the protocol is usable here before it
   * has a wrapper. The methods below are such wrappers, with positional arguments.
   */
  request<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    options?: { signal?: AbortSignal },
  ): Promise<ResultOf<M>>;
  /** `resources`: sample each server's CPU, memory and recent calls. */
  state(options?: { secrets?: boolean; resources?: boolean }): Promise<readonly ServerState[]>;
  /** Calls per tool kept across restarts. */
  usage(options?: { since?: number; servers?: readonly string[] }): Promise<UsageReport>;
  /**
   * With `identity`, the conversation's tools of `session: "conversation"` rows too. With
   * `profile`, what a host with those capabilities and roots would list direct.
   */
  tools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
    identity?: ConversationIdentity;
    profile?: HostProfile;
  }): Promise<readonly ToolDefinition[]>;
  /** Per-conversation servers: leases, terminate, listings, counts. */
  readonly conversations: ConversationsClient;
  /** A handle that names `identity` on every call and listing. */
  withIdentity(identity: ConversationIdentity): IdentifiedClient;
  catalog(servers?: readonly string[]): Promise<readonly CatalogServer[]>;
  /** The catalog cut to the best matches for `query`, servers by their best tool. */
  search(
    query: string,
    options?: { servers?: readonly string[]; limit?: number },
  ): Promise<readonly CatalogServer[]>;
  /** What a definition has no room for; undefined where a call would be refused. */
  describe(name: string, options?: DescribeOptions): Promise<ToolDescription | undefined>;
  /** Qualified names of the rows' `alwaysLoad` tools that tools() would hand out. */
  alwaysLoaded(servers?: readonly string[]): Promise<readonly string[]>;
  /**
   * Runs the hooks rows attach to `event`, in the daemon. Never rejects: a hook
   * that failed is an outcome with `ok: false`; a daemon that cannot be reached, or an
   * abort, resolves with no outcomes.
   */
  runHooks(
    event: HookEvent,
    context: HookContext,
    options?: RunHooksOptions,
  ): Promise<readonly HookOutcome[]>;
  probe(row: ServerRow): Promise<ProbeResult>;
  stop(id: string): Promise<void>;
  reconnect(id: string): Promise<void>;
  /** A server's pin against its live list, and what changed since the approval. */
  pinInfo(id: string): Promise<PinInfo>;
  /**
   * Records the live list hashing to `fingerprint` as approved, in the daemon's pin store;
   * refused with `pin-mismatch` if the list moved since it was shown. The row's `pin` in
   * mcp.json is what makes the daemon offer the tools again.
   */
  approve(id: string, fingerprint: string): Promise<PinInfo>;
  /**
   * Hands the daemon an OAuth sign-in's tokens and client registration for an http server
   * (what `mcpool login` does), with what was unusual about the sign-in, if anything (shown
   * in `status`); the daemon stores them and redials the server.
   */
  storeCredentials(id: string, credentials: Credentials): Promise<ServerAuthState>;
  /** Makes the daemon forget a server's sign-in and redial it (`mcpool logout`). */
  forgetCredentials(id: string): Promise<ServerAuthState>;
  reload(): Promise<ConfigStatus>;
  status(options?: { resources?: boolean }): Promise<DaemonStatus>;
  shutdown(): Promise<void>;
  /**
   * Starts a new daemon from the installed code and hands it the socket and the running
   * servers (`mcpool restart`): resolves once it serves; refused with `handover-failed`,
   * and why, when it could not (the daemon asked serves on).
   */
  handover(): Promise<HandoverResult>;
  /**
   * Calls `listener` with every pool event; returns the unsubscribe function. Listening does
   * not keep the process alive. A listener that throws is reported as an uncaught exception,
   * as EventTarget does, without keeping the other listeners from the event.
   */
  onEvent(listener: EventListener, options?: EventOptions): () => void;
  /** Calls `listener` with every notification of a pooled server; returns the unsubscribe. */
  onNotification(listener: NotificationListener): () => void;
  /**
   * Calls `listener` each time the client is connected again after losing the daemon (a
   * restart, a dropped connection), once the subscriptions are sent again; with the new
   * daemon's hello. Returns the unsubscribe.
   */
  onReconnect(listener: (daemon: HelloResult) => void): () => void;
  /**
   * Answers the elicitations of this client's calls that brought no `onElicit` of their own;
   * replaces any handler given before. Returns the function that removes it.
   * The daemon asks only the client whose call is in flight on the server that asks.
   */
  onElicit(handler: ElicitHandler): () => void;
  /**
   * Answers the sampling requests of this client's calls that brought no `onSample` of
   * their own; replaces any handler given before. Returns the function that
   * removes it. The daemon asks only the client whose call is in flight on the server.
   */
  onSample(handler: SampleHandler): () => void;
  // Passthrough: refused with `not-offered` where the server does not offer it.
  listResources(
    serverId: string,
    options?: PassthroughOptions & { cursor?: string },
  ): Promise<ListResourcesResult>;
  listResourceTemplates(
    serverId: string,
    options?: PassthroughOptions & { cursor?: string },
  ): Promise<ListResourceTemplatesResult>;
  readResource(serverId: string, uri: string, options?: AskingOptions): Promise<ReadResourceResult>;
  /**
   * The server's `notifications/resources/updated` for `uri` come to onNotification()
   * listeners, to this client only; kept across a daemon restart. `taskOwner`: the host of
   * this client the subscription is for (its updates name it). Across a hand-over the daemon
   * keeps a named host's place, with the update it missed, for a subscribe of that name
   * alone (a place of no name, for the first subscribe of no name). `profile`: that host's;
   * the subscription is held where its calls go (the server's child for it, if any).
   */
  subscribeResource(serverId: string, uri: string, options?: ResourceHost): Promise<void>;
  /** Ends `taskOwner`'s subscription to `uri` of `profile` (none: the one that named none). */
  unsubscribeResource(serverId: string, uri: string, options?: ResourceHost): Promise<void>;
  listPrompts(
    serverId: string,
    options?: PassthroughOptions & { cursor?: string },
  ): Promise<ListPromptsResult>;
  getPrompt(
    serverId: string,
    name: string,
    args?: Record<string, string>,
    options?: AskingOptions,
  ): Promise<GetPromptResult>;
  complete(
    serverId: string,
    request: Omit<CompleteParams, "serverId">,
    options?: PassthroughOptions,
  ): Promise<CompleteResult>;
  /** The server answers a ping (the daemon dials it first if it is idle). */
  ping(serverId: string, options?: PassthroughOptions): Promise<void>;
  /** The server's log level, for every agent that uses it. */
  setLoggingLevel(
    serverId: string,
    level: LoggingLevel,
    options?: PassthroughOptions,
  ): Promise<void>;
  /** MCP tasks of task-augmented calls (`call()` with `task`): their requests (tasks.ts). */
  readonly tasks: TaskRequests;
  /** A 2025-11-25 host's project children, opened ahead of its roots (profiles.ts). */
  readonly profiles: ProfileRequests;
  /** Fails pending calls with `closed`, stops redialling; resolves once the socket closed. */
  close(): Promise<void>;
}
