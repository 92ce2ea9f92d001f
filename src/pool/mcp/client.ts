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

import { ErrorCode, McpError } from "./error.js";
import { McpProtocol, type RequestOptions, type ResultSchema } from "./protocol.js";
import { outputChecker, type OutputCheck } from "./output-schema.js";

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

  constructor(info: Implementation, options: McpClientOptions = {}) {
    super();
    this.#info = info;
    this.#capabilities = options.capabilities ?? {};
  }

  /** Attaches to `transport`, starts it and makes the initialize handshake. */
  async connect(transport: Transport, options?: RequestOptions): Promise<void> {
    await this.attach(transport);
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

  getServerCapabilities(): ServerCapabilities | undefined {
    return this.#serverCapabilities;
  }

  getServerVersion(): Implementation | undefined {
    return this.#serverVersion;
  }

  getInstructions(): string | undefined {
    return this.#instructions;
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
}
