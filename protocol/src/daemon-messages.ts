/**
 * What the daemon sends of its own on the wire (methods.ts has what a client asks): the
 * NOTIFICATIONS it pushes to connections that subscribed, the DAEMON_REQUESTS (`elicit`,
 * `sample`, `roots`) it sends only to the connection whose call caused them, and CANCEL,
 * the `request/cancel` notification either side withdraws a request it sent with.
 */
import type { ServerNotification, PoolEvent } from "./shapes.js";
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  Progress,
  ProgressToken,
} from "./mcp-shapes.js";
import { fields, method, returns } from "./checks.js";
import type { CheckedParams, ParamsCheck, SpecParams, SpecResult } from "./checks.js";

/** A call's progress, to the connection that made the call with `progressToken`. */
export interface ProgressParams extends Progress {
  progressToken: ProgressToken;
}

/** `elicit`: a pooled server asks, during the call `callId` this connection made. */
export interface ElicitParams {
  serverId: string;
  /** The JSON-RPC id of this connection's `tools/call` that was in flight. */
  callId: string | number;
  params: ElicitRequestParams;
}

/** `sample`: a pooled server asks for an LLM completion, during the call `callId` this connection made. */
export interface SampleParams {
  serverId: string;
  /** The JSON-RPC id of this connection's `tools/call` that was in flight. */
  callId: string | number;
  params: CreateMessageRequestParams;
}

/** `roots`: a pooled server asks for the caller's roots, during the call `callId` this connection made. */
export interface RootsParams {
  serverId: string;
  /** The JSON-RPC id of this connection's `tools/call` that was in flight. */
  callId: string | number;
  params: Record<string, unknown>;
}

/** The answer to `roots`: the caller's roots, as `roots/list` answers. */
export interface RootsResult {
  roots: { uri: string; name?: string; _meta?: Record<string, unknown> }[];
  [key: string]: unknown;
}

/** `request/cancel`: the request `id` the sender made is no longer wanted. */
export type CancelParams = CheckedParams<typeof CANCEL_FIELDS>;

export interface ServerNotificationParams {
  serverId: string;
  notification: ServerNotification;
  /**
   * A task's status: the host of this connection whose task it is (the `taskOwner` its
   * task-augmented call named), so it reaches that host even before the call's answer does.
   * A resource's update: the host whose subscribe it answers (the `taskOwner` it named).
   */
  taskOwner?: string;
  /**
   * A resource's update: the subscriptionKey() of the profile its subscribe named ("" for
   * none), the host's requests going where its subscription is held. Absent: an older daemon.
   */
  subscription?: string;
  /**
   * A log line or a list change: the child of the row that sent it, as the
   * subscriptionKey() of the profile it was made for; absent: the row's own connection.
   */
  child?: string;
  /**
   * A log line or a list change: the hosts of this connection it is for, each as the
   * subscriptionKey() of a profile this connection named ("" for requests that named none)
   * that the sending child serves. Absent: an older daemon, which sends them to everyone.
   */
  hosts?: string[];
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
  /** A pool event; subscribe with `{ events: true }`. */
  event: notification<PoolEvent>(),
  /** A pooled server's notification; subscribe with `{ notifications: true }`. */
  notification: notification<ServerNotificationParams>(),
  /** A call's progress, to the connection that made it with a `progressToken`. */
  progress: notification<ProgressParams>(),
} as const;

export type Notifications = typeof NOTIFICATIONS;
export type NotificationName = keyof Notifications;
export type NotificationParamsOf<N extends NotificationName> =
  Notifications[N] extends NotificationSpec<infer P> ? P : never;

export function isNotificationName(name: string): name is NotificationName {
  return Object.prototype.hasOwnProperty.call(NOTIFICATIONS, name);
}

/**
 * Either side withdraws a request it sent, as LSP's `$/cancelRequest`: the client when a
 * call's AbortSignal fires (the daemon aborts that request, and the pool cancels it
 * upstream), the daemon when an `elicit` is no longer wanted. A late answer is ignored.
 */
const CANCEL_FIELDS = fields({ id: "id" });

export const CANCEL = { method: "request/cancel", check: CANCEL_FIELDS } as const;

/** What the two daemon requests share: the server that asks, and the call it asks during. */
const ASKED = fields({ serverId: "string", callId: "id", params: "object" });

const checkElicit: ParamsCheck<ElicitParams> = (params) => {
  const problem = ASKED(params);
  if (problem !== undefined) return problem;
  const asked = params.params as Record<string, unknown>;
  return typeof asked.message === "string" ? undefined : `"params.message" must be a string`;
};

const checkSample: ParamsCheck<SampleParams> = (params) => {
  const problem = ASKED(params);
  if (problem !== undefined) return problem;
  const asked = params.params as Record<string, unknown>;
  return Array.isArray(asked.messages) ? undefined : `"params.messages" must be an array`;
};

/** Every request the daemon may send a client: only to the connection whose call caused it. */
export const DAEMON_REQUESTS = {
  /** Answer with the user's reply; a handler that throws is answered `cancel` upstream. */
  elicit: method(checkElicit, returns<ElicitResult>()),
  /** Answer with the model's message; a refusal reaches the server as a JSON-RPC error. */
  sample: method(checkSample, returns<CreateMessageResult>()),
  /** Answer with the caller's roots; a refusal reaches the server as a JSON-RPC error. */
  roots: method(ASKED as ParamsCheck<RootsParams>, returns<RootsResult>()),
} as const;

export type DaemonRequests = typeof DAEMON_REQUESTS;
export type DaemonRequestName = keyof DaemonRequests;
export type DaemonParamsOf<R extends DaemonRequestName> = SpecParams<DaemonRequests[R]>;
export type DaemonResultOf<R extends DaemonRequestName> = SpecResult<DaemonRequests[R]>;

export function isDaemonRequestName(name: string): name is DaemonRequestName {
  return Object.prototype.hasOwnProperty.call(DAEMON_REQUESTS, name);
}
