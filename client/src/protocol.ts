/**
 * The mcpool wire: JSON-RPC 2.0 messages in newline-delimited UTF-8 frames (codec.ts).
 * A client's first request is `hello`; a daemon answers nothing else before it, and both
 * sides refuse a PROTOCOL_VERSION other than their own (`protocol-mismatch`).
 * Requests are the METHODS below, each declared once; the daemon pushes NOTIFICATIONS only
 * to connections that asked with `pool/subscribe`. Refusals keep the pool's code (errors.ts).
 */
import type {
  CallToolResult,
  CatalogServer,
  ConfigStatus,
  DaemonStatus,
  PoolEvent,
  ProbeResult,
  ServerNotification,
  ServerRow,
  ServerState,
  ToolDefinition,
} from "./shapes.js";

/** Bumped on any change an older peer would misread. */
export const PROTOCOL_VERSION = 1;

export interface HelloParams {
  protocolVersion: number;
  clientName: string;
  pid: number;
}

export interface HelloResult {
  protocolVersion: number;
  daemonVersion: string;
  pid: number;
}

export interface StateParams {
  /** Include rows' `env` and `headers`. Default false. */
  secrets?: boolean;
}

/** Scope: absent = every server, empty = none (SPEC C4). */
export interface ToolsParams {
  names?: readonly string[];
  servers?: readonly string[];
}

export interface CallParams {
  /** The qualified tool name. */
  name: string;
  arguments?: Record<string, unknown>;
  servers?: readonly string[];
  /** Overrides the row's and the pool's call timeout, ms. */
  timeoutMs?: number;
  /** Answer with the CallToolResult instead of its text. */
  raw?: boolean;
  /** Overrides the row's and the pool's result cap; 0 = no cap. */
  maxResultChars?: number;
}

export type CallResult = { text: string } | { result: CallToolResult };

export interface CatalogParams {
  servers?: readonly string[];
}

export interface ProbeParams {
  /** A row that need not be saved. */
  row: ServerRow;
}

export interface ServerIdParams {
  id: string;
}

/** Each stream absent from the params is left as it was. */
export interface SubscribeParams {
  events?: boolean;
  notifications?: boolean;
}

export type Empty = Record<string, never>;

/** Returns what is wrong with a request's params, or undefined. Absent params arrive as {}. */
export type ParamsCheck = (params: Record<string, unknown>) => string | undefined;

/** One method: a runtime check of its params, and its types (phantom, never set). */
export interface MethodSpec<P, R> {
  readonly check: ParamsCheck;
  readonly types?: { params: P; result: R };
}

type FieldKind = "string" | "number" | "boolean" | "object" | "string[]";
type FieldSpec = Record<string, FieldKind | `${FieldKind}?`>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const IS: Record<FieldKind, (value: unknown) => boolean> = {
  string: (value) => typeof value === "string",
  number: (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
  boolean: (value) => typeof value === "boolean",
  object: isRecord,
  "string[]": (value) => Array.isArray(value) && value.every((item) => typeof item === "string"),
};

const DESCRIBED: Record<FieldKind, string> = {
  string: "a string",
  number: "a non-negative number",
  boolean: "a boolean",
  object: "an object",
  "string[]": "an array of strings",
};

/** A check of named fields; fields it does not name are let through for newer clients. */
function fields(spec: FieldSpec): ParamsCheck {
  const entries = Object.entries(spec).map(([name, kind]) => {
    const optional = kind.endsWith("?");
    return { name, optional, kind: (optional ? kind.slice(0, -1) : kind) as FieldKind };
  });
  return (params) => {
    for (const { name, optional, kind } of entries) {
      const value = params[name];
      if (value === undefined && optional) continue;
      if (!IS[kind](value)) return `"${name}" must be ${DESCRIBED[kind]}`;
    }
    return undefined;
  };
}

function method<P, R>(check: ParamsCheck): MethodSpec<P, R> {
  return { check };
}

const checkProbe: ParamsCheck = (params) => {
  const row = params.row;
  if (!isRecord(row)) return `"row" must be an object`;
  if (typeof row.id !== "string") return `"row.id" must be a string`;
  if (row.transport !== "stdio" && row.transport !== "http") {
    return `"row.transport" must be "stdio" or "http"`;
  }
  return undefined;
};

/** Every request a client may send, by name. The daemon dispatches through this table. */
export const METHODS = {
  hello: method<HelloParams, HelloResult>(
    fields({ protocolVersion: "number", clientName: "string", pid: "number" }),
  ),
  "pool/state": method<StateParams, readonly ServerState[]>(fields({ secrets: "boolean?" })),
  "tools/list": method<ToolsParams, readonly ToolDefinition[]>(
    fields({ names: "string[]?", servers: "string[]?" }),
  ),
  "tools/call": method<CallParams, CallResult>(
    fields({
      name: "string",
      arguments: "object?",
      servers: "string[]?",
      timeoutMs: "number?",
      raw: "boolean?",
      maxResultChars: "number?",
    }),
  ),
  "tools/catalog": method<CatalogParams, readonly CatalogServer[]>(
    fields({ servers: "string[]?" }),
  ),
  "server/probe": method<ProbeParams, ProbeResult>(checkProbe),
  "server/stop": method<ServerIdParams, Empty>(fields({ id: "string" })),
  "server/reconnect": method<ServerIdParams, Empty>(fields({ id: "string" })),
  "pool/reload": method<Empty, ConfigStatus>(fields({})),
  "pool/subscribe": method<SubscribeParams, Empty>(
    fields({ events: "boolean?", notifications: "boolean?" }),
  ),
  "daemon/status": method<Empty, DaemonStatus>(fields({})),
  "daemon/shutdown": method<Empty, Empty>(fields({})),
} as const;

export type Methods = typeof METHODS;
export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> =
  Methods[M] extends MethodSpec<infer P, unknown> ? P : never;
export type ResultOf<M extends MethodName> =
  Methods[M] extends MethodSpec<unknown, infer R> ? R : never;

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(METHODS, name);
}

export interface ServerNotificationParams {
  serverId: string;
  notification: ServerNotification;
}

/** One notification: its params' type (phantom, never set). */
export interface NotificationSpec<P> {
  readonly types?: { params: P };
}

function notification<P>(): NotificationSpec<P> {
  return {};
}

/** Every notification the daemon pushes, by name, each to subscribed connections only. */
export const NOTIFICATIONS = {
  /** A pool event (SPEC C13); subscribe with `{ events: true }`. */
  event: notification<PoolEvent>(),
  /** A pooled server's notification; subscribe with `{ notifications: true }`. */
  notification: notification<ServerNotificationParams>(),
} as const;

export type Notifications = typeof NOTIFICATIONS;
export type NotificationName = keyof Notifications;
export type NotificationParamsOf<N extends NotificationName> =
  Notifications[N] extends NotificationSpec<infer P> ? P : never;

export function isNotificationName(name: string): name is NotificationName {
  return Object.prototype.hasOwnProperty.call(NOTIFICATIONS, name);
}
