/**
 * One socket to the daemon: frames out and in, requests matched to their answers by id in
 * one pending map (json-rpc-2.0's client kept a second one, and a promise per request on
 * top; the messages are mcpool-protocol's), notifications handed up. It knows nothing of hello,
 * reconnecting or subscriptions (client.ts). When the socket closes, for whatever reason,
 * every request still pending fails at once with the reason. Requests go both ways: a
 * request this side gives up on is withdrawn with `request/cancel`, and the daemon's own
 * requests (`elicit`) are handed up with a signal its `request/cancel` aborts.
 */
import type { Socket } from "node:net";
import {
  createJSONRPCErrorResponse,
  createJSONRPCNotification,
  createJSONRPCRequest,
  createJSONRPCSuccessResponse,
  isJSONRPCResponse,
  JSONRPCErrorCode,
  type JSONRPCID,
  type JSONRPCResponse,
  CANCEL,
  DAEMON_REQUESTS,
  type DaemonParamsOf,
  type DaemonRequestName,
  type DaemonResultOf,
  frameText,
  type Frame,
  FrameDecoder,
  fromWireError,
  isDaemonRequestName,
  isNotificationName,
  isRecord,
  McpPoolError,
  type MethodName,
  type NotificationName,
  type ParamsOf,
  type PoolEvent,
  type ResultOf,
  toWireError,
} from "mcpool-protocol";

/** The streams of `pool/subscribe`; `eventTypes` absent is every type. */
export interface Streams {
  events: boolean;
  eventTypes?: PoolEvent["type"][];
  notifications: boolean;
  elicit: boolean;
  sample: boolean;
}

export interface ConnectionHooks {
  /** A notification the daemon pushed; `params` is as received, unchecked. */
  onNotification(name: NotificationName, params: unknown): void;
  /**
   * A request the daemon sent, its params checked; `signal` aborts when the daemon
   * withdraws it or the connection closes. Without this hook such requests are refused.
   */
  onRequest?(
    name: DaemonRequestName,
    params: DaemonParamsOf<DaemonRequestName>,
    signal: AbortSignal,
  ): Promise<DaemonResultOf<DaemonRequestName>>;
  /** The socket closed; pending requests have already failed with `error`. */
  onClose(error: McpPoolError): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

// "Method not found" is what a daemon-to-client request this client does not implement (a
// later protocol's) is answered with; "invalid params" and "internal error" the others.
const { MethodNotFound: METHOD_NOT_FOUND, InvalidParams: INVALID_PARAMS } = JSONRPCErrorCode;
const INTERNAL_ERROR = JSONRPCErrorCode.InternalError;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export class Connection {
  /** Streams the daemon has been asked to push on this connection. */
  subscribed: Streams = { events: false, notifications: false, elicit: false, sample: false };
  private readonly pending = new Map<number, Pending>();
  /** The daemon's requests being answered, by their id: `request/cancel` aborts one. */
  private readonly inbound = new Map<JSONRPCID, AbortController>();
  private lastId = 0;
  private closeError: McpPoolError | undefined;
  private readonly closedPromise: Promise<void>;

  constructor(
    private readonly socket: Socket,
    maxFrameBytes: number,
    private readonly hooks: ConnectionHooks,
  ) {
    const decoder = new FrameDecoder({ maxFrameBytes });
    socket.on("data", (chunk: Buffer) => this.receive(decoder.push(chunk)));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      this.closeError ??= new McpPoolError(
        "daemon-unavailable",
        `the connection to the daemon failed: ${error.code ?? error.message}`,
      );
    });
    this.closedPromise = new Promise((resolve) => {
      socket.once("close", () => {
        const error =
          this.closeError ??
          new McpPoolError("daemon-unavailable", "the daemon closed the connection");
        this.closeError = error;
        this.failPending(error);
        for (const controller of this.inbound.values()) controller.abort(error);
        this.inbound.clear();
        this.hooks.onClose(error);
        resolve();
      });
    });
  }

  get isOpen(): boolean {
    return this.closeError === undefined;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Whether this socket keeps the process alive. */
  setRef(held: boolean): void {
    if (held) this.socket.ref();
    else this.socket.unref();
  }

  request<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
    /** Told the request's JSON-RPC id before it is sent (the daemon's `elicit` names it). */
    onId?: (id: number) => void,
  ): Promise<ResultOf<M>> {
    if (this.closeError !== undefined) return Promise.reject(this.closeError);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const id = ++this.lastId;
    onId?.(id);
    const request = createJSONRPCRequest(id, method, params);
    let frame: string;
    try {
      frame = frameText(request);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const entry: Pending = {
        resolve: resolve as (value: unknown) => void,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal !== undefined) {
        entry.onAbort = () => this.abandon(id, abortReason(signal));
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.pending.set(id, entry);
      // Encoded before the request was registered: a value that is not JSON failed its own
      // call, synchronously. One pending map, ours: an answer settles it directly.
      this.socket.write(frame);
    });
  }

  /** Fails pending requests with `error` and closes; resolves once the socket is closed. */
  close(error: McpPoolError): Promise<void> {
    this.closeError ??= error;
    this.failPending(this.closeError);
    this.socket.destroy();
    return this.closedPromise;
  }

  private settle(response: JSONRPCResponse): void {
    // An error for no request (id null) is the daemon refusing the connection (its cap,
    // before hello): the reason every pending request fails with when it closes.
    if (response.id === null && response.error) {
      this.closeError ??= fromWireError(response.error);
      return;
    }
    if (typeof response.id !== "number") return;
    const entry = this.take(response.id);
    if (entry === undefined) return;
    if (response.error) entry.reject(fromWireError(response.error));
    else entry.resolve(response.result);
  }

  /** Drops a request the caller gave up on; a late answer to it is then ignored. */
  private abandon(id: number, reason: unknown): void {
    const entry = this.take(id);
    if (entry === undefined) return;
    entry.reject(reason);
    // The daemon aborts the request's work, and the pool cancels it upstream.
    this.send(createJSONRPCNotification(CANCEL.method, { id }));
  }

  /** Writes one message while the socket is open; a value that is not JSON is dropped. */
  private send(message: object): void {
    if (this.closeError !== undefined || this.socket.destroyed) return;
    try {
      this.socket.write(frameText(message));
    } catch {
      // frameText refused it: nothing was written.
    }
  }

  /** Answers one request of the daemon through hooks.onRequest. */
  private serve(id: JSONRPCID, name: string, params: unknown): void {
    const onRequest = this.hooks.onRequest;
    if (!isDaemonRequestName(name) || onRequest === undefined) {
      this.send(createJSONRPCErrorResponse(id, METHOD_NOT_FOUND, "Method not found"));
      return;
    }
    const problem = isRecord(params) ? DAEMON_REQUESTS[name].check(params) : "not an object";
    if (problem !== undefined) {
      this.send(createJSONRPCErrorResponse(id, INVALID_PARAMS, `Invalid params: ${problem}`));
      return;
    }
    const controller = new AbortController();
    this.inbound.set(id, controller);
    const answered = (message: object): void => {
      if (this.inbound.get(id) === controller) this.inbound.delete(id);
      // Withdrawn, or the connection closed: nobody waits for the answer.
      if (!controller.signal.aborted) this.send(message);
    };
    onRequest(name, params as DaemonParamsOf<typeof name>, controller.signal).then(
      (result) => answered(createJSONRPCSuccessResponse(id, result)),
      (error: unknown) => {
        const wire =
          error instanceof McpPoolError
            ? toWireError(error.code, error.message, error.detail)
            : { code: INTERNAL_ERROR, message: (error as Error)?.message ?? String(error) };
        answered({ jsonrpc: "2.0", id, error: wire });
      },
    );
  }

  private take(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    if (entry.onAbort !== undefined) entry.signal?.removeEventListener("abort", entry.onAbort);
    return entry;
  }

  private failPending(error: McpPoolError): void {
    const entries = [...this.pending.keys()].map((id) => this.take(id));
    if (entries.length === 0) return;
    // Sent and not answered: the daemon may or may not have acted on them (`inFlight`).
    const lost =
      error.code === "daemon-unavailable"
        ? new McpPoolError(error.code, error.message, { ...error.detail, inFlight: true })
        : error;
    for (const entry of entries) entry?.reject(lost);
  }

  private receive(frames: Frame[]): void {
    for (const frame of frames) {
      if (!frame.ok) {
        // An answer we cannot read belongs to some pending request we cannot name: the
        // only way not to leave it hanging is to drop the connection (client.ts redials).
        void this.close(
          new McpPoolError(
            "daemon-unavailable",
            `the daemon sent an unreadable frame: ${frame.error.message}`,
          ),
        );
        return;
      }
      const message = frame.value;
      if (!isRecord(message)) continue;
      if (isJSONRPCResponse(message)) {
        this.settle(message);
      } else if (typeof message.method === "string") {
        if (message.id !== undefined) {
          const id =
            typeof message.id === "string" || typeof message.id === "number" ? message.id : null;
          if (id === null) {
            this.send(createJSONRPCErrorResponse(id, METHOD_NOT_FOUND, "Method not found"));
          } else {
            this.serve(id, message.method, message.params);
          }
        } else if (message.method === CANCEL.method) {
          const params = isRecord(message.params) ? message.params : {};
          const withdrawn = CANCEL.check(params) === undefined ? (params.id as JSONRPCID) : null;
          const controller = withdrawn === null ? undefined : this.inbound.get(withdrawn);
          if (controller !== undefined) {
            this.inbound.delete(withdrawn as JSONRPCID);
            controller.abort(new DOMException("the daemon withdrew its request", "AbortError"));
          }
        } else if (isNotificationName(message.method)) {
          this.hooks.onNotification(message.method, message.params);
        }
      }
    }
  }
}
