/**
 * What a handler of the daemon's socket is given and must be: one handler per
 * method of mcpool-protocol's METHODS, each `(params, ctx)`, where `ctx` names the connection,
 * carries the request's signal and lets the handler notify or ask that connection.
 */
import type { JSONRPCID } from "mcpool-protocol";
import type { CallSignal } from "../../pool/core/types.js";
import type {
  DaemonParamsOf,
  DaemonRequestName,
  DaemonResultOf,
  MethodName,
  NotificationName,
  NotificationParamsOf,
  ParamsOf,
  ResultOf,
} from "mcpool-protocol";

/** Who is at the other end of a connection. */
export interface ConnectionInfo {
  readonly id: number;
  /** From hello. */
  readonly clientName: string;
  /** From hello: the client's own word, not checked. */
  readonly pid: number;
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
}

export interface RequestContext {
  /**
   * Aborted when the answer is no longer wanted: the connection closed, or the client
   * withdrew this request (`request/cancel`). The connection's own is `connection.signal`.
   * What the pool reads of an AbortSignal (CallSignal), not one: see InboundRequest.
   */
  readonly signal: CallSignal;
  /** The request's JSON-RPC id on this connection; undefined for a notification. */
  readonly id: JSONRPCID | undefined;
  readonly connection: ConnectionInfo;
  /** Pushes a notification to this connection; false when it can no longer take one. */
  notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): boolean;
  /**
   * Asks this connection's client (DAEMON_REQUESTS: `elicit`, `sample`). Rejects with the client's
   * refusal, when the connection closes, or when `signal` aborts — the client is then told
   * with `request/cancel`.
   */
  request<R extends DaemonRequestName>(
    name: R,
    params: DaemonParamsOf<R>,
    signal?: AbortSignal,
  ): Promise<DaemonResultOf<R>>;
}

export type Handler<M extends MethodName> = (
  params: ParamsOf<M>,
  ctx: RequestContext,
) => ResultOf<M> | PromiseLike<ResultOf<M>>;

/** One handler per method of the wire; tsc insists on every one. */
export type HandlerTable = { readonly [M in MethodName]: Handler<M> };
