/**
 * The pool's MCP client: the protocol of the SDK's `Client` (initialize handshake, requests
 * with timeouts, cancellation and progress, the server's requests and notifications)
 * over any SDK Transport, doing only what a pool needs (issue 16).
 *
 * Why not the SDK's Client: it parses every message with zod and loads AJV and zod's
 * schemas with it (15 MB of a daemon's 80 at idle), and a forwarded call paid for a
 * promise chain, an AbortSignal and a schema parse of a result the agent re-reads anyway.
 * Here a result is handed on as received; a caller that wants it checked passes a schema
 * (anything with `safeParse`, as the SDK takes), and a tool's output schema is still
 * checked, by AJV loaded with the first such call. The method names and signatures are
 * the SDK Client's, so `pool.client(id)` serves code written against it.
 *
 * What it leaves out: tasks (the pool declares no `tasks` capability) and the SDK's
 * strict capability checks (off by default there too).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallToolRequest,
  CallToolResult,
  ClientCapabilities,
  CompleteRequest,
  CompleteResult,
  GetPromptRequest,
  GetPromptResult,
  Implementation,
  JSONRPCMessage,
  ListPromptsRequest,
  ListPromptsResult,
  ListResourcesRequest,
  ListResourcesResult,
  ListResourceTemplatesRequest,
  ListResourceTemplatesResult,
  ListToolsRequest,
  ListToolsResult,
  LoggingLevel,
  ReadResourceRequest,
  ReadResourceResult,
  RequestId,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";

import { ErrorCode, isMcpError, McpError } from "./mcp-error.js";
import { outputChecker, type OutputCheck } from "./output-schema.js";

/** The protocol version the client asks for, and those it accepts (the SDK's, 1.32). */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

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
  signal?: AbortSignal | undefined;
  /** Asks the server for progress (a progressToken of the client's) and hands each here. */
  onprogress?: ((progress: Progress) => void) | undefined;
  /** A progress notification restarts the timeout (bounded by maxTotalTimeout). */
  resetTimeoutOnProgress?: boolean | undefined;
  /** ms; a bound on the whole request however often progress restarts its timeout. */
  maxTotalTimeout?: number | undefined;
}

/** Anything that checks a result as a zod schema does: the SDK's schemas, a caller's own. */
export interface ResultSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
}

interface Message {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/** What a handler of the server's request gets beside the request. */
export interface RequestExtra {
  /** Aborted when the server cancels the request or the connection closes. */
  signal: AbortSignal;
  requestId: RequestId;
}

export type RequestHandler = (request: Message, extra: RequestExtra) => unknown;
export type NotificationHandler = (notification: Message) => void | Promise<void>;

/** A handler may be registered by method name or by the SDK's schema of its message. */
type MethodKey = string | { shape?: { method?: { value?: unknown } } };

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

function isSchema(value: unknown): value is ResultSchema<unknown> {
  return typeof (value as { safeParse?: unknown } | undefined)?.safeParse === "function";
}

export interface McpClientOptions {
  capabilities?: ClientCapabilities;
}

export class McpClient {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  /** Notifications no handler was set for. */
  fallbackNotificationHandler?: NotificationHandler | undefined;

  readonly #info: Implementation;
  readonly #capabilities: ClientCapabilities;
  #transport: Transport | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #requestHandlers = new Map<string, RequestHandler>();
  readonly #notificationHandlers = new Map<string, NotificationHandler>();
  /** The server's requests being handled, by id: cancelled by the server or a close. */
  readonly #handling = new Map<RequestId, AbortController>();
  #serverCapabilities: ServerCapabilities | undefined;
  #serverVersion: Implementation | undefined;
  #instructions: string | undefined;
  readonly #outputSchemas = new Map<string, Tool["outputSchema"]>();
  readonly #outputChecks = new Map<string, OutputCheck>();

  constructor(info: Implementation, options: McpClientOptions = {}) {
    this.#info = info;
    this.#capabilities = options.capabilities ?? {};
    this.#requestHandlers.set("ping", () => ({}));
  }

  get transport(): Transport | undefined {
    return this.#transport;
  }

  /** Attaches to `transport`, starts it and makes the initialize handshake. */
  async connect(transport: Transport, options?: RequestOptions): Promise<void> {
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
    // A transport that already holds a session is a reconnect: no second handshake.
    if (transport.sessionId !== undefined) return;
    try {
      const result = (await this.request(
        {
          method: "initialize",
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: this.#capabilities,
            clientInfo: this.#info,
          },
        },
        options,
      )) as {
        protocolVersion?: unknown;
        capabilities?: ServerCapabilities;
        serverInfo?: Implementation;
        instructions?: string;
      };
      if (result === undefined || result === null || typeof result !== "object") {
        throw new Error(`Server sent invalid initialize result: ${String(result)}`);
      }
      const version = result.protocolVersion;
      if (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        throw new Error(`Server's protocol version is not supported: ${String(version)}`);
      }
      this.#serverCapabilities = result.capabilities ?? {};
      this.#serverVersion = result.serverInfo;
      this.#instructions = result.instructions;
      transport.setProtocolVersion?.(version);
      await this.notification({ method: "notifications/initialized" });
    } catch (error) {
      void this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.#transport?.close();
  }

  getServerCapabilities(): ServerCapabilities | undefined {
    return this.#serverCapabilities;
  }

  getServerVersion(): Implementation | undefined {
    return this.#serverVersion;
  }

  getInstructions(): string | undefined {
    return this.#instructions;
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
    const message = { jsonrpc: "2.0", id, method: request.method, params } as JSONRPCMessage;
    if (params === undefined) delete (message as { params?: unknown }).params;
    return new Promise((resolve, reject) => {
      const timeout = options?.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
      const pending: Pending = {
        resolve,
        reject,
        timer: undefined,
        timeout,
        started: Date.now(),
        options,
        onAbort: undefined,
      };
      pending.timer = setTimeout(() => this.#timedOut(id), timeout);
      if (signal) {
        pending.onAbort = () => this.#cancel(id, signal.reason);
        signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      this.#pending.set(id, pending);
      transport.send(message).catch((error: unknown) => {
        if (this.#settle(id)) reject(error);
      });
    });
  }

  /** Sends a notification. */
  async notification(notification: Message): Promise<void> {
    const transport = this.#transport;
    if (!transport) throw new Error("Not connected");
    await transport.send({ jsonrpc: "2.0", ...notification } as JSONRPCMessage);
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

  ping(options?: RequestOptions): Promise<Record<string, never>> {
    return this.request({ method: "ping" }, options);
  }

  async listTools(
    params?: ListToolsRequest["params"],
    options?: RequestOptions,
  ): Promise<ListToolsResult> {
    const result = await this.request<ListToolsResult>({ method: "tools/list", params }, options);
    if (!result || !Array.isArray(result.tools)) {
      throw new McpError(ErrorCode.InvalidParams, "tools/list answered without a tools array");
    }
    this.cacheToolMetadata(result.tools);
    return result;
  }

  /** Remembers the output schemas of `tools` (the whole list), for callTool to check. */
  cacheToolMetadata(tools: Tool[]): void {
    this.#outputSchemas.clear();
    this.#outputChecks.clear();
    for (const tool of tools) {
      if (tool.outputSchema) this.#outputSchemas.set(tool.name, tool.outputSchema);
    }
  }

  /**
   * Calls a tool. A tool listed with an output schema must answer structured content that
   * fits it, unless it answered an error (the SDK Client's rule and messages).
   */
  async callTool(
    params: CallToolRequest["params"],
    schemaOrOptions?: ResultSchema<CallToolResult> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<CallToolResult> {
    const result = await this.request<CallToolResult>(
      { method: "tools/call", params },
      schemaOrOptions,
      maybeOptions,
    );
    const schema = this.#outputSchemas.get(params.name);
    if (schema === undefined) return result;
    if (!result.structuredContent && !result.isError) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Tool ${params.name} has an output schema but did not return structured content`,
      );
    }
    if (result.structuredContent) {
      let check = this.#outputChecks.get(params.name);
      if (check === undefined) {
        check = await outputChecker(schema);
        this.#outputChecks.set(params.name, check);
      }
      check(result.structuredContent);
    }
    return result;
  }

  complete(params: CompleteRequest["params"], options?: RequestOptions): Promise<CompleteResult> {
    return this.request({ method: "completion/complete", params }, options);
  }

  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<object> {
    return this.request({ method: "logging/setLevel", params: { level } }, options);
  }

  getPrompt(
    params: GetPromptRequest["params"],
    options?: RequestOptions,
  ): Promise<GetPromptResult> {
    return this.request({ method: "prompts/get", params }, options);
  }

  listPrompts(
    params?: ListPromptsRequest["params"],
    options?: RequestOptions,
  ): Promise<ListPromptsResult> {
    return this.request({ method: "prompts/list", params }, options);
  }

  listResources(
    params?: ListResourcesRequest["params"],
    options?: RequestOptions,
  ): Promise<ListResourcesResult> {
    return this.request({ method: "resources/list", params }, options);
  }

  listResourceTemplates(
    params?: ListResourceTemplatesRequest["params"],
    options?: RequestOptions,
  ): Promise<ListResourceTemplatesResult> {
    return this.request({ method: "resources/templates/list", params }, options);
  }

  readResource(
    params: ReadResourceRequest["params"],
    options?: RequestOptions,
  ): Promise<ReadResourceResult> {
    return this.request({ method: "resources/read", params }, options);
  }

  subscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    return this.request({ method: "resources/subscribe", params }, options);
  }

  unsubscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    return this.request({ method: "resources/unsubscribe", params }, options);
  }

  sendRootsListChanged(): Promise<void> {
    return this.notification({ method: "notifications/roots/list_changed" });
  }

  #receive(message: JSONRPCMessage): void {
    const m = message as {
      id?: RequestId;
      method?: unknown;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
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

  #onResponse(
    id: RequestId,
    result: unknown,
    error: { code: number; message: string; data?: unknown } | undefined,
  ): void {
    const pending = this.#pending.get(Number(id));
    if (pending === undefined || !this.#settle(Number(id))) {
      this.onerror?.(new Error(`Received a response for an unknown message ID: ${String(id)}`));
      return;
    }
    if (error !== undefined) pending.reject(new McpError(error.code, error.message, error.data));
    else pending.resolve(result);
  }

  #onNotification(notification: Message): void {
    const { method } = notification;
    if (method === "notifications/progress") return this.#onProgress(notification.params);
    if (method === "notifications/cancelled") {
      const requestId = notification.params?.requestId as RequestId | undefined;
      if (requestId !== undefined)
        this.#handling.get(requestId)?.abort(notification.params?.reason);
      return;
    }
    const handler = this.#notificationHandlers.get(method) ?? this.fallbackNotificationHandler;
    if (handler === undefined) return;
    try {
      const done = handler(notification);
      if (done instanceof Promise) done.catch((error: unknown) => this.#handlerFailed(error));
    } catch (error) {
      this.#handlerFailed(error);
    }
  }

  #handlerFailed(error: unknown): void {
    this.onerror?.(new Error(`Uncaught error in notification handler: ${String(error)}`));
  }

  /** Progress is handed on at once, so the last progress of a call comes before its answer. */
  #onProgress(params: Record<string, unknown> | undefined): void {
    const { progressToken, ...progress } = params ?? {};
    const id = Number(progressToken);
    const pending = this.#pending.get(id);
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
        const error = new McpError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", {
          maxTotalTimeout: max,
          totalElapsed: elapsed,
        });
        this.#settle(id);
        pending.reject(error);
        return;
      }
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.#timedOut(id), pending.timeout);
    }
    onprogress(progress as Progress);
  }

  #onRequest(id: RequestId, request: Message): void {
    const transport = this.#transport;
    const handler = this.#requestHandlers.get(request.method);
    if (handler === undefined) {
      void transport
        ?.send({
          jsonrpc: "2.0",
          id,
          error: { code: ErrorCode.MethodNotFound, message: "Method not found" },
        })
        .catch((error: unknown) => this.#sendFailed(error));
      return;
    }
    const controller = new AbortController();
    this.#handling.set(id, controller);
    const extra: RequestExtra = { signal: controller.signal, requestId: id };
    Promise.resolve()
      .then(() => handler(request, extra))
      .then(
        (result) => {
          if (controller.signal.aborted) return;
          return transport?.send({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
        },
        (error: { code?: unknown; message?: string; data?: unknown }) => {
          if (controller.signal.aborted) return;
          const code = Number.isSafeInteger(error.code) ? (error.code as number) : undefined;
          return transport?.send({
            jsonrpc: "2.0",
            id,
            error: {
              code: code ?? ErrorCode.InternalError,
              message: error.message ?? "Internal error",
              ...(error.data !== undefined ? { data: error.data } : {}),
            },
          } as JSONRPCMessage);
        },
      )
      .catch((error: unknown) => this.#sendFailed(error))
      .finally(() => {
        if (this.#handling.get(id) === controller) this.#handling.delete(id);
      });
  }

  #sendFailed(error: unknown): void {
    this.onerror?.(new Error(`Failed to send response: ${String(error)}`));
  }

  /** Forgets request `id`; false when it was already settled. */
  #settle(id: number): boolean {
    const pending = this.#pending.get(id);
    if (pending === undefined) return false;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (pending.onAbort) pending.options?.signal?.removeEventListener("abort", pending.onAbort);
    return true;
  }

  #timedOut(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    const error = new McpError(ErrorCode.RequestTimeout, "Request timed out", {
      timeout: pending.timeout,
    });
    this.#cancel(id, error);
  }

  /**
   * Gives up on request `id`: the server is told `reason`, the caller gets it as an MCP
   * error (an abort's reason as a RequestTimeout one, as the SDK does).
   */
  #cancel(id: number, reason: unknown): void {
    const pending = this.#pending.get(id);
    if (pending === undefined || !this.#settle(id)) return;
    this.#transport
      ?.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: String(reason) },
      } as JSONRPCMessage)
      .catch((sendError: unknown) =>
        this.onerror?.(new Error(`Failed to send cancellation: ${String(sendError)}`)),
      );
    pending.reject(
      isMcpError(reason) ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)),
    );
  }

  /** The transport closed: every request fails with ConnectionClosed, every handler is aborted. */
  #closed(): void {
    const pending = [...this.#pending.values()];
    for (const id of [...this.#pending.keys()]) this.#settle(id);
    for (const controller of this.#handling.values()) controller.abort();
    this.#handling.clear();
    this.#transport = undefined;
    this.onclose?.();
    const error = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
    for (const request of pending) request.reject(error);
  }
}

function parsed<T>(schema: ResultSchema<T>, result: unknown): T {
  const outcome = schema.safeParse(result);
  if (!outcome.success) throw outcome.error;
  return outcome.data;
}
