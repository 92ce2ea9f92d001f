/**
 * The pool forwards a tool result as the server sent it: the SDK's callTool gets
 * a one-pass check of what the pool reads instead of the full CallToolResult schema. A
 * result the pool cannot read is still refused, and a well-formed one arrives whole.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";

import { McpPoolError, type McpPool } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";

/** Answers each tool with the result of the same name. */
const RESULTS: Record<string, unknown> = {
  whole: {
    content: [{ type: "text", text: "hi", annotations: { priority: 1 } }],
    structuredContent: { a: 1 },
    _meta: { "example.com/trace": "t1" },
  },
  bare: { structuredContent: { a: 1 } },
  textless: { content: [{ type: "text" }] },
  untyped: { content: [{ text: "no type" }] },
  badError: { content: [], isError: "yes" },
};

/**
 * A server that sends what its handlers return unchecked, as a server not written with the
 * SDK may: the SDK's Server checks its own tools/call results, so it installs them raw.
 */
class UncheckedServer extends Server {
  override setRequestHandler: Server["setRequestHandler"] = (schema, handler) =>
    Protocol.prototype.setRequestHandler.call(this, schema, handler as never);
}

function server(): Server {
  const made = new UncheckedServer(
    { name: "shapes", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  made.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: Object.keys(RESULTS).map((name) => ({ name, inputSchema: { type: "object" as const } })),
  }));
  made.setRequestHandler(
    CallToolRequestSchema,
    ({ params }) => RESULTS[params.name] as Record<string, unknown>,
  );
  return made;
}

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

async function shapesPool(): Promise<McpPool> {
  const pool = makePool({ servers: { shapes: server } });
  pools.push(pool);
  await pool.sync([memoryRow("shapes")]);
  return pool;
}

describe("a forwarded tool result", () => {
  it("arrives raw as the server sent it, fields the pool does not read included", async () => {
    const pool = await shapesPool();
    expect(await pool.call("shapes__whole", {}, { raw: true })).toEqual(RESULTS.whole);
    expect(await pool.call("shapes__whole", {})).toBe("hi");
  });

  it("gets an empty content list when the server sent none", async () => {
    const pool = await shapesPool();
    expect(await pool.call("shapes__bare", {}, { raw: true })).toEqual({
      content: [],
      structuredContent: { a: 1 },
    });
  });

  it.each(["textless", "untyped", "badError"])(
    "is refused when the pool cannot read it (%s)",
    async (tool) => {
      const pool = await shapesPool();
      const error = await pool.call(`shapes__${tool}`, {}, { raw: true }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(McpPoolError);
    },
  );
});
