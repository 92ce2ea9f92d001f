/**
 * The requests in flight on one connection, both ways. Each request a client
 * sends gets its own signal, aborted when the client withdraws it (`request/cancel`)
 * or the connection closes — so a handler passing it on to the pool cancels the call
 * upstream. The daemon's own requests (`elicit`, `sample`) are matched to the client's answers here,
 * withdrawn with `request/cancel` when their signal aborts, and failed when the connection
 * closes. Ids are per connection: two clients using the same ids never meet here.
 */
import { createJSONRPCNotification, createJSONRPCRequest, type JSONRPCID } from "mcpool-protocol";
import {
  CANCEL,
  McpPoolError,
  fromWireError,
  type DaemonParamsOf,
  type DaemonRequestName,
  type DaemonResultOf,
  type WireError,
} from "mcpool-protocol";
import type { CallSignal } from "../../pool/core/types.js";

interface Outbound {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One request of the client's while its handler runs, and the signal its handler is given:
 * aborted when the client withdraws the request or the connection closes. Not an
 * AbortSignal, which Node 20 builds with ObjectSetPrototypeOf (3.3 µs, and 5 with its
 * listener, on every call), but the CallSignal the pool reads of one: `aborted`,
 * `reason` and its "abort" listeners, each called once.
 */
export class InboundRequest implements CallSignal {
  #aborted = false;
  #reason: unknown;
  /** Its one listener as it is (a call's: the pool's request), in an array only for more. */
  #listeners: (() => void) | (() => void)[] | undefined;

  get signal(): CallSignal {
    return this;
  }

  /** Whether the answer is no longer wanted. */
  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  /** As on an AbortSignal: a listener added once aborted is never called. */
  addEventListener(_type: "abort", listener: () => void): void {
    if (this.#aborted) return;
    const listeners = this.#listeners;
    if (listeners === undefined) this.#listeners = listener;
    else if (typeof listeners === "function") this.#listeners = [listeners, listener];
    else listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === listener) this.#listeners = undefined;
    else if (Array.isArray(listeners)) {
      const at = listeners.indexOf(listener);
      if (at !== -1) listeners.splice(at, 1);
    }
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const held = this.#listeners;
    const listeners = held === undefined ? [] : typeof held === "function" ? [held] : held;
    this.#listeners = undefined;
    for (const listener of listeners) {
      // One listener's throw does not keep the others from hearing of the abort.
      try {
        listener();
      } catch {
        // A listener's own failure is its own; the request is aborted all the same.
      }
    }
  }
}

export class PeerRequests {
  /** Requests the client sent, by id, while their handlers run. */
  readonly #inbound = new Map<JSONRPCID, InboundRequest>();
  /** Every handler running, notifications (no id) included: all abort on close. */
  readonly #running = new Set<InboundRequest>();
  readonly #outbound = new Map<number, Outbound>();
  #lastId = 0;
  #closed: Error | undefined;
  readonly #send: (message: object) => boolean;

  /** `send` writes one message to the client; false when it could not. */
  constructor(send: (message: object) => boolean) {
    this.#send = send;
  }

  /** A request of the client begins: what its handler's signal comes from. */
  begin(id: JSONRPCID | undefined): InboundRequest {
    const request = new InboundRequest();
    if (this.#closed) request.abort(this.#closed);
    this.#running.add(request);
    if (id !== undefined && id !== null) this.#inbound.set(id, request);
    return request;
  }

  /** The request's handler settled. */
  end(id: JSONRPCID | undefined, request: InboundRequest): void {
    this.#running.delete(request);
    if (id !== undefined && id !== null && this.#inbound.get(id) === request) {
      this.#inbound.delete(id);
    }
  }

  /** `request/cancel` from the client: its request `id` is no longer wanted. */
  cancel(id: JSONRPCID): void {
    const request = this.#inbound.get(id);
    if (!request) return;
    this.#inbound.delete(id);
    request.abort(new DOMException("the client cancelled the request", "AbortError"));
  }

  /** Sends the client a request; rejects when `signal` aborts (the client is told) or on close. */
  request<R extends DaemonRequestName>(
    name: R,
    params: DaemonParamsOf<R>,
    signal?: AbortSignal,
  ): Promise<DaemonResultOf<R>> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = ++this.#lastId;
    return new Promise<DaemonResultOf<R>>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#outbound.delete(id)) return;
        this.#send(createJSONRPCNotification(CANCEL.method, { id }));
        reject(signal?.reason);
      };
      const settle =
        <T>(done: (value: T) => void) =>
        (value: T) => {
          signal?.removeEventListener("abort", onAbort);
          done(value);
        };
      this.#outbound.set(id, {
        resolve: settle(resolve as (value: unknown) => void),
        reject: settle(reject),
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      if (!this.#send(createJSONRPCRequest(id, name, params))) {
        this.#outbound.delete(id);
        settle(reject)(new McpPoolError("daemon-unavailable", "the client cannot be written to"));
      }
    });
  }

  /** An answer from the client; false when it answers nothing this side asked. */
  answer(message: Record<string, unknown>): boolean {
    const id = message.id;
    if (typeof id !== "number") return false;
    const pending = this.#outbound.get(id);
    if (!pending) return false;
    this.#outbound.delete(id);
    if (isRecord(message.error))
      pending.reject(fromWireError(message.error as unknown as WireError));
    else pending.resolve(message.result);
    return true;
  }

  /** The connection closed: every handler aborts, every request of ours fails. Idempotent. */
  close(reason: Error): void {
    if (this.#closed) return;
    this.#closed = reason;
    for (const request of this.#running) request.abort(reason);
    this.#running.clear();
    this.#inbound.clear();
    const outbound = [...this.#outbound.values()];
    this.#outbound.clear();
    for (const pending of outbound) pending.reject(reason);
  }
}
