/**
 * Dispatch on the daemon's socket: each frame's envelope is read (envelope.ts), and
 * a request runs its handler from a table built from mcpool-protocol's METHODS, so names cannot
 * drift between the two sides. A handler's answer is written before the request counts as
 * settled; a refusal fails that request, and before hello that connection; nothing here can
 * fail the daemon. A handler's throw becomes a wire error only for a pool refusal
 * (`McpPoolError`); anything else is logged and answered as an internal error.
 */
import { JSONRPCErrorCode, createJSONRPCSuccessResponse, type JSONRPCID } from "mcpool-protocol";
import {
  METHODS,
  PROTOCOL_VERSION,
  McpPoolError,
  toWireError,
  type DaemonParamsOf,
  type DaemonRequestName,
  type DaemonResultOf,
  type Frame,
  type MethodName,
  type NotificationName,
  type NotificationParamsOf,
  type WireError,
} from "mcpool-protocol";

import type { PoolLog } from "../../pool/core/types.js";
import { readEnvelope } from "./envelope.js";
import type { InboundRequest } from "./peer-requests.js";
import type { HandlerTable, RequestContext } from "./request-context.js";
import type { CallSignal } from "../../pool/core/types.js";
import type { SocketPeer } from "./peer.js";

type Run = (params: Record<string, unknown>, ctx: RequestContext) => unknown;

export interface DispatchOptions {
  handlers: HandlerTable;
  log: PoolLog;
  /** True once the server drains: new requests are refused with `closed`. */
  draining(): boolean;
  /** Whether a hello's client may stay; the refusal it is answered with when not. */
  admit?(peer: SocketPeer, clientName: string): WireError | undefined;
}

export interface Dispatcher {
  /** Acts on the frames a connection's decoder produced, in order. */
  onFrames(peer: SocketPeer, frames: readonly Frame[]): void;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** The dispatch table: one handler per method of METHODS; a missing one fails at once. */
function routesOf(handlers: HandlerTable): Map<string, Run> {
  const routes = new Map<string, Run>();
  for (const name of Object.keys(METHODS) as MethodName[]) {
    const run = handlers[name] as unknown;
    if (typeof run !== "function") throw new TypeError(`no handler for the method "${name}"`);
    routes.set(name, run as Run);
  }
  return routes;
}

/** The JSON-RPC error a handler's throw becomes; only refusals keep their message. */
function wireErrorOf(error: unknown): WireError | undefined {
  if (error instanceof McpPoolError) {
    return toWireError(error.code, error.message, error.detail);
  }
  return undefined;
}

/**
 * A handler's context: one object a request, its methods on the prototype, its signal the
 * request itself (InboundRequest: no AbortSignal built per call).
 */
class PeerRequestContext implements RequestContext {
  readonly #peer: SocketPeer;
  readonly #request: InboundRequest;

  constructor(
    peer: SocketPeer,
    request: InboundRequest,
    readonly id: JSONRPCID | undefined,
  ) {
    this.#peer = peer;
    this.#request = request;
  }

  get signal(): CallSignal {
    return this.#request.signal;
  }

  get connection(): RequestContext["connection"] {
    return this.#peer.info;
  }

  notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): boolean {
    return this.#peer.notify(name, params);
  }

  request<R extends DaemonRequestName>(
    name: R,
    params: DaemonParamsOf<R>,
    signal?: AbortSignal,
  ): Promise<DaemonResultOf<R>> {
    return this.#peer.requests.request(name, params, signal);
  }
}

export function createDispatcher(options: DispatchOptions): Dispatcher {
  const { log, draining } = options;
  const routes = routesOf(options.handlers);

  function invoke(
    peer: SocketPeer,
    id: JSONRPCID | undefined,
    method: MethodName,
    params: Record<string, unknown>,
  ): void {
    const run = routes.get(method) as Run;
    const request = peer.requests.begin(id);
    const ctx = new PeerRequestContext(peer, request, id);
    // The answer is written before the request counts as settled: in a drain, settling the
    // last one ends the connection, and an answer written after that would be lost.
    const succeed = (result: unknown): void => {
      peer.requests.end(id, request);
      if (id !== undefined) peer.respond(createJSONRPCSuccessResponse(id, result), id, method);
      peer.settled(draining());
    };
    const refuse = (error: unknown): void => {
      peer.requests.end(id, request);
      const wire = wireErrorOf(error);
      // A call whose client went away or withdrew it fails by design; nobody waits for it.
      if (wire === undefined && !request.aborted) {
        log.error?.(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
      const answer = wire ?? {
        code: JSONRPCErrorCode.InternalError,
        message: `internal error while handling ${method}`,
      };
      if (id !== undefined) peer.respond({ jsonrpc: "2.0", id, error: answer }, id);
      peer.settled(draining());
    };
    peer.started();
    let result: unknown;
    try {
      result = run(params, ctx);
    } catch (error) {
      refuse(error);
      return;
    }
    if (isThenable(result)) result.then(succeed, refuse);
    else succeed(result);
  }

  function onHello(peer: SocketPeer, id: JSONRPCID, params: Record<string, unknown>): void {
    const version = params.protocolVersion as number;
    if (version !== PROTOCOL_VERSION) {
      log.error?.(
        `refused client "${String(params.clientName)}" (pid ${String(params.pid)}): protocol ${version}, not ${PROTOCOL_VERSION}`,
      );
      const wire = toWireError(
        "protocol-mismatch",
        `this daemon speaks protocol ${PROTOCOL_VERSION}, the client ${version}: upgrade the older one`,
        { expected: PROTOCOL_VERSION, received: version },
      );
      peer.respond({ jsonrpc: "2.0", id, error: wire }, id);
      peer.end();
      return;
    }
    const refusal = options.admit?.(peer, String(params.clientName));
    if (refusal !== undefined) {
      peer.respond({ jsonrpc: "2.0", id, error: refusal }, id);
      peer.end();
      return;
    }
    // Ready before the handler answers, so a client may pipeline requests behind hello.
    peer.ready(params.clientName as string, params.pid as number);
    invoke(peer, id, "hello", params);
  }

  function onMessage(peer: SocketPeer, message: unknown): void {
    const beforeHello = peer.phase === "hello";
    const envelope = readEnvelope(message, beforeHello);
    switch (envelope.kind) {
      case "refuse":
        peer.fail(envelope.id, envelope.code, envelope.message);
        if (beforeHello) peer.end();
        return;
      case "answer":
        peer.requests.answer(envelope.message);
        return;
      case "cancel":
        peer.requests.cancel(envelope.id);
        return;
      case "ignore":
        return;
      case "hello":
        return onHello(peer, envelope.id, envelope.params);
      case "call": {
        const { id } = envelope;
        if (!draining()) return invoke(peer, id, envelope.method, envelope.params);
        if (id === undefined) return;
        const wire = toWireError("closed", "the daemon is shutting down");
        return peer.respond({ jsonrpc: "2.0", id, error: wire }, id);
      }
    }
  }

  return {
    onFrames(peer, frames) {
      const { maxFrameBytes } = peer.limits;
      for (const frame of frames) {
        if (peer.phase === "closing") return;
        if (frame.ok) {
          onMessage(peer, frame.value);
          continue;
        }
        const { reason, message, bytes } = frame.error;
        if (reason === "oversize") {
          log.error?.(`dropping client ${peer.info.id}: a frame passed ${maxFrameBytes} bytes`);
          peer.fail(null, JSONRPCErrorCode.InvalidRequest, `Invalid Request: ${message}`, {
            bytes,
            limit: maxFrameBytes,
          });
          peer.end();
          return;
        }
        peer.fail(null, JSONRPCErrorCode.ParseError, `Parse error: ${message}`);
        if (peer.phase === "hello") peer.end();
      }
    },
  };
}
