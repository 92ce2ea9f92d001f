/**
 * The pool's own MCP client against the SDK's real server over the SDK's
 * in-memory pair: the handshake, results as received, the tool output-schema rule,
 * timeouts and aborts cancelled upstream, progress before the answer, the server's own
 * requests, and every request failed when the connection closes. Its constants are the
 * SDK's, checked here so an SDK upgrade that moves them fails a test.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  ErrorCode as SdkErrorCode,
  LATEST_PROTOCOL_VERSION as SDK_LATEST,
  ListToolsResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS as SDK_SUPPORTED,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod/v4";

import {
  LATEST_PROTOCOL_VERSION,
  McpClient,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Progress,
} from "../../src/pool/mcp/client.js";
import { ErrorCode, isMcpError } from "../../src/pool/core/mcp-error.js";

const INFO = { name: "test-client", version: "1.0.0" };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface Harness {
  client: McpClient;
  server: McpServer;
  /** Every message the server's side of the pair received, in order. */
  received: JSONRPCMessage[];
  /** Resolves the `hang` tool's pending call. */
  release(): void;
}

async function connected(capabilities = {}): Promise<Harness> {
  const server = new McpServer(
    { name: "fixture", version: "2.0.0" },
    { capabilities: { tools: {}, logging: {} }, instructions: "be kind" },
  );
  let release = () => {};
  server.registerTool("echo", { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: "text", text, annotations: { priority: 1 } }],
    _meta: { "example.com/trace": "t1" },
  }));
  server.registerTool(
    "sum",
    {
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    ({ a, b }) => ({ content: [], structuredContent: { sum: a + b } }),
  );
  server.registerTool(
    "hang",
    {},
    () => new Promise((resolve) => (release = () => resolve({ content: [] }))),
  );
  server.registerTool("steps", { inputSchema: {} }, async (_args, extra) => {
    const token = extra._meta?.progressToken;
    // Three progress notifications and the answer, sent back to back: read together.
    for (const progress of [1, 2, 3]) {
      if (token !== undefined) {
        void extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 3 },
        });
      }
    }
    return { content: [{ type: "text", text: "done" }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  await server.connect(serverSide);
  const deliver = serverSide.onmessage;
  serverSide.onmessage = (message, extra) => {
    received.push(message);
    deliver?.(message, extra);
  };
  const client = new McpClient(INFO, { capabilities });
  await client.connect(clientSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return { client, server, received, release: () => release() };
}

describe("McpClient", () => {
  it("uses the SDK's protocol versions and error codes", () => {
    expect(LATEST_PROTOCOL_VERSION).toBe(SDK_LATEST);
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(SDK_SUPPORTED);
    for (const [name, code] of Object.entries(ErrorCode)) {
      expect(SdkErrorCode[name as keyof typeof SdkErrorCode]).toBe(code);
    }
  });

  it("makes the handshake and learns what the server said about itself", async () => {
    const { client, received } = await connected();
    expect(client.getServerVersion()).toEqual({ name: "fixture", version: "2.0.0" });
    expect(client.getInstructions()).toBe("be kind");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const init = received[0] as { method: string; params: Record<string, unknown> };
    expect(init.method).toBe("initialize");
    expect(init.params.protocolVersion).toBe(SDK_LATEST);
    expect(init.params.clientInfo).toEqual(INFO);
    expect((received[1] as { method: string }).method).toBe("notifications/initialized");
  });

  it("refuses a server whose protocol version it does not speak", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    serverSide.onmessage = (message) => {
      const { id } = message as { id: number };
      void serverSide.send({
        jsonrpc: "2.0",
        id,
        result: { protocolVersion: "1999-01-01", capabilities: {}, serverInfo: INFO },
      });
    };
    await serverSide.start();
    const client = new McpClient(INFO);
    await expect(client.connect(clientSide)).rejects.toThrow(
      "Server's protocol version is not supported: 1999-01-01",
    );
  });

  it("hands a result on as the server sent it, and checks it against a schema when given one", async () => {
    const { client } = await connected();
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result).toEqual({
      content: [{ type: "text", text: "hi", annotations: { priority: 1 } }],
      _meta: { "example.com/trace": "t1" },
    });
    const listed = await client.request({ method: "tools/list" }, ListToolsResultSchema);
    expect(listed.tools.map((tool) => tool.name)).toEqual(["echo", "sum", "hang", "steps"]);
    const refused = await client
      .request({ method: "tools/list" }, z.object({ nothing: z.string() }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(z.ZodError);
  });

  it("checks structured content against a listed tool's output schema", async () => {
    const { client } = await connected();
    await client.listTools();
    const fits = await client.callTool({ name: "sum", arguments: { a: 2, b: 3 } });
    expect(fits.structuredContent).toEqual({ sum: 5 });
    // The same tool listed with a schema its answer does not fit.
    client.cacheToolMetadata([
      {
        name: "sum",
        inputSchema: { type: "object" },
        outputSchema: {
          type: "object",
          properties: { sum: { type: "string" } },
          required: ["sum"],
        },
      },
      { name: "echo", inputSchema: { type: "object" }, outputSchema: { type: "object" } },
    ]);
    const misfit = await client
      .callTool({ name: "sum", arguments: { a: 2, b: 3 } })
      .catch((error: unknown) => error);
    expect(isMcpError(misfit, ErrorCode.InvalidParams)).toBe(true);
    expect((misfit as Error).message).toMatch(
      /^MCP error -32602: Structured content does not match the tool's output schema: /,
    );
    const missing = await client
      .callTool({ name: "echo", arguments: { text: "x" } })
      .catch((error: unknown) => error);
    expect((missing as Error).message).toBe(
      "MCP error -32600: Tool echo has an output schema but did not return structured content",
    );
  });

  it("times a request out, tells the server, and answers a timeout error", async () => {
    const { client, received, release } = await connected();
    const error = await client
      .callTool({ name: "hang", arguments: {} }, { timeout: 50 })
      .catch((e: unknown) => e);
    expect(isMcpError(error, ErrorCode.RequestTimeout)).toBe(true);
    expect((error as { data: unknown }).data).toEqual({ timeout: 50 });
    const sent = received as { id?: number; method?: string; params?: { requestId?: number } }[];
    const call = sent.find((m) => m.method === "tools/call");
    const cancelled = sent.find((m) => m.method === "notifications/cancelled");
    expect(cancelled?.params?.requestId).toBe(call?.id);
    release();
    // The late answer to a request given up on is not mistaken for another's.
    expect((await client.callTool({ name: "echo", arguments: { text: "after" } })).content).toEqual(
      [{ type: "text", text: "after", annotations: { priority: 1 } }],
    );
  });

  it("cancels a request upstream when its signal aborts", async () => {
    const { client, received, release } = await connected();
    const controller = new AbortController();
    const pending = client
      .callTool({ name: "hang", arguments: {} }, { signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort(new Error("caller went away"));
    const error = await pending;
    expect(isMcpError(error, ErrorCode.RequestTimeout)).toBe(true);
    expect((error as Error).message).toContain("caller went away");
    expect(
      received.some((m) => (m as { method?: string }).method === "notifications/cancelled"),
    ).toBe(true);
    release();
  });

  it("hands every progress notification on before the answer read with them", async () => {
    const { client } = await connected();
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: "steps", arguments: {} },
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(seen[0]).toEqual({ progress: 1, total: 3 });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
  });

  it("answers the server's ping and refuses a request it has no handler for", async () => {
    const { server } = await connected();
    await expect(server.server.ping()).resolves.toEqual({});
    const refused = await server.server
      .request({ method: "roots/list" }, z.object({}).loose())
      .catch((e: unknown) => e);
    expect((refused as { code: number }).code).toBe(ErrorCode.MethodNotFound);
  });

  it("hands the server's request to its handler and aborts it when the server cancels", async () => {
    const { client, server } = await connected({ roots: {} });
    let aborted: Promise<unknown> | undefined;
    client.setRequestHandler("roots/list", (_request, extra) => {
      aborted = new Promise((resolve) => extra.signal.addEventListener("abort", resolve));
      return new Promise(() => {});
    });
    const controller = new AbortController();
    const asked = server.server
      .request({ method: "roots/list" }, z.object({}).loose(), { signal: controller.signal })
      .catch(() => undefined);
    await expect.poll(() => aborted !== undefined).toBe(true);
    controller.abort("not needed");
    await asked;
    await aborted;
  });

  it("fails every request in flight when the connection closes", async () => {
    const { client, release } = await connected();
    let closed = false;
    client.onclose = () => (closed = true);
    const pending = client.callTool({ name: "hang", arguments: {} }).catch((e: unknown) => e);
    await client.close();
    const error = await pending;
    expect(isMcpError(error, ErrorCode.ConnectionClosed)).toBe(true);
    expect((error as Error).message).toBe("MCP error -32000: Connection closed");
    expect(closed).toBe(true);
    await expect(client.ping()).rejects.toThrow("Not connected");
    release();
  });
});
