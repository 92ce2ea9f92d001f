/**
 * A scriptable in-memory MCP server for pool tests: its tools can be swapped at run time
 * (with tools/list_changed), and each builder call counts as one "spawn".
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

export interface FakeTool {
  name: string;
  description?: string;
  annotations?: Tool["annotations"];
  inputSchema?: Tool["inputSchema"];
  call?: (
    args: Record<string, unknown>,
    server: Server,
  ) => CallToolResult | Promise<CallToolResult>;
}

export interface ScriptedServer {
  /** Pass as the builder in makePool({ servers }). */
  build: () => Server;
  /** How many times a connection was built. */
  spawns: number;
  /** The servers built so far, newest last. */
  live: Server[];
  setTools(tools: FakeTool[]): void;
  /** Sends tools/list_changed from the newest connection. */
  listChanged(): Promise<void>;
}

export function scriptedServer(
  initial: FakeTool[],
  options: { instructions?: string } = {},
): ScriptedServer {
  let tools = initial;
  const scripted: ScriptedServer = {
    spawns: 0,
    live: [],
    build() {
      scripted.spawns += 1;
      const server = new Server(
        { name: "scripted", version: "1.0.0" },
        {
          capabilities: { tools: { listChanged: true }, logging: {} },
          ...(options.instructions ? { instructions: options.instructions } : {}),
        },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: tools.map(({ call: _call, ...tool }) => ({
          inputSchema: { type: "object" as const },
          ...tool,
        })),
      }));
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const tool = tools.find((t) => t.name === request.params.name);
        if (!tool)
          return {
            isError: true,
            content: [{ type: "text", text: `no tool ${request.params.name}` }],
          };
        if (tool.call) return tool.call(request.params.arguments ?? {}, server);
        return {
          content: [
            {
              type: "text",
              text: `${tool.name}(${JSON.stringify(request.params.arguments ?? {})})`,
            },
          ],
        };
      });
      scripted.live.push(server);
      return server;
    },
    setTools(next) {
      tools = next;
    },
    async listChanged() {
      await scripted.live.at(-1)?.sendToolListChanged();
    },
  };
  return scripted;
}

export const tool = (name: string, extra: Partial<FakeTool> = {}): FakeTool => ({
  name,
  description: `The ${name} tool.`,
  ...extra,
});
