/**
 * The pool's MCP client: the SDK `Client`'s side of MCP — the initialize handshake, what
 * the server said about itself, the typed requests, a tool's output schema — over the
 * protocol in mcp/protocol.ts (requests with timeouts, cancellation and progress, the
 * server's requests and notifications), on any SDK Transport.
 *
 * Why not the SDK's Client: it parses every message with zod and loads AJV and zod's
 * schemas with it (15 MB of a daemon's 80 at idle), and a forwarded call paid for a
 * promise chain, an AbortSignal and a schema parse of a result the agent re-reads anyway.
 * Here a result is handed on as received; a caller that wants it checked passes a schema
 * (anything with `safeParse`, as the SDK takes), and a tool's output schema is still
 * checked, by AJV loaded with the first such call. The method names and signatures are
 * the SDK Client's, so `pool.client(id)` serves code written against it.
 *
 * What it leaves out: tasks a server asks of the client (the pool declares no `tasks`
 * capability; a task-augmented call of ours is a plain request, calls/tasks.ts) and the
 * SDK's strict capability checks (off by default there too).
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

import { ErrorCode, isMcpError, McpError } from "../core/mcp-error.js";
import {
  asDiscoverResult,
  discoverFresh,
  META,
  MODERN_PROTOCOL_VERSION,
  mutualModernVersion,
  probeFailure,
  refusedAsModernOnly,
  EraMismatchError,
  type DiscoverResult,
  type Era,
  type EraPlan,
  type EraVerdict,
} from "../core/era.js";
import { httpErrorStatus } from "../transport/http-client.js";
import { readResult } from "./input-required.js";
import { McpProtocol, type Message, type RequestOptions, type ResultSchema } from "./protocol.js";
import { OutputSchemas } from "./output-schema.js";
import type { HandedSession } from "../transport/transport.js";
import {
  ACKNOWLEDGED,
  LegacyEra,
  ModernEra,
  modernMessage,
  type EraStrategy,
  type EraWire,
} from "./client-eras.js";
import { paramBookOf } from "../transport/modern-fetch.js";

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
/**
 * How far a session's request ids jump after a hand-over of it failed: far more than the
 * requests a new daemon writes to a child while adopting it (a listing, pings).
 */
const HANDED_ID_GAP = 1_000_000;
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

export interface McpClientOptions {
  capabilities?: ClientCapabilities;
  /** The handshake's `initialized` waits for initialized() (src/pool/prepared-children.ts). */
  holdInitialized?: boolean;
}

export class McpClient extends McpProtocol {
  readonly #info: Implementation;
  readonly #capabilities: ClientCapabilities;
  #serverCapabilities: ServerCapabilities | undefined;
  #serverVersion: Implementation | undefined;
  #instructions: string | undefined;
  readonly #outputSchemas = new OutputSchemas();
  /** What the era strategies need of this client. */
  readonly #wire: EraWire;
  /** The era the connection speaks, chosen once it opens; legacy's behaviour until then. */
  #era: EraStrategy | undefined;
  /** Its version is never read: era and protocolVersion are undefined until it opens. */
  readonly #unopened: EraStrategy;
  #closing = false;
  /** What connect() found, or the prior it was given. */
  #verdict: EraVerdict | undefined;
  /** `initialized` is held (holdInitialized) until initialized() sends it. */
  #held: boolean;

  /** Told what the server offered that this client will not use (a tool it refuses). */
  warn: ((text: string) => void) | undefined;

  constructor(info: Implementation, options: McpClientOptions = {}) {
    super();
    this.#info = info;
    this.#capabilities = options.capabilities ?? {};
    this.#held = options.holdInitialized === true;
    this.#wire = {
      info,
      capabilities: this.#capabilities,
      send: (request, schemaOrOptions, maybeOptions) =>
        super.request(request, schemaOrOptions, maybeOptions),
      notify: (notification) => this.notification(notification),
      answerLocally: (request, signal) => this.answerLocally(request, signal),
      serverCapabilities: () => this.#serverCapabilities,
      failed: (error) => this.onerror?.(error),
      warn: (text) => this.warn?.(text),
    };
    this.#unopened = new LegacyEra(this.#wire, "");
    this.setNotificationHandler(ACKNOWLEDGED, () => undefined);
  }

  /** The era's behaviour; before the connection opens, legacy's: requests go as they are. */
  get #strategy(): EraStrategy {
    return this.#era ?? this.#unopened;
  }

  #choose(era: EraStrategy): void {
    this.#era = era;
    if (this.#closing) era.closing();
  }

  /**
   * Attaches to `transport`, starts it and opens the connection: the initialize handshake,
   * or with a `plan`, whichever era the plan and the server's answers say.
   */
  async connect(transport: Transport, options?: RequestOptions, plan?: EraPlan): Promise<void> {
    await this.attach(transport);
    // A child or http session another daemon handed over: it goes on where that daemon left it.
    const handed = (transport as { handedSession?: HandedSession }).handedSession;
    if (handed !== undefined) return this.#resume(handed);
    // A transport that already holds a session is a reconnect: no second handshake.
    if (transport.sessionId !== undefined) return;
    try {
      if (plan === undefined) return await this.#initialize(transport, options);
      await this.#open(transport, options, plan);
      this.#era?.opened();
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
      // Over HTTP the transport hands the refusal's body on as the answer (modern-fetch.ts).
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
    this.#choose(new LegacyEra(this.#wire, version));
    this.#verdict = { era: "legacy", at: Date.now() };
    transport.setProtocolVersion?.(version);
    if (!this.#held) await this.notification({ method: "notifications/initialized" });
  }

  /** Sends the `notifications/initialized` the handshake held (holdInitialized), once. */
  async initialized(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
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
          modernMessage({ method: "server/discover" }, version, this.#wire),
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

  /**
   * A hand-over of this session failed: the new daemon went on from the handed next id, so
   * this client's ids jump past any it could have used. An answer it left in the pipe then
   * matches no request of this one, and is dropped.
   */
  skipHandedIds(): void {
    this.nextRequestId = this.nextRequestId + HANDED_ID_GAP;
  }

  /** What another daemon needs to go on with this connection (handed.ts). */
  handedSession(): HandedSession | undefined {
    const era = this.#era;
    if (era === undefined) return undefined;
    const verdict = this.#verdict;
    return {
      protocolVersion: era.protocolVersion,
      capabilities: this.#serverCapabilities ?? {},
      ...(this.#serverVersion ? { serverInfo: this.#serverVersion } : {}),
      ...(this.#instructions !== undefined ? { instructions: this.#instructions } : {}),
      ...(verdict ? { verdict } : {}),
      ...(era.era === "modern" && verdict?.era === "modern"
        ? { modern: { version: era.protocolVersion, discover: verdict.discover } }
        : {}),
      nextId: this.nextRequestId,
    };
  }

  #resume(session: HandedSession): void {
    const { modern } = session;
    if (modern) {
      const at = Date.now();
      this.#adopt(
        modern.version,
        modern.discover,
        session.verdict ?? { era: "modern", ...modern, at },
      );
      this.#era?.opened();
    } else {
      this.#choose(new LegacyEra(this.#wire, session.protocolVersion));
      this.#verdict = session.verdict ?? { era: "legacy", at: Date.now() };
    }
    this.#serverCapabilities = session.capabilities;
    this.#serverVersion = session.serverInfo;
    this.#instructions = session.instructions;
    this.nextRequestId = session.nextId;
    this.transport?.setProtocolVersion?.(session.protocolVersion);
  }

  #adopt(version: string, discover: DiscoverResult, verdict: EraVerdict): void {
    this.#choose(new ModernEra(this.#wire, version));
    this.#verdict = verdict;
    this.#serverCapabilities = (discover.capabilities ?? {}) as ServerCapabilities;
    this.#serverVersion = discover._meta?.[META.serverInfo] as Implementation | undefined;
    this.#instructions = discover.instructions;
  }

  /**
   * Each request as the connection's era sends it (client-eras.ts): on a legacy connection
   * the protocol's request as is, on a modern one in the envelope, its result read by its
   * resultType and its `input_required` rounds answered.
   */
  override request<T = unknown>(
    request: Message,
    schemaOrOptions?: ResultSchema<T> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<T> {
    return this.#strategy.request(request, schemaOrOptions, maybeOptions);
  }

  /** `legacy` or `modern` once connected. */
  get era(): Era | undefined {
    return this.#era?.era;
  }

  /** The revision the connection speaks: the handshake's, or the one modern requests name. */
  get protocolVersion(): string | undefined {
    return this.#era?.protocolVersion;
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
  ping(options?: RequestOptions): Promise<Record<string, never>> {
    return this.#strategy.ping(options);
  }

  async listTools(
    params?: ListToolsRequest["params"],
    options?: RequestOptions,
  ): Promise<ListToolsResult> {
    const result = await this.request<ListToolsResult>({ method: "tools/list", params }, options);
    if (!result || !Array.isArray(result.tools)) {
      throw new McpError(ErrorCode.InvalidParams, "tools/list answered without a tools array");
    }
    result.tools = this.#strategy.offered(result.tools);
    this.cacheToolMetadata(result.tools);
    return result;
  }

  /** Remembers the output schemas of `tools` (the whole list), for callTool to check. */
  cacheToolMetadata(tools: Tool[]): void {
    paramBookOf(this.transport)?.learn(tools);
    this.#outputSchemas.learn(tools);
  }

  /**
   * Calls a tool. A tool listed with an output schema must answer structured content that
   * fits it, unless it answered an error (the SDK Client's rule and messages).
   */
  callTool(
    params: CallToolRequest["params"],
    schemaOrOptions?: ResultSchema<CallToolResult> | RequestOptions,
    maybeOptions?: RequestOptions,
  ): Promise<CallToolResult> {
    // One step on the answer, not an async function's: most tools have no output schema.
    return this.request<CallToolResult>(
      { method: "tools/call", params },
      schemaOrOptions,
      maybeOptions,
    ).then((result) => this.#outputSchemas.checked(params.name, result));
  }

  complete(params: CompleteRequest["params"], options?: RequestOptions): Promise<CompleteResult> {
    return this.request({ method: "completion/complete", params }, options);
  }

  /** On a modern connection the level rides in every request's envelope; nothing is sent. */
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<object> {
    return this.#strategy.setLoggingLevel(level, options);
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
    return this.#strategy.subscribeResource(params, options);
  }

  unsubscribeResource(params: { uri: string }, options?: RequestOptions): Promise<object> {
    return this.#strategy.unsubscribeResource(params, options);
  }

  override close(): Promise<void> {
    this.#closing = true;
    this.#era?.closing();
    return super.close();
  }

  /** A modern server asks for roots in each request that needs them: nothing to tell. */
  sendRootsListChanged(): Promise<void> {
    return this.#strategy.sendRootsListChanged();
  }
}
