/**
 * The package's own echo server: a low-level SDK `Server` whose five tools answer predictably,
 * so tests and demos can tell what was called, with which arguments, and which child answered.
 * It owns no transport; connect it to stdio (echo-server-bin.ts) or to an in-memory pair.
 * Input schemas are plain JSON Schema, checked by hand: the low-level Server validates nothing.
 */
import { setTimeout as delay } from "node:timers/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

export const ECHO_TOOL_NAMES = ["echo", "add", "sleep", "fail", "pid"] as const;
export type EchoToolName = (typeof ECHO_TOOL_NAMES)[number];

export interface EchoServerOptions {
  /** `serverInfo.name` sent in the initialize result. Default `"mcpool-echo"`. */
  name?: string;
  /** `serverInfo.version` sent in the initialize result. Default `"1.0.0"`. */
  version?: string;
  /** `instructions` sent in the initialize result. Default: none. */
  instructions?: string;
}

type Args = Record<string, unknown>;

interface EchoTool {
  definition: Omit<Tool, "name">;
  call(args: Args, signal: AbortSignal): CallToolResult | Promise<CallToolResult>;
}

const TOOLS: Record<EchoToolName, EchoTool> = {
  echo: {
    definition: {
      description: "Answers with the given text.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true },
    },
    call: (args) => text(stringArg(args, "text")),
  },
  add: {
    definition: {
      description: "Answers with the call itself, `add(<arguments as JSON>)`.",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
    },
    call: (args) => {
      numberArg(args, "a");
      numberArg(args, "b");
      return text(`add(${JSON.stringify(args)})`);
    },
  },
  sleep: {
    definition: {
      description: "Waits `ms` milliseconds, then answers `slept <ms>`. Stops when cancelled.",
      inputSchema: {
        type: "object",
        properties: { ms: { type: "integer", minimum: 0 } },
        required: ["ms"],
      },
    },
    call: async (args, signal) => {
      const ms = numberArg(args, "ms");
      if (!Number.isInteger(ms) || ms < 0) {
        throw new McpError(ErrorCode.InvalidParams, "ms must be a non-negative integer");
      }
      // Rejects with an AbortError on cancellation; the SDK sends no reply for a cancelled request.
      await delay(ms, undefined, { signal });
      return text(`slept ${ms}`);
    },
  },
  fail: {
    definition: {
      description: "Answers with a tool error (isError) carrying `message`.",
      inputSchema: { type: "object", properties: { message: { type: "string" } } },
    },
    call: (args) => ({
      isError: true,
      content: [{ type: "text", text: optionalStringArg(args, "message") ?? "failed" }],
    }),
  },
  pid: {
    definition: {
      description: "Answers with the process id of the server, to tell children apart.",
      inputSchema: { type: "object", properties: {} },
    },
    call: () => text(String(process.pid)),
  },
};

/** Builds an unconnected echo server; `server.connect(transport)` starts serving. */
export function echoServer(options: EchoServerOptions = {}): Server {
  const server = new Server(
    { name: options.name ?? "mcpool-echo", version: options.version ?? "1.0.0" },
    {
      capabilities: { tools: { listChanged: true } },
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ECHO_TOOL_NAMES.map((name) => ({ name, ...TOOLS[name].definition })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    if (!isEchoToolName(name)) {
      // Spec (server/tools, "Error Handling"): an unknown tool is a protocol error, -32602.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    return TOOLS[name].call(args, extra.signal);
  });
  return server;
}

function isEchoToolName(name: string): name is EchoToolName {
  return (ECHO_TOOL_NAMES as readonly string[]).includes(name);
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function stringArg(args: Args, key: string): string {
  const value = args[key];
  if (typeof value !== "string") throw invalidArg(key, "a string");
  return value;
}

function optionalStringArg(args: Args, key: string): string | undefined {
  return args[key] === undefined ? undefined : stringArg(args, key);
}

function numberArg(args: Args, key: string): number {
  const value = args[key];
  if (typeof value !== "number") throw invalidArg(key, "a number");
  return value;
}

function invalidArg(key: string, expected: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `${key} must be ${expected}`);
}
