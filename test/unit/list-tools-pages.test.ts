/**
 * A tool list spread over pages: the SDK forgets its per-tool output-schema validators on
 * every tools/list page, so the pool must leave it knowing every page's tools;
 * and the pages' cache hints are one list's.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";

import { McpPoolError, type McpPool } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { listTools, type ToolLister } from "../../src/pool/mcp/list-tools.js";

/** Two pages, one tool each; both promise a number and answer with a string. */
function pagedServer(): Server {
  const server = new Server({ name: "paged", version: "1.0.0" }, { capabilities: { tools: {} } });
  const outputSchema = {
    type: "object" as const,
    properties: { n: { type: "number" } },
    required: ["n"],
  };
  const pages = [
    { tools: [{ name: "first", inputSchema: { type: "object" as const }, outputSchema }] },
    { tools: [{ name: "second", inputSchema: { type: "object" as const }, outputSchema }] },
  ];
  server.setRequestHandler(ListToolsRequestSchema, ({ params }) =>
    params?.cursor === "2" ? pages[1]! : { ...pages[0]!, nextCursor: "2" },
  );
  server.setRequestHandler(CallToolRequestSchema, () => ({
    content: [{ type: "text", text: "not a number" }],
    structuredContent: { n: "not a number" },
  }));
  return server;
}

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("a paginated tool list", () => {
  it("validates the output of a tool from every page, not only the last", async () => {
    const pool = makePool({ servers: { paged: pagedServer } });
    pools.push(pool);
    await pool.sync([memoryRow("paged")]);
    expect(pool.tools().map((t) => t.function.name)).toEqual(["paged__first", "paged__second"]);
    for (const name of ["paged__first", "paged__second"]) {
      const error = await pool.call(name, {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(McpPoolError);
      expect((error as McpPoolError).message).toMatch(/output schema/);
    }
  });
});

/** A lister answering `pages` in turn, each with the hint fields given. */
function lister(pages: Record<string, unknown>[]): ToolLister {
  return {
    listTools: async (params) => {
      const at = Number(params?.cursor ?? 0);
      const next = at + 1 < pages.length ? { nextCursor: String(at + 1) } : {};
      return {
        tools: [{ name: `t${at}`, inputSchema: { type: "object" } }],
        ...pages[at],
        ...next,
      };
    },
  };
}

describe("a paginated list's cache hint", () => {
  it("is the shortest lifetime and the narrowest scope of its pages", async () => {
    const walk = await listTools(
      lister([
        { ttlMs: 5_000, cacheScope: "public" },
        { ttlMs: 2_000, cacheScope: "private" },
        { ttlMs: 9_000, cacheScope: "public" },
      ]),
    );
    expect(walk.tools.map((tool) => tool.name)).toEqual(["t0", "t1", "t2"]);
    expect(walk.hint).toEqual({ ttlMs: 2_000, scope: "private" });
  });

  it("promises no lifetime when a page gives none, and reads nothing it does not know", async () => {
    expect(
      (await listTools(lister([{ ttlMs: 5_000, cacheScope: "public" }, { cacheScope: "public" }])))
        .hint,
    ).toEqual({ scope: "public" });
    expect((await listTools(lister([{ ttlMs: -1, cacheScope: "shared" }]))).hint).toEqual({});
    expect((await listTools(lister([{}]))).hint).toEqual({});
  });
});
