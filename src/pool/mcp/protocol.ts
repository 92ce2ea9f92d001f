/**
 * The protocol under the pool's MCP client (mcp/client.ts), as the SDK's `Protocol` is
 * under its `Client`: JSON-RPC requests over an SDK Transport with a timeout, cancellation
 * (`notifications/cancelled` both ways) and progress; the peer's requests and
 * notifications handed to handlers by method; every pending request failed with
 * ConnectionClosed when the transport closes. No message is parsed beyond its envelope.
 *
 * Progress is handed on as it is read, not a microtask later as the SDK does, so a call's
 * last progress notification comes before the answer read in the same chunk.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  ClientCapabilities,
  Implementation,
  LoggingLevel,
  JSONRPCMessage,
  RequestId,
} from "@modelcontextprotocol/sdk/types.js";

import type { JSONRPCError } from "mcpool-protocol";
import { ErrorCode, isMcpError, McpError } from "../core/mcp-error.js";
import type { CallSignal } from "../core/types.js";
import { SENT } from "../transport/sent.js";

/** The options of a request's abort listener: one object, not one a request. */
const ONCE = { once: true } as const;

/** A request's timeout when none is given, ms: the SDK's. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** One progress notification of a request, without its token. */
export interface Progress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
  [key: string]: unknown;
}

/** The SDK's RequestOptions, as far as the pool and its callers use them. */
export interface RequestOptions {
  /** ms; default DEFAULT_REQUEST_TIMEOUT_MS. On expiry the request is cancelled upstream. */
  timeout?: number | undefined;
  /** Aborting cancels the request upstream and rejects it with the signal's reason. */
  signal?: CallSignal | undefined;
  /** Asks the server for progress (a progressToken of the client's) and hands each here. */
  onprogress?: ((progress: Progress) => void) | undefined;
  /**
   * Progress of this request keeps reaching `onprogress` after its answer, until this signal
   * aborts: a 2025-11-25 task the request made keeps the request's progress token for the
   * task's lifetime (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks).
   */
  progressUntil?: AbortSignal | undefined;
  /** A progress notification restarts the timeout (bounded by maxTotalTimeout). */
  resetTimeoutOnProgress?: boolean | undefined;
  /** ms; a bound on the whole request however often progress restarts its timeout. */
  maxTotalTimeout?: number | undefined;
  /**
   * Who the request is for, on a modern connection: its `_meta` envelope names this
   * client and these capabilities instead of the pool's, and this log level instead of the
   * connection's, none when it has none. Ignored on a legacy one.
   */
  caller?:
    | { clientInfo?: Implementation; capabilities?: ClientCapabilities; logLevel?: LoggingLevel }
    | undefined;
  /**
   * Answers what an `input_required` result of this request asks (MRTR): the
   * result belongs to exactly this request, so its questions go to its own caller. Absent,
   * the client's own request handlers answer. Ignored on a legacy connection.
   */
  answer?: InputAnswerer | undefined;
}

/**
 * Answers one input request of a modern result (`elicitation/create`, `sampling/createMessage`…);
 * what it does not answer itself it hands to `local`, the client's own request handlers.
 */
export type InputAnswerer = (
  request: Message,
  signal: AbortSignal,
  local: (request: Message, signal: AbortSignal) => Promise<unknown>,
) => Promise<unknown>;

/** Anything that checks a result as a zod schema does: the SDK's schemas, a caller's own. */
export interface ResultSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
}

export interface Message {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/** What a handler of the peer's request gets beside the request. */
export interface RequestExtra {
  /** Aborted when the peer cancels the request or the connection closes. */
  signal: AbortSignal;
  requestId: RequestId;
}

export type RequestHandler = (request: Message, extra: RequestExtra) => unknown;
export type NotificationHandler = (notification: Message) => void | Promise<void>;

/** A handler may be registered by method name or by the SDK's schema of its message. */
export type MethodKey = string | { shape?: { method?: { value?: unknown } } };

interface Pending {
  resolve(result: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout | undefined;
  timeout: number;
  started: number;
  options: RequestOptions | undefined;
  onAbort: (() => void) | undefined;
}

function methodOf(key: MethodKey): string {
  if (typeof key === "string") return key;
  const method = key.shape?.method?.value;
  if (typeof method !== "string") throw new Error("Schema is missing a method literal");
  return method;
}

export function isSchema(value: unknown): value is ResultSchema<unknown> {
  return typeof (value as { safeParse?: unknown } | undefined)?.safeParse === "function";
}

export function parsed<T>(schema: ResultSchema<T>, result: unknown): T {
  const outcome = schema.safeParse(result);
  if (!outcome.success) throw outcome.error;
  return outcome.data;
}

export class McpProtocol {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  /** Notifications no handler was set for. */
  fallbackNotificationHandler?: NotificationHandler | undefined;

  #transport: Transport | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  /** Answered requests whose progress still goes on (RequestOptions.progressUntil), by token. */
  readonly #lingering = new Map<number, (progress: Progress) => void>();
  readonly #requestHandlers = new Map<string, RequestHandler>([["ping", () => ({})]]);
  readonly #notificationHandlers = new Map<string, NotificationHandler>();
  /** The peer's requests being handled, by id: cancelled by the peer or a close. */
  readonly #handling = new Map<RequestId, AbortController>();

  get transport(): Transport | undefined {
    return this.#transport;
  }

  /** The id the next request gets: a connection handed to another daemon goes on from it. */
  protected get nextRequestId(): number {
    return this.#nextId;
  }

  protected set nextRequestId(id: number) {
    this.#nextId = Math.max(this.#nextId, id);
  }

  /** Takes `transport` over (its callbacks set before still run first) and starts it. */
  protected async attach(transport: Transport): Promise<void> {
    if (this.#transport) throw new Error("Already connected to a transport");
    this.#transport = transport;
    const { onclose, onerror, onmessage } = transport;
    transport.onclose = () => {
      onclose?.();
      this.#closed();
    };
    transport.onerror = (error) => {
      onerror?.(error);
      this.onerror?.(error);
    };
    transport.onmessage = (message, extra) => {
      onmessage?.(message, extra);
      this.#receive(message);
    };
    await transport.start();
  }

  async close(): Promise<void> {
    await this.#transport?.close();
  }

  /**
   * Sends a request and resolves with its result as received, or checked by `schema` when
   * one is given (the SDK's `request(request, schema, options)` works unchanged).
   */
  request<T = unknown>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T> {
    const schema = isSchema(schemaOrOptions) ? schemaOrOptions : undefined;
    const options = schema ? maybeOptions : (schemaOrOptions as RequestOptions | undefined);
    const sent = this.#send(request, options);
    return schema ? sent.then((result) => parsed(schema, result)) : (sent as Promise<T>);
  }

  #send(request: Message, options: RequestOptions | undefined): Promise<unknown> {
    const transport = this.#transport;
    if (!transport) return Promise.reject(new Error("Not connected"));
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    let params = request.params;
    if (options?.onprogress) {
      params = { ...params, _meta: { ...(params?._meta ?? {}), progressToken: id } };
    }
    const message = (
      params === undefined
        ? { jsonrpc: "2.0", id, method: request.method }
        : { jsonrpc: "2.0", id, method: request.method, params }
    ) as JSONRPCMessage;
    return new Promise((resolve, reject) => {
      const timeout = options?.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
      const pending: Pending = {
        resolve,
        reject,
        // Infinity: a request that stays open until answered or cancelled (subscriptions/listen).
        timer: Number.isFinite(timeout) ? setTimeout(() => this.#timedOut(id), timeout) : undefined,
        timeout,
        started: Date.now(),
        options,
        onAbort: undefined,
      };
      if (signal) {
        pending.onAbort = () => this.#cancel(id, signal.reason);
        signal.addEventListener("abort", pending.onAbort, ONCE);
      }
      this.#pending.set(id, pending);
      const sent = transport.send(message);
      // A message already written can fail no more: no handler, promise or microtask for it.
      if (sent !== SENT) sent.catch((error: unknown) => this.#take(id)?.reject(error));
    });
  }

  /** Sends a notification. */
  async notification(notification: Message): Promise<void> {
    const transport = this.#transport;
    if (!transport) throw new Error("Not connected");
    await transport.send({ jsonrpc: "2.0", ...notification } as JSONRPCMessage);
  }

  /**
   * Runs this side's own handler of `method` as if the peer had asked, for a request the
   * peer embeds in a result instead of sending (a modern `input_required`); rejects with
   * MethodNotFound when there is none.
   */
  protected async answerLocally(request: Message, signal: AbortSignal): Promise<unknown> {
    const handler = this.#requestHandlers.get(request.method);
    if (handler === undefined) {
      throw new McpError(ErrorCode.MethodNotFound, `No handler for ${request.method}`);
    }
    return handler(request, { signal, requestId: `local-${this.#nextId}` });
  }

  setRequestHandler(method: MethodKey, handler: RequestHandler): void {
    this.#requestHandlers.set(methodOf(method), handler);
  }

  removeRequestHandler(method: MethodKey): void {
    this.#requestHandlers.delete(methodOf(method));
  }

  setNotificationHandler(method: MethodKey, handler: NotificationHandler): void {
    this.#notificationHandlers.set(methodOf(method), handler);
  }

  removeNotificationHandler(method: MethodKey): void {
    this.#notificationHandlers.delete(methodOf(method));
  }

  #receive(message: JSONRPCMessage): void {
    const m = message as {
      id?: RequestId;
      method?: unknown;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: JSONRPCError;
    };
    if (typeof m.method === "string") {
      if (m.id !== undefined) this.#onRequest(m.id, m as Message);
      else this.#onNotification(m as Message);
    } else if (m.id !== undefined && ("result" in m || "error" in m)) {
      this.#onResponse(m.id, m.result, m.error);
    } else {
      this.onerror?.(new Error(`Unknown message type: ${JSON.stringify(message)}`));
    }
  }

  #onResponse(id: RequestId, result: unknown, error: JSONRPCError | undefined): void {
    const pending = this.#take(Number(id));
    const until = pending?.options?.progressUntil;
    const onprogress = pending?.options?.onprogress;
    if (error === undefined && until !== undefined && onprogress !== undefined && !until.aborted) {
      // Kept before the answer is handed on: progress read right after it still finds its token.
      const token = Number(id);
      this.#lingering.set(token, onprogress);
      until.addEventListener("abort", () => this.#lingering.delete(token), { once: true });
    }
    if (pending === undefined) {
      this.onerror?.(new Error(`Received a response for an unknown message ID: ${String(id)}`));
    } else if (error !== undefined) {
      pending.reject(new McpError(error.code, error.message, error.data));
    } else {
      pending.resolve(result);
    }
  }

  #onNotification(notification: Message): void {
    const { method, params } = notification;
    if (method === "notifications/progress") return this.#onProgress(params);
    if (method === "notifications/cancelled") {
      const requestId = params?.requestId as RequestId | undefined;
      if (requestId !== undefined) this.#handling.get(requestId)?.abort(params?.reason);
      return;
    }
    const handler = this.#notificationHandlers.get(method) ?? this.fallbackNotificationHandler;
    if (handler === undefined) return;
    const failed = (error: unknown): void =>
      this.onerror?.(new Error(`Uncaught error in notification handler: ${String(error)}`));
    try {
      const done = handler(notification);
      if (done instanceof Promise) done.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  #onProgress(params: Record<string, unknown> | undefined): void {
    const { progressToken, ...progress } = params ?? {};
    const id = Number(progressToken);
    const pending = this.#pending.get(id);
    const lingering = this.#lingering.get(id);
    if (pending === undefined && lingering !== undefined) return lingering(progress as Progress);
    const onprogress = pending?.options?.onprogress;
    if (pending === undefined || onprogress === undefined) {
      this.onerror?.(
        new Error(
          `Received a progress notification for an unknown token: ${String(progressToken)}`,
        ),
      );
      return;
    }
    if (pending.options?.resetTimeoutOnProgress) {
      const max = pending.options.maxTotalTimeout;
      const elapsed = Date.now() - pending.started;
      if (max !== undefined && elapsed >= max) {
        this.#take(id);
        pending.reject(
          new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", {
            maxTotalTimeout: max,
            totalElapsed: elapsed,
          }),
        );
        return;
      }
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.#timedOut(id), pending.timeout);
    }
    onprogress(progress as Progress);
  }

  #onRequest(id: RequestId, request: Message): void {
    const transport = this.#transport;
    const answer = (
      reply: { result: unknown } | { error: JSONRPCError },
    ): Promise<void> | undefined =>
      transport?.send({ jsonrpc: "2.0", id, ...reply } as JSONRPCMessage);
    const sendFailed = (error: unknown): void =>
      this.onerror?.(new Error(`Failed to send response: ${String(error)}`));
    const handler = this.#requestHandlers.get(request.method);
    if (handler === undefined) {
      answer({ error: { code: ErrorCode.MethodNotFound, message: "Method not found" } })?.catch(
        sendFailed,
      );
      return;
    }
    const controller = new AbortController();
    this.#handling.set(id, controller);
    const extra: RequestExtra = { signal: controller.signal, requestId: id };
    Promise.resolve()
      .then(() => handler(request, extra))
      .then(
        (result) => (controller.signal.aborted ? undefined : answer({ result })),
        (error: { code?: unknown; message?: string; data?: unknown }) => {
          if (controller.signal.aborted) return;
          const code = Number.isSafeInteger(error.code) ? (error.code as number) : undefined;
          return answer({
            error: {
              code: code ?? ErrorCode.InternalError,
              message: error.message ?? "Internal error",
              ...(error.data !== undefined ? { data: error.data } : {}),
            },
          });
        },
      )
      .catch(sendFailed)
      .finally(() => {
        if (this.#handling.get(id) === controller) this.#handling.delete(id);
      });
  }

  /** Forgets request `id` (its timer, its abort listener) and hands it over; undefined when settled. */
  #take(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (pending.onAbort) pending.options?.signal?.removeEventListener("abort", pending.onAbort);
    return pending;
  }

  #timedOut(id: number): void {
    const timeout = this.#pending.get(id)?.timeout;
    this.#cancel(id, new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout }));
  }

  /**
   * Gives up on request `id`: the peer is told `reason`, the caller gets it as an MCP error
   * (an abort's reason as a RequestTimeout one, as the SDK does).
   */
  #cancel(id: number, reason: unknown): void {
    const pending = this.#take(id);
    if (pending === undefined) return;
    this.#transport
      ?.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: String(reason) },
      } as JSONRPCMessage)
      .catch((error: unknown) =>
        this.onerror?.(new Error(`Failed to send cancellation: ${String(error)}`)),
      );
    pending.reject(
      isMcpError(reason) ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)),
    );
  }

  /** The transport closed: every request fails with ConnectionClosed, every handler is aborted. */
  #closed(): void {
    const pending = [...this.#pending.keys()].map((id) => this.#take(id));
    for (const controller of this.#handling.values()) controller.abort();
    this.#handling.clear();
    this.#lingering.clear();
    this.#transport = undefined;
    this.onclose?.();
    const error = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
    for (const request of pending) request?.reject(error);
  }
}
