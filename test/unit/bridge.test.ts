import { ErrorCode, McpError, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { McpPoolError, type ServerState } from "mcpool-client";
import { describe, expect, it } from "vitest";
import {
  RESOURCE_NOT_FOUND,
  callFailure,
  toMcpError,
  unprefixed,
} from "../../src/bridge/core/errors.js";
import { BoundedEventStore, bearerMatches, loopbackRequest } from "../../src/bridge/fronts/http.js";
import { TemplateRoutes, scopeOf, scopedName, toolNames } from "../../src/bridge/core/naming.js";
import { passesLevel } from "../../src/bridge/core/session.js";

function state(id: string, tools: ServerState["tools"], slug = id): ServerState {
  return {
    id,
    slug,
    label: id,
    config: { id, transport: "stdio", command: "x" },
    status: "ready",
    tools,
  };
}

const tool = (name: string, qualified: string, extra: Partial<ServerState["tools"][0]> = {}) => ({
  name,
  qualified,
  hidden: false,
  ...extra,
});

describe("bridge naming", () => {
  const states = [
    state("files", [
      tool("read", "files__read"),
      tool("fs.write", "files__fs_write"),
      tool("secret", "files__secret", { hidden: true }),
    ]),
    state("web", [tool("fetch", "w__fetch"), tool("lost", "w__lost", { clashed: true })], "w"),
  ];

  it("offers one server's tools under their own names, mapped through state(), never split", () => {
    const names = toolNames(states, "files");
    expect([...names.toPool]).toEqual([
      ["read", "files__read"],
      ["fs.write", "files__fs_write"],
    ]);
    expect(names.toHost.get("files__fs_write")).toBe("fs.write");
    expect(names.toPool.has("w__fetch")).toBe(false);
  });

  it("offers qualified names in pool scope and leaves hidden and clashed tools out", () => {
    const names = toolNames(states, undefined);
    expect([...names.toPool.keys()]).toEqual(["files__read", "files__fs_write", "w__fetch"]);
  });

  it("names prompts and resources by their server's slug in pool scope only", () => {
    expect(scopedName("files", "summarize", false)).toBe("files__summarize");
    expect(scopedName("files", "summarize", true)).toBe("summarize");
  });

  it("routes a URI to the first server whose template matches it, and a template exactly", () => {
    const routes = new TemplateRoutes();
    expect(routes.add("a", "test://template/{id}/data")).toBe(true);
    expect(routes.add("b", "test://template/{id}/data")).toBe(false);
    expect(routes.add("b", "file:///{path}")).toBe(true);
    expect(routes.match("test://template/7/data")).toBe("a");
    expect(routes.match("file:///etc")).toBe("b");
    expect(routes.match("other://x")).toBeUndefined();
    expect(routes.exact("file:///{path}")).toBe("b");
  });

  it("scopes: --server is one server, --servers a list, neither every server", () => {
    expect(scopeOf({ server: "a" }).servers).toEqual(["a"]);
    expect(scopeOf({ server: "a" }).includes("b")).toBe(false);
    expect(scopeOf({ servers: ["a", "b"] }).includes("b")).toBe(true);
    const all = scopeOf({});
    expect(all.servers).toBeUndefined();
    expect(all.includes("anything")).toBe(true);
  });

  it("filters log messages below the level a host set", () => {
    expect(passesLevel("debug", undefined)).toBe(true);
    expect(passesLevel("debug", "info")).toBe(false);
    expect(passesLevel("error", "warning")).toBe(true);
    expect(passesLevel("made-up", "error")).toBe(true);
  });
});

describe("bridge HTTP checks", () => {
  it("accepts loopback Host and Origin, refuses any other (DNS rebinding)", () => {
    expect(loopbackRequest({ host: "127.0.0.1:8080" })).toBe(true);
    expect(loopbackRequest({ host: "localhost:8080", origin: "http://localhost:3000" })).toBe(true);
    expect(loopbackRequest({ host: "[::1]:8080", origin: "https://127.0.0.1" })).toBe(true);
    expect(loopbackRequest({ host: "evil.example.com" })).toBe(false);
    expect(loopbackRequest({ host: "127.0.0.1.evil.example.com:80" })).toBe(false);
    expect(loopbackRequest({ host: "127.0.0.1:8080", origin: "http://evil.example.com" })).toBe(
      false,
    );
    expect(loopbackRequest({ host: "127.0.0.1:8080", origin: "null" })).toBe(false);
    expect(loopbackRequest({})).toBe(false);
  });

  it("compares the bearer token whole", () => {
    expect(bearerMatches("Bearer s3cret", "s3cret")).toBe(true);
    expect(bearerMatches("bearer s3cret", "s3cret")).toBe(true);
    expect(bearerMatches("Bearer s3cre", "s3cret")).toBe(false);
    expect(bearerMatches("Bearer s3cret extra", "s3cret")).toBe(false);
    expect(bearerMatches("Basic s3cret", "s3cret")).toBe(false);
    expect(bearerMatches(undefined, "s3cret")).toBe(false);
  });

  it("keeps the last events of a session and replays one stream after an event id", async () => {
    const store = new BoundedEventStore(3);
    const message = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: `m${id}` });
    const a1 = await store.storeEvent("a", message(1));
    await store.storeEvent("b", message(2));
    await store.storeEvent("a", message(3));
    const replayed: string[] = [];
    const stream = await store.replayEventsAfter(a1, {
      send: async (_id, m) => void replayed.push((m as { method: string }).method),
    });
    expect(stream).toBe("a");
    expect(replayed).toEqual(["m3"]);
    await store.storeEvent("a", message(4));
    // The oldest event is gone: a host that asks for it gets nothing to replay.
    expect(await store.getStreamIdForEventId(a1)).toBeUndefined();
    expect(await store.replayEventsAfter(a1, { send: async () => undefined })).toBe("");
  });
});

describe("bridge errors", () => {
  it("answers an unknown or out-of-scope tool with MCP's unknown-tool error", () => {
    for (const code of ["unknown-tool", "out-of-scope"] as const) {
      expect(() => callFailure(new McpPoolError(code, "no"), "echo")).toThrow(
        expect.objectContaining({
          code: ErrorCode.InvalidParams,
          message: expect.stringContaining("Unknown tool: echo"),
        }),
      );
    }
  });

  it("fails a call cleanly with an MCP error when the daemon is gone", () => {
    let thrown: unknown;
    try {
      callFailure(new McpPoolError("daemon-unavailable", "the daemon closed the connection"), "x");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(McpError);
    expect((thrown as McpError).code).toBe(ErrorCode.InternalError);
    expect((thrown as McpError).data).toMatchObject({ code: "daemon-unavailable" });
  });

  it("keeps a pooled server's own JSON-RPC error code", () => {
    const error = new McpPoolError("tool-error", "Resource not found: x", {
      mcpCode: RESOURCE_NOT_FOUND,
    });
    expect(toMcpError(error).code).toBe(RESOURCE_NOT_FOUND);
    expect(() => callFailure(error, "x")).toThrow(McpError);
  });

  it("sends a pooled server's error message as the server sent it, for the host's SDK to prefix once", () => {
    // The pool's client prefixed the server's message once, as an SDK client does.
    const error = new McpPoolError("tool-error", "MCP error -32603: Invalid resourceType", {
      mcpCode: ErrorCode.InternalError,
    });
    expect(toMcpError(error)).toMatchObject({ code: -32603, message: "Invalid resourceType" });
    // A server whose own message carries a prefix (its SDK's McpError thrown on) keeps it.
    const sdk = new McpPoolError(
      "tool-error",
      "MCP error -32601: MCP error -32601: Method not found",
      { mcpCode: ErrorCode.MethodNotFound },
    );
    expect(toMcpError(sdk).message).toBe("MCP error -32601: Method not found");
    expect(unprefixed(-32601, toMcpError(sdk))).toBe("MCP error -32601: Method not found");
    // The bridge's own errors reach a 2026-07-28 host without the SDK v1's prefix.
    expect(unprefixed(-32602, new McpError(-32602, "Unknown tool: x"))).toBe("Unknown tool: x");
  });

  it("tells the model what happened to a call that timed out, as an isError result", () => {
    expect(callFailure(new McpPoolError("timeout", "timed out after 5 ms"), "x")).toEqual({
      content: [{ type: "text", text: "timed out after 5 ms" }],
      isError: true,
    });
  });

  it("answers a surface the server does not offer with method-not-found", () => {
    expect(toMcpError(new McpPoolError("not-offered", "no prompts")).code).toBe(
      ErrorCode.MethodNotFound,
    );
  });
});
