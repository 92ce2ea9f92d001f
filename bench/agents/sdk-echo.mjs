#!/usr/bin/env node
// test/fixtures/echo.mjs's tools (echo, add, sleep, pid; FIXTURE_TOOLS=n more) served by the
// SDK's own `Server`, as most stdio servers are built: what the benches time every arm
// against. The test fixture answers the same in plain JSON-RPC lines, which starts faster but
// is not what a pooled server's calls cost. Exits on stdin EOF.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { echoTools, object, serveTable, text } from "../../test/fixtures/tool-table.mjs";

const tools = new Map(echoTools());
for (let i = 0; i < Number(process.env.FIXTURE_TOOLS ?? 0); i++) {
  tools.set(`tool_${i}`, { inputSchema: object(), call: () => text(`tool_${i}`) });
}

const server = new Server(
  { name: "fixture-echo", version: "1.0.0" },
  { capabilities: { tools: {} } },
);
/** The SDK's server names a request by its schema; the table's handlers, by its method. */
const schemas = { "tools/list": ListToolsRequestSchema, "tools/call": CallToolRequestSchema };
serveTable(
  { setRequestHandler: (method, handler) => server.setRequestHandler(schemas[method], handler) },
  () => tools,
);
process.stdin.once("end", () => process.exit(0));
await server.connect(new StdioServerTransport());
