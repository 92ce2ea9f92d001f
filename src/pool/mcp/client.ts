/**
 * The pool's MCP client: the SDK `Client`'s side of MCP — the initialize handshake, what
 * the server said about itself, the typed requests, a tool's output schema — over the
 * protocol in mcp/protocol.ts (requests with timeouts, cancellation and progress, the
 * server's requests and notifications), on any SDK Transport (issue 16).
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
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";

import { ErrorCode, isMcpError, McpError } from "./error.js";
import {
  asDiscoverResult,
  discoverFresh,
  envelopeMeta,
  META,
  MODERN_PROTOCOL_VERSION,
  mutualModernVersion,
  probeFailure,
  refusedAsModernOnly,
  supportedVersionsOf,
  EraMismatchError,
  type DiscoverResult,
  type Era,
  type EraPlan,
  type EraVerdict,
} from "./era.js";
import { httpErrorStatus } from "./http-client.js";
import {
  keyed,
  markAnsweredAfterInput,
  MAX_INPUT_ROUNDS,
  readResult,
  retryParams,
} from "./input-required.js";
import {
  isSchema,
  McpProtocol,
  parsed,
  type Message,
  type RequestOptions,
  type ResultSchema,
} from "./protocol.js";
import { outputChecker, type OutputCheck } from "./output-schema.js";
import type { HandedSession } from "./handed.js";
import { ACKNOWLEDGED, ChangeStream } from "./change-stream.js";
import { offeredTools, paramBookOf } from "./modern-fetch.js";

export {
  DEFAULT_REQUEST_TIMEOUT_MS,
  type NotificationHandler,
  type Progress,
  type RequestExtra,
  type RequestHandler,
  type RequestOptions,
  type ResultSchema,
} from "./protocol.js";

/** The protocol version the client asks for, and those it accepts (the SDK's, 1.32). */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

export interface McpClientOptions {
  capabilities?: ClientCapabilities;
}

export class McpClient extends McpProtocol {
  readonly #info: Implementation;
  readonly #capabilities: ClientCapabilities;
  #serverCapabilities: ServerCapabilities | undefined;
  #serverVersion: Implementation | undefined;
  #instructions: string | undefined;
  readonly #outputSchemas = new Map<string, Tool["outputSchema"]>();
  readonly #outputChecks = new Map<string, OutputCheck>();
  /** Set once the connection is modern: the version its requests name, what the server said. */
  #modern: { version: string; discover: DiscoverResult } | undefined;
  #protocolVersion: string | undefined;
  /** What connect() found, or the prior it was given. */
  #verdict: EraVerdict | undefined;
  /**
   * A modern connection's log level (no logging/setLevel), sent in the envelope of each
   * request that names no caller: the pool's own, a library's without one.
   */
  #logLevel: LoggingLevel | undefined;

  /** Told what the server offered that this client will not use (a tool it refuses). */
  warn: ((text: string) => void) | undefined;
  /** A modern connection's `subscriptions/listen` stream (SPEC H2). */
  readonly #changes = new ChangeStream({
    listen: (filter, signal) =>
      this.request(
        { method: "subscriptions/listen", params: { notifications: filter } },
        { timeout: Infinity, signal },
      ),
    capabilities: () => this.#serverCapabilities,
    failed: (error) => {
      if (isMcpError(error, ErrorCode.ConnectionClosed)) return;
      this.onerror?.(new Error(`the subscriptions/listen stream failed: ${String(error)}`));
    },
  });

  constructor(info: Implementation, options: McpClientOptions = {}) {
    super();
    this.#info = info;
    this.#capabilities = options.capabilities ?? {};
    this.setNotificationHandler(ACKNOWLEDGED, () => undefined);
  }

  /**
   * Attaches to `transport`, starts it and opens the connection: the initialize handshake,
   * or with a `plan`, whichever era the plan and the server's answers say (SPEC H1).
   */
  async connect(transport: Transport, options?: RequestOptions, plan?: EraPlan): Promise<void> {
    await this.attach(transport);
    // A transport that already holds a session is a reconnect: no second handshake.
    if (transport.sessionId !== undefined) return;
    // A child another daemon handed over: its session goes on where that daemon left it.
    const handed = (transport as { handedSession?: HandedSession }).handedSession;
    if (handed !== undefined) return this.#resume(handed);
    try {
      if (plan === undefined) return await this.#initialize(transport, options);
      await this.#open(transport, options, plan);
      // Nothing changes unsolicited in the modern era: the stream is asked for (SPEC H2).
      if (this.#modern !== undefined) this.#changes.start();
    } catch (error) {
      void this.close();
      throw error;
    }
  }

  async #open(transport: Transport, options: RequestOptions | undefined, plan: EraPlan) {
    const { pin, prior } = plan;
    if (prior?.era === "modern" && pin !== "legacy") {
      if (discoverFresh(prior, Date.now())) {
        this.#adopt(prior.version, prior.discover, prior);
        return;
      }
      // Its advertisement ran out (SEP-2549): asked again of this connection, era known.
      if (await this.#probe(options)) return;
      if (pin === MODERN_PROTOCOL_VERSION) throw new EraMismatchError("modern", "legacy");
    } else if (pin === MODERN_PROTOCOL_VERSION || (prior === undefined && plan.discoverFirst)) {
      if (pin !== "legacy" && (await this.#probe(options))) return;
      if (pin === MODERN_PROTOCOL_VERSION) throw new EraMismatchError("modern", "legacy");
    }
    try {
      await this.#initialize(transport, options);
      // A legacy verdict keeps its date: only its age retires it (era.ts).
      if (prior?.era === "legacy") this.#verdict = prior;
    } catch (error) {
      // A modern-only server refuses the handshake naming the revisions it speaks; it
      // keeps the connection open for a modern request, so this one serves on.
      if (!isMcpError(error) || !refusedAsModernOnly(error)) throw error;
      if (pin === "legacy") throw new EraMismatchError("legacy", "modern");
      if (!(await this.#probe(options))) throw error;
    }
  }

  async #initialize(transport: Transport, options: RequestOptions | undefined): Promise<void> {
    const result = (await super.request(
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
    this.#protocolVersion = version;
    this.#verdict = { era: "legacy", at: Date.now() };
    transport.setProtocolVersion?.(version);
    await this.notification({ method: "notifications/initialized" });
  }

  /**
   * `server/discover` at the modern version, once more at the version a -32022 names:
   * true once the connection is modern. False when the answer says legacy: any other
   * JSON-RPC error, a DiscoverResult with no version in common, an HTTP 4xx the modern
   * binding would not send. An outage (5xx, no answer, a sign-in wanted) is thrown: it is
   * no evidence of an era.
   */
  async #probe(options: RequestOptions | undefined): Promise<boolean> {
    let version = MODERN_PROTOCOL_VERSION;
    for (let attempt = 0; attempt < 2; attempt++) {
      let result: unknown;
      try {
        result = await super.request(
          this.#modernMessage({ method: "server/discover" }, version),
          options,
        );
      } catch (error) {
        const failure = probeFailure(error, httpErrorStatus(error));
        if (failure === "outage") throw error;
        if (failure === "legacy") return false;
        version = failure.retryAt;
        continue;
      }
      const read = readResult("server/discover", result);
      const discover = read.kind === "complete" ? asDiscoverResult(read.result) : undefined;
      const mutual = discover ? mutualModernVersion(discover.supportedVersions) : undefined;
      if (discover === undefined || mutual === undefined) return false;
      this.#adopt(mutual, discover, { era: "modern", version: mutual, discover, at: Date.now() });
      return true;
    }
    return false;
  }

  /** What another daemon needs to go on with this connection (handed.ts). */
  handedSession(): HandedSession | undefined {
    if (this.#protocolVersion === undefined) return undefined;
    return {
      protocolVersion: this.#protocolVersion,
      capabilities: this.#serverCapabilities ?? {},
      ...(this.#serverVersion ? { serverInfo: this.#serverVersion } : {}),
      ...(this.#instructions !== undefined ? { instructions: this.#instructions } : {}),
      ...(this.#verdict ? { verdict: this.#verdict } : {}),
      ...(this.#modern ? { modern: this.#modern } : {}),
      nextId: this.nextRequestId,
    };
  }

  #resume(session: HandedSession): void {
    if (session.modern) {
      const { version, discover } = session.modern;
      this.#adopt(
        version,
        discover,
        session.verdict ?? { era: "modern", version, discover, at: Date.now() },
      );
      this.#changes.start();
    } else {
      this.#protocolVersion = session.protocolVersion;
      this.#verdict = session.verdict ?? { era: "legacy", at: Date.now() };
    }
    this.#serverCapabilities = session.capabilities;
    this.#serverVersion = session.serverInfo;
    this.#instructions = session.instructions;
    this.nextRequestId = session.nextId;
    this.transport?.setProtocolVersion?.(session.protocolVersion);
  }

  #adopt(version: string, discover: DiscoverResult, verdict: EraVerdict): void {
    this.#modern = { version, discover };
    this.#protocolVersion = version;
    this.#verdict = verdict;
    this.#serverCapabilities = (discover.capabilities ?? {}) as ServerCapabilities;
    this.#serverVersion = discover._meta?.[META.serverInfo] as Implementation | undefined;
    this.#instructions = discover.instructions;
  }

  /** `request` with the modern envelope in its `_meta`, at `version`. */
  #modernMessage(request: Message, version: string, options?: RequestOptions): Message {
    const caller = options?.caller;
    return {
      method: request.method,
      params: {
        ...request.params,
        _meta: envelopeMeta(
          {
            protocolVersion: version,
            clientInfo: caller?.clientInfo ?? this.#info,
            clientCapabilities: caller?.capabilities ?? this.#capabilities,
            // A caller's own level, or none: never another caller's (SPEC H2).
            logLevel: caller ? caller.logLevel : this.#logLevel,
          },
          request.params?._meta as Record<string, unknown> | undefined,
        ),
      },
    };
  }

  /**
   * On a modern connection every request carries the envelope, its result is read by its
   * resultType, an `input_required` is answered by this client's own handlers and sent
   * again with the answers and the server's state untouched, and a -32022 is sent once
   * more at a version both speak (SPEC H2). On a legacy one, the protocol's request as is.
   */
  override request<T = unknown>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T> {
    if (this.#modern === undefined) return super.request(request, schemaOrOptions, maybeOptions);
    // No such method in the modern era (a passthrough's): the level of caller-less requests.
    if (request.method === "logging/setLevel") {
      return this.setLoggingLevel(request.params?.level as LoggingLevel) as Promise<T>;
    }
    const schema = isSchema(schemaOrOptions) ? (schemaOrOptions as ResultSchema<T>) : undefined;
    const options = schema ? maybeOptions : (schemaOrOptions as RequestOptions | undefined);
    const sent = this.#modernRequest(request, options);
    return schema ? sent.then((result) => parsed(schema, result)) : (sent as Promise<T>);
  }

  async #modernRequest(request: Message, options: RequestOptions | undefined): Promise<unknown> {
    const modern = this.#modern!;
    let params = request.params;
    let retriedVersion = false;
    for (let round = 0; round <= MAX_INPUT_ROUNDS;) {
      let result: unknown;
      try {
        result = await super.request(
          this.#modernMessage({ method: request.method, params }, modern.version, options),
          options,
        );
      } catch (error) {
        const supported = isMcpError(error) ? supportedVersionsOf(error) : undefined;
        const mutual = supported ? mutualModernVersion(supported) : undefined;
        // Once, at the version the rejection names (SEP-2575), even the one it refused.
        if (retriedVersion || mutual === undefined) throw error;
        retriedVersion = true;
        modern.version = mutual;
        this.#protocolVersion = mutual;
        continue;
      }
      const read = readResult(request.method, result);
      if (read.kind === "complete") {
        if (round > 0) markAnsweredAfterInput(read.result);
        return read.result;
      }
      round += 1;
      const signal = options?.signal ?? new AbortController().signal;
      const asking = Object.entries(read.inputRequests);
      const asked = Object.fromEntries(asking.map(([key, { method }]) => [key, method]));
      const local = (question: Message, on: AbortSignal) => this.answerLocally(question, on);
      // All of a round's questions at once: a host answers them together (SPEC H3). The key
      // and the round go with each, for a bridge that asks a modern host in turn.
      const answered = await Promise.all(
        asking.map(async ([key, request]) => {
          const question = keyed(request, key, asked);
          const answer = options?.answer
            ? await options.answer(question, signal as AbortSignal, local)
            : await local(question, signal as AbortSignal);
          return [key, answer] as const;
        }),
      );
      params = retryParams(request.params, Object.fromEntries(answered), read.requestState);
    }
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${request.method} still asked for input after ${MAX_INPUT_ROUNDS} rounds; giving up`,
    );
  }

  /** `legacy` or `modern` once connected. */
  get era(): Era | undefined {
    if (this.#protocolVersion === undefined) return undefined;
    return this.#modern ? "modern" : "legacy";
  }

  /** The revision the connection speaks: the handshake's, or the one modern requests name. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  /** What connect() found (dated now), or the prior verdict it was opened on. */
  get verdict(): EraVerdict | undefined {
    return this.#verdict;
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

  /** A modern server has no `ping`: `server/discover` is what it always answers. */
  async ping(options?: RequestOptions): Promise<Record<string, never>> {
    if (this.#modern === undefined) return this.request({ method: "ping" }, options);
    await this.request({ method: "server/discover" }, options);
    return {};
  }

  async listTools(
    params?: ListToolsRequest["params"],
    options?: RequestOptions,
  ): Promise<ListToolsResult> {
    const result = await this.request<ListToolsResult>({ method: "tools/list", params }, options);
    if (!result || !Array.isArray(result.tools)) {
      throw new McpError(ErrorCode.InvalidParams, "tools/list answered without a tools array");
    }
    // A tool whose x-mcp-header marks break the rules is not offered (SEP-2243).
    if (this.#modern !== undefined) {
      const { offered, refused } = offeredTools(result.tools);
      for (const why of refused) this.warn?.(why);
      result.tools = offered;
    }
    this.cacheToolMetadata(result.tools);
    return result;
  }

  /** Remembers the output schemas of `tools` (the whole list), for callTool to check. */
  cacheToolMetadata(tools: Tool[]): void {
    paramBookOf(this.transport)?.learn(tools);
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

  /** On a modern connection the level rides in every request's envelope; nothing is sent. */
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<object> {
    if (this.#modern !== undefined) {
      this.#logLevel = level;
      return Promise.resolve({});
    }
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

  /** In the modern era a subscription is a resource in the change stream's filter. */
  subscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    if (this.#modern === undefined) {
      return this.request({ method: "resources/subscribe", params }, options);
    }
    this.#changes.subscribe(params.uri);
    return Promise.resolve({});
  }

  unsubscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    if (this.#modern === undefined) {
      return this.request({ method: "resources/unsubscribe", params }, options);
    }
    this.#changes.unsubscribe(params.uri);
    return Promise.resolve({});
  }

  override close(): Promise<void> {
    this.#changes.stop();
    return super.close();
  }

  /** A modern server asks for roots in each request that needs them: nothing to tell. */
  sendRootsListChanged(): Promise<void> {
    if (this.#modern !== undefined) return Promise.resolve();
    return this.notification({ method: "notifications/roots/list_changed" });
  }
}
