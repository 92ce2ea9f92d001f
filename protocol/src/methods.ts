/**
 * The mcpool wire: JSON-RPC 2.0 messages in newline-delimited UTF-8 frames (codec.ts).
 * Every method is declared here once, as a typed descriptor both sides read: the daemon's
 * handler table is keyed by METHODS and typed by ParamsOf/ResultOf, and so is the client's
 * request(). A new method is one descriptor here and one handler in src/daemon.
 * A client's first request is `hello`; a daemon answers nothing else before it, and both
 * sides refuse a PROTOCOL_VERSION other than their own (`protocol-mismatch`).
 * Requests are the METHODS below, each declared once; the daemon pushes NOTIFICATIONS only
 * to connections that asked with `pool/subscribe`. Refusals keep the pool's code (errors.ts).
 * The daemon sends DAEMON_REQUESTS (`elicit`, `sample`, `roots`) only to the connection whose
 * call caused them; either side withdraws a request it sent with a `request/cancel`
 * notification (CANCEL). Those three are daemon-messages.ts.
 */
import type {
  CatalogServer,
  ConfigStatus,
  DaemonStatus,
  HandoverResult,
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
} from "./shapes.js";
import type { UsageReport } from "./observe-shapes.js";
import type {
  CompleteResult,
  CompletionReference,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  LoggingLevel,
  ReadResourceResult,
} from "./mcp-shapes.js";
import { fields, fieldsOf, method, returns } from "./checks.js";
import type {
  CheckedParams,
  Empty,
  ParamsCheck,
  SpecParams,
  SpecResult,
  TableParams,
} from "./checks.js";
import { isRecord } from "./values.js";
import { CONVERSATION_METHODS } from "./conversation-methods.js";
import { TASK_NAME_METHODS } from "./task-names.js";
import type { ConversationIdentity } from "./conversation-shapes.js";
import type { HostProfile } from "./host-profile.js";
import { callerProblem, type Caller } from "./caller.js";
import type { CallParams, CallResult } from "./call-params.js";

export type { MethodSpec, ParamsCheck } from "./checks.js";

/** Bumped on any change an older peer would misread. */
export const PROTOCOL_VERSION = 1;

/*
 * Params types: a method whose table says all there is to say has its params read off the
 * table (checks.ts, TableParams), and the name below is an alias of that. A params type
 * richer than a table (a known object shape, a union of strings) stays an interface, and
 * its table, fieldsOf<P>(), names every key and checks what a kind can.
 */

export type HelloParams = ParamsOf<"hello">;

export interface HelloResult {
  protocolVersion: number;
  daemonVersion: string;
  pid: number;
  /** True: a subscribe naming a host (`taskOwner`) is its own; absent: an older daemon. */
  namesHosts?: boolean;
}

export type StateParams = ParamsOf<"pool/state">;

/** `daemon/status`: `resources` as for `pool/state`, plus the daemon's own RSS. */
export type StatusParams = ParamsOf<"daemon/status">;

/** `pool/usage`: calls per tool since `since` (epoch ms; absent: ever). */
export type UsageParams = ParamsOf<"pool/usage">;

/** Scope: absent = every server, empty = none. */
export interface ToolsParams {
  names?: readonly string[];
  servers?: readonly string[];
  /** Adds the conversation's tools of `session: "conversation"` rows. */
  identity?: ConversationIdentity;
  /** The calling host's capabilities and roots: what it would list direct. */
  profile?: HostProfile;
}

/** `profiles/prepare`: a 2025-11-25 host's profile, its roots not known yet. */
export interface PrepareParams {
  profile: HostProfile;
  /** A name the asker makes, one per host session: what it holds, `profiles/release` lets go of. */
  holder: string;
  servers?: readonly string[];
}

export { CALL_VALUE_PARAMS, type CallParams, type CallResult } from "./call-params.js";

export type SearchParams = ParamsOf<"tools/search">;

export interface DescribeParams {
  /** The qualified tool name. */
  name: string;
  servers?: readonly string[];
  /** Describe a tool the row hides. */
  hidden?: boolean;
  /** The calling host's profile: a tool only its child lists. */
  profile?: HostProfile;
  /** The conversation: a tool of a `session: "conversation"` row, as its listing has it. */
  identity?: ConversationIdentity;
}

export interface RunHooksParams {
  /** One of the hook events (sessionStart, beforeTurn, …). */
  event: HookEvent;
  context: HookContext;
  /** Servers whose hooks run: absent = every server, empty = none. */
  servers?: readonly string[];
}

export type CatalogParams = ParamsOf<"tools/catalog">;

export interface ProbeParams {
  /** A row that need not be saved. */
  row: ServerRow;
}

export type ApproveParams = ParamsOf<"server/approve">;

export type ServerIdParams = ParamsOf<"server/stop">;

/**
 * What `mcpool login` hands the daemon: the OAuth tokens (RFC 6749 §5.1 plus the SDK's
 * `issuer` stamp) and the client registration they belong to. Kept in the daemon's token
 * store; never echoed back, never in status, events or logs.
 */
export type AuthStoreParams = ParamsOf<"auth/store">;

/** Each stream absent from the params is left as it was. */
export interface SubscribeParams {
  events?: boolean;
  /**
   * With `events`: push only events of these types (a bridge wants none of the `call`
   * events every call makes); absent, every type. Sent again, it replaces the last.
   */
  eventTypes?: PoolEvent["type"][];
  notifications?: boolean;
  /** Every call of this connection answers its server's elicitations (`elicit`). */
  elicit?: boolean;
  /** Every call of this connection answers its server's sampling requests (`sample`). */
  sample?: boolean;
}

/** Passthrough: one MCP request to one pooled server, by its id. */
const SERVER_SCOPED = { serverId: "string" } as const;

export type ServerScopedParams = TableParams<typeof SERVER_SCOPED>;

export type ListPageParams = ParamsOf<"resources/list">;

/** A listing of one server's: a page, for the host of `profile` (served by its child). */
export interface ListParams extends ServerScopedParams {
  cursor?: string;
  /** The calling host's capabilities and roots: the connection its calls go to answers. */
  profile?: HostProfile;
}

export type ResourceUriParams = CheckedParams<typeof RESOURCE_URI>;

export interface ReadResourceParams extends ServerScopedParams, AskingParams {
  uri: string;
}

export interface GetPromptParams extends ServerScopedParams, AskingParams {
  name: string;
  arguments?: Record<string, string>;
}

/**
 * Who answers what a modern server asks inside a `prompts/get` or `resources/read`
 * (`input_required`): this connection, as a call's `elicit`, `sample`, `roots`.
 */
export interface AskingParams {
  elicit?: boolean;
  sample?: boolean;
  roots?: boolean;
  /** The calling agent, as a call's `caller`. */
  caller?: Caller;
  /** The calling host's capabilities and roots: the connection its calls go to answers. */
  profile?: HostProfile;
}

/** `profile`: the calling host's capabilities and roots; the connection its calls go to answers. */
export interface CompleteParams extends ServerScopedParams, Pick<ListParams, "profile"> {
  ref: CompletionReference;
  argument: { name: string; value: string };
  /** MCP's completion context, as the SDK types it (a host's request passed on). */
  context?: { arguments?: Record<string, string> | undefined };
}

/** `profile`: the calling host's; the level goes to the connection its calls go to. */
export interface SetLevelParams extends ServerScopedParams, Pick<ListParams, "profile"> {
  level: LoggingLevel;
}

export type { Empty } from "./checks.js";

const checkProbe: ParamsCheck<ProbeParams> = (params) => {
  const row = params.row;
  if (!isRecord(row)) return `"row" must be an object`;
  if (typeof row.id !== "string") return `"row.id" must be a string`;
  if (row.transport !== "stdio" && row.transport !== "http") {
    return `"row.transport" must be "stdio" or "http"`;
  }
  return undefined;
};

const SERVER_ID = fields({ id: "string" });
const SCOPE = fields({ servers: "string[]?" });
const PROFILE = { profile: "object?" } as const;
const LIST_PAGE = fieldsOf<ListParams>({ ...SERVER_SCOPED, cursor: "string?", ...PROFILE });
const RESOURCE_URI = fields({ ...SERVER_SCOPED, uri: "string", taskOwner: "string?", ...PROFILE });
const TASK_ID = fields({ ...SERVER_SCOPED, taskOwner: "string?", taskId: "string" });
const TASK_PAGE = fields({ ...SERVER_SCOPED, taskOwner: "string?", cursor: "string?" });
const ASKING = {
  elicit: "boolean?",
  sample: "boolean?",
  roots: "boolean?",
  caller: "object?",
  profile: "object?",
} as const;

/** `check`, and a `caller` that is one (caller.ts): a bad one is the request's -32602. */
function withCaller<P>(check: ParamsCheck<P>): ParamsCheck<P> {
  return (params) => check(params) ?? callerProblem(params.caller);
}
const NONE = fieldsOf<Empty>({});

/** Every request a client may send, by name. The daemon dispatches through this table. */
export const METHODS = {
  hello: method(
    fields({ protocolVersion: "number", clientName: "string", pid: "number" }),
    returns<HelloResult>(),
  ),
  "pool/state": method(
    fields({
      /** Include rows' `env` and `headers`. Default false. */
      secrets: "boolean?",
      /** Sample each server's CPU, memory and recent calls. Default false. */
      resources: "boolean?",
    }),
    returns<readonly ServerState[]>(),
  ),
  /** Calls per tool kept across restarts, most called first. */
  "pool/usage": method(fields({ since: "number?", servers: "string[]?" }), returns<UsageReport>()),
  "tools/list": method(
    fieldsOf<ToolsParams>({
      names: "string[]?",
      servers: "string[]?",
      identity: "object?",
      profile: "object?",
    }),
    returns<readonly ToolDefinition[]>(),
  ),
  /**
   * For a 2025-11-25 host that declares roots not known yet (asked once its `initialize` is
   * answered): opens ahead what its project's children will be dialled on, held by `holder`
   * until `profiles/release` or the connection's end; answered with the rows it opened for,
   * once each is open or failed.
   */
  "profiles/prepare": method(
    fieldsOf<PrepareParams>({ profile: "object", holder: "string", servers: "string[]?" }),
    returns<{ prepared: string[] }>(),
  ),
  "profiles/release": method(fields({ holder: "string" }), returns<Empty>()),
  "tools/call": method(
    withCaller(
      fieldsOf<CallParams>({
        name: "string",
        arguments: "object?",
        servers: "string[]?",
        timeoutMs: "number?",
        raw: "boolean?",
        maxResultChars: "number?",
        coerce: "boolean?",
        cache: "boolean?",
        hidden: "boolean?",
        unlisted: "string?",
        progressToken: "id?",
        elicit: "boolean?",
        sample: "boolean?",
        roots: "boolean?",
        identity: "object?",
        profile: "object?",
        bindings: "object?",
        meta: "object?",
        caller: "object?",
        task: "object?",
        taskOwner: "string?",
        awaitTask: "boolean?",
      }),
    ),
    returns<CallResult>(),
  ),
  "tools/catalog": method(SCOPE, returns<readonly CatalogServer[]>()),
  "tools/search": method(
    fields({
      query: "string",
      servers: "string[]?",
      /** Most tools answered. Default: the pool's (20). */
      limit: "number?",
    }),
    returns<readonly CatalogServer[]>(),
  ),
  /** null where call() would refuse the name: unknown, out of scope, or hidden. */
  "tools/describe": method(
    fieldsOf<DescribeParams>({
      name: "string",
      servers: "string[]?",
      hidden: "boolean?",
      profile: "object?",
      identity: "object?",
    }),
    returns<ToolDescription | null>(),
  ),
  "tools/always-loaded": method(SCOPE, returns<readonly string[]>()),
  /** Never an error for a hook that failed: each outcome says how it went. */
  "hooks/run": method(
    fieldsOf<RunHooksParams>({ event: "string", context: "object", servers: "string[]?" }),
    returns<readonly HookOutcome[]>(),
  ),
  "server/probe": method(checkProbe, returns<ProbeResult>()),
  "server/stop": method(SERVER_ID, returns<Empty>()),
  "server/reconnect": method(SERVER_ID, returns<Empty>()),
  /** The row's pin against the live list (dialling an idle server), and what changed. */
  "server/pin-info": method(SERVER_ID, returns<PinInfo>()),
  /** Keeps the approved list in the daemon's pin store; the pin itself goes in mcp.json. */
  "server/approve": method(
    fields({
      id: "string",
      /** The live list's fingerprint as it was shown; refused (`pin-mismatch`) if it has moved. */
      fingerprint: "string",
    }),
    returns<PinInfo>(),
  ),
  /** Stores a sign-in's credentials for an http server and redials it (`mcpool login`). */
  "auth/store": method(
    fields({ id: "string", tokens: "object", clientInformation: "object?", notice: "string?" }),
    returns<ServerAuthState>(),
  ),
  /** Forgets them and redials, which leaves the server `auth-required` (`mcpool logout`). */
  "auth/forget": method(SERVER_ID, returns<ServerAuthState>()),
  "pool/reload": method(NONE, returns<ConfigStatus>()),
  "pool/subscribe": method(
    fieldsOf<SubscribeParams>({
      events: "boolean?",
      eventTypes: "string[]?",
      notifications: "boolean?",
      elicit: "boolean?",
      sample: "boolean?",
    }),
    returns<Empty>(),
  ),
  "daemon/status": method(fields({ resources: "boolean?" }), returns<DaemonStatus>()),
  "daemon/shutdown": method(NONE, returns<Empty>()),
  /**
   * Starts a new daemon from the installed code and hands it the socket and the running
   * servers (`mcpool restart`); answered once it serves, or refused (`handover-failed`) with
   * why, this daemon serving on.
   */
  "daemon/handover": method(NONE, returns<HandoverResult>()),
  // Passthrough: refused with `not-offered` where the server's capabilities lack it.
  "resources/list": method(LIST_PAGE, returns<ListResourcesResult>()),
  "resources/templates/list": method(LIST_PAGE, returns<ListResourceTemplatesResult>()),
  "resources/read": method(
    withCaller(fieldsOf<ReadResourceParams>({ ...SERVER_SCOPED, uri: "string", ...ASKING })),
    returns<ReadResourceResult>(),
  ),
  /**
   * Held where the requests of its `profile` go; its updates come to this connection only,
   * as `notification` naming its `taskOwner` and its profile's subscriptionKey().
   */
  "resources/subscribe": method(RESOURCE_URI, returns<Empty>()),
  "resources/unsubscribe": method(RESOURCE_URI, returns<Empty>()),
  "prompts/list": method(LIST_PAGE, returns<ListPromptsResult>()),
  "prompts/get": method(
    withCaller(
      fieldsOf<GetPromptParams>({
        ...SERVER_SCOPED,
        name: "string",
        arguments: "object?",
        ...ASKING,
      }),
    ),
    returns<GetPromptResult>(),
  ),
  "completion/complete": method(
    fieldsOf<CompleteParams>({
      ...SERVER_SCOPED,
      ref: "object",
      argument: "object",
      context: "object?",
      profile: "object?",
    }),
    returns<CompleteResult>(),
  ),
  "server/ping": method(fields(SERVER_SCOPED), returns<Empty>()),
  // Tasks: to the connection that created the task, for its owner only (a server's answer).
  "tasks/get": method(TASK_ID, returns<Record<string, unknown>>()),
  "tasks/result": method(TASK_ID, returns<Record<string, unknown>>()),
  "tasks/cancel": method(TASK_ID, returns<Record<string, unknown>>()),
  "tasks/list": method(TASK_PAGE, returns<Record<string, unknown>>()),
  /** The level of the connection the host's calls go to, shared by the hosts it serves. */
  "logging/setLevel": method(
    fieldsOf<SetLevelParams>({ ...SERVER_SCOPED, level: "string", ...PROFILE }),
    returns<Empty>(),
  ),
  // Per-conversation servers: leases, terminate, listings, counts.
  ...CONVERSATION_METHODS,
  ...TASK_NAME_METHODS,
} as const;

export type Methods = typeof METHODS;
export type MethodName = keyof Methods;
/** A descriptor's params and result types: one reading for METHODS and DAEMON_REQUESTS. */
export type ParamsOf<M extends MethodName> = SpecParams<Methods[M]>;
export type ResultOf<M extends MethodName> = SpecResult<Methods[M]>;

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(METHODS, name);
}
