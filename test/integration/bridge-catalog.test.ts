/**
 * Tools on demand, as a real SDK host sees them through each way to
 * the pool: the stdio bridge, `bridge --http` and the daemon's MCP socket `@catalog.sock`,
 * all in front of one daemon pooling the three reference servers. The first list is the
 * `alwaysLoad` tools and the pool's search, describe and call tools; a search adds what it
 * found to that session's list alone, with a list_changed.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relayArgs } from "../../src/cli/hosts/pipe-entry.js";
import { httpBridge, stdioBridge, stringEnv, type HttpBridgeProcess } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, waitFor, referenceServer } from "../helpers/processes.js";

const bin = referenceServer;

/** Bound on three reference servers starting on a loaded machine. */
const READY_MS = 60_000;
/** Bound on a list_changed arriving after the search that sends it. */
const NOTIFY_MS = 10_000;

const META = ["search_tools", "describe_tool", "call_tool"];

/** One host session: an SDK Client that counts the tools/list_changed it is sent. */
interface Host {
  client: Client;
  listChanged(): number;
  close(): Promise<void>;
}

function counting(client: Client): () => number {
  let seen = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen += 1;
  });
  return () => seen;
}

const names = (tools: readonly Tool[]): string[] => tools.map((t) => t.name);
const bytes = (tools: readonly Tool[]): number => Buffer.byteLength(JSON.stringify({ tools }));
const textOf = (result: unknown): string =>
  (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("bridge --catalog: tools on demand for MCP hosts", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  let http: HttpBridgeProcess | undefined;
  let fullBytes = 0;

  beforeAll(async () => {
    home = testHome("mcpool-catalog-");
    const data = join(home.dir, "files");
    mkdirSync(data, { recursive: true });
    const node = process.execPath;
    home.writeConfig({
      everything: { command: node, args: [bin("server-everything")], alwaysLoad: ["echo"] },
      memory: {
        command: node,
        args: [bin("server-memory")],
        env: { MEMORY_FILE_PATH: join(data, "memory.jsonl") },
      },
      filesystem: { command: node, args: [bin("server-filesystem"), data] },
    });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    const live = pool;
    await waitFor(
      async () => (await live.state()).every((s) => s.status === "ready" && s.tools.length > 0),
      READY_MS,
      "the three reference servers to be ready",
    );
    const full = await stdioBridge(home);
    try {
      fullBytes = bytes((await full.client.listTools()).tools);
    } finally {
      await full.close();
    }
    http = await httpBridge(home, ["--catalog"]);
  }, READY_MS + 30_000);

  afterAll(async () => {
    await http?.stop();
    await pool?.close();
    await daemon?.stop();
    home?.remove();
  });

  /** A new host session on `via`. */
  const open = async (via: "stdio" | "http" | "socket"): Promise<Host> => {
    if (via === "stdio") {
      const bridge = await stdioBridge(home, ["--catalog"]);
      return { client: bridge.client, listChanged: counting(bridge.client), close: bridge.close };
    }
    const client = new Client({ name: "catalog-host", version: "1.0.0" });
    const listChanged = counting(client);
    if (via === "http") {
      const served = http as HttpBridgeProcess;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: `Bearer ${served.token}` } },
        }),
      );
      return { client, listChanged, close: () => client.close() };
    }
    const transport = new StdioClientTransport({
      command: "perl",
      args: relayArgs("@catalog", home.socketPath),
      env: stringEnv(home.env),
    });
    await client.connect(transport);
    const pid = transport.pid;
    return {
      client,
      listChanged,
      async close() {
        await client.close();
        if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the pipe to exit");
      },
    };
  };

  for (const via of ["stdio", "http", "socket"] as const) {
    describe(`through ${via === "socket" ? "the daemon's MCP socket" : `the ${via} bridge`}`, () => {
      let a: Host;
      let b: Host;

      beforeAll(async () => {
        [a, b] = await Promise.all([open(via), open(via)]);
      }, 30_000);

      afterAll(async () => {
        await Promise.all([a?.close(), b?.close()]);
      });

      it("lists the alwaysLoad tools and the pool's three, in at most a quarter of the full list's bytes", async () => {
        const { tools } = await a.client.listTools();
        expect(names(tools)).toEqual([...META, "everything__echo"]);
        expect(bytes(tools)).toBeLessThanOrEqual(fullBytes / 4);
      });

      it("finds get-sum for 'add two numbers together', with its schema, and adds it to that session's list alone", async () => {
        const before = a.listChanged();
        const result = (await a.client.callTool({
          name: "search_tools",
          arguments: { query: "add two numbers together" },
        })) as CallToolResult;
        expect(result.isError).toBeFalsy();
        const found = (result.structuredContent as { tools: Tool[] }).tools;
        const sum = found.find((t) => t.name === "everything__get-sum");
        expect(sum?.inputSchema.properties).toHaveProperty("a");
        expect(sum?.inputSchema.properties).toHaveProperty("b");
        expect(textOf(result)).toContain("everything__get-sum");
        await waitFor(
          () => a.listChanged() > before,
          NOTIFY_MS,
          "tools/list_changed after the search",
        );
        expect(names((await a.client.listTools()).tools)).toContain("everything__get-sum");
        expect(names((await b.client.listTools()).tools)).not.toContain("everything__get-sum");
        expect(b.listChanged()).toBe(0);
      });

      it("answers get-sum by its name in the session that found it, and through call_tool in another", async () => {
        const direct = await a.client.callTool({
          name: "everything__get-sum",
          arguments: { a: 2, b: 3 },
        });
        expect(textOf(direct)).toMatch(/\b5\b/);
        const relayed = await b.client.callTool({
          name: "call_tool",
          arguments: { name: "everything__get-sum", arguments: { a: 20, b: 22 } },
        });
        expect(textOf(relayed)).toMatch(/\b42\b/);
      });

      it("describes a tool whole, and says so when no tool has the name", async () => {
        const about = (await b.client.callTool({
          name: "describe_tool",
          arguments: { name: "everything__get-sum" },
        })) as CallToolResult;
        expect(about.structuredContent).toMatchObject({
          name: "everything__get-sum",
          inputSchema: { type: "object" },
        });
        const none = (await b.client.callTool({
          name: "describe_tool",
          arguments: { name: "nothing__here" },
        })) as CallToolResult;
        expect(none.isError).toBe(true);
        expect(textOf(none)).toMatch(/search_tools/);
      });
    });
  }

  it("puts the user's most-called tools in the first list with --catalog=auto, within the token budget", async () => {
    for (let i = 0; i < 3; i++) await pool.call("memory__read_graph", {});
    const auto = await stdioBridge(home, ["--catalog=auto"]);
    const tight = await stdioBridge(home, ["--catalog=auto", "--catalog-tokens", "0"]);
    try {
      const listed = names((await auto.client.listTools()).tools);
      expect(listed).toEqual(expect.arrayContaining([...META, "everything__echo"]));
      expect(listed).toContain("memory__read_graph");
      expect(names((await tight.client.listTools()).tools)).not.toContain("memory__read_graph");
    } finally {
      await Promise.all([auto.close(), tight.close()]);
    }
  });
});
