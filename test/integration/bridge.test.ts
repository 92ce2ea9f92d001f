/**
 * `mcpool bridge` over stdio, in front of a real daemon in a temp home, driven by the SDK's
 * own Client the way an MCP host drives it.
 */
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_PATHS, scopeSocket, stdioBridge, type StdioBridge } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { progressBeforeResponses } from "../../src/pool/server/routing.js";

const node = process.execPath;

/**
 * Bound on a test that runs beside the file's others: each shares the two cores with them,
 * so on a loaded machine it takes longer than it would alone.
 */
const SIDE_BY_SIDE_MS = 90_000;

/** Polls an async condition until it holds, at most `timeoutMs`. */
async function until(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves with the first notification `register` hands over, or rejects after the bound. */
function nextNotification<T>(
  register: (resolve: (value: T) => void) => void,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${what} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

const textOf = (result: unknown): string =>
  ((result as CallToolResult).content as { type: string; text?: string }[])
    .map((block) => block.text ?? `[${block.type}]`)
    .join("\n");

async function allReady(pool: PoolClient, ids: string[]): Promise<void> {
  await until(
    async () => {
      const states = await pool.state();
      return ids.every((id) => states.find((s) => s.id === id)?.status === "ready");
    },
    20_000,
    `${ids.join(", ")} to be ready`,
  );
}

/**
 * Every path behaves the same: the SDK bridge, the lean bridge's byte pipe and a
 * perl relay to the daemon's MCP socket each carry all of it. The paths run side by side,
 * each with its own home and daemon; one path's tests one after another, as they share its
 * daemon (one counts the calls in flight at a server).
 */
describe.concurrent.each(BRIDGE_PATHS)("mcpool bridge over stdio (%s)", (via) => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const bridges: StdioBridge[] = [];
  const open = async (args: string[] = [], capabilities: ClientCapabilities = {}) => {
    const bridge = await stdioBridge(home, args, capabilities, via);
    bridges.push(bridge);
    return bridge.client;
  };

  beforeAll(async () => {
    home = testHome("mcpool-bridge-");
    home.writeConfig({
      echo: { command: node, args: [fixture("echo.mjs")] },
      fixture: { command: node, args: [fixture("conformance-server.mjs")] },
      changing: { command: node, args: [fixture("list-changed.mjs")] },
    });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    await allReady(pool, ["echo", "fixture", "changing"]);
    // The MCP sockets come up beside the daemon's, a moment after it serves.
    for (const args of [[], ["--server", "echo"], ["--server", "fixture"]]) {
      await waitFor(() => existsSync(scopeSocket(home, args)), 10_000, "the MCP sockets");
    }
  });

  afterAll(async () => {
    await Promise.all(bridges.map((bridge) => bridge.close()));
    await pool?.close();
    await daemon?.stop();
    home?.remove();
  });

  it.sequential(
    "offers every pooled tool under its qualified name and forwards calls",
    async () => {
      const client = await open();
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining(["echo__echo", "fixture__test_simple_text", "changing__add_tool"]),
      );
      const echo = tools.find((t) => t.name === "echo__echo");
      expect(echo?.inputSchema).toEqual({
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      });
      expect(textOf(await client.callTool({ name: "echo__echo", arguments: { text: "hi" } }))).toBe(
        "hi",
      );
      const failed = await client.callTool({ name: "fixture__test_error_handling", arguments: {} });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toContain("intentionally returns an error");
      // The pool's own refusal reaches the host's SDK with its message once, as a server's
      // `-32602` would: the host adds the "MCP error" prefix, the wire does not carry it.
      await expect(client.callTool({ name: "nope__nope", arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: "MCP error -32602: Unknown tool: nope__nope",
      });
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "with --server, offers one server under its own names, and a qualified name is the server's to refuse",
    async () => {
      const client = await open(["--server", "echo"]);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["echo", "add", "sleep", "pid"]);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "own" } }))).toBe(
        "own",
      );
      await expect(
        client.callTool({ name: "echo__echo", arguments: { text: "x" } }),
      ).rejects.toMatchObject({
        code: -32602,
      });
      // The echo server offers no resources, prompts or logging, so neither does its bridge,
      // and its tools capability is its own (no listChanged), as a host would see it direct.
      expect(client.getServerCapabilities()?.resources).toBeUndefined();
      expect(client.getServerCapabilities()?.prompts).toBeUndefined();
      expect(client.getServerCapabilities()?.logging).toBeUndefined();
      expect(client.getServerCapabilities()?.tools).toEqual({});
    },
    SIDE_BY_SIDE_MS,
  );

  // A pipe joins one socket, and the socket is the scope: `--servers A,B` is the bridges' alone.
  if (via === "perl") {
    it.sequential(
      "through the pool's socket, offers every server's tools",
      async () => {
        const names = (await (await open()).listTools()).tools.map((t) => t.name);
        for (const id of ["echo", "changing", "fixture"]) {
          expect(names.some((name) => name.startsWith(`${id}__`))).toBe(true);
        }
      },
      SIDE_BY_SIDE_MS,
    );
  } else {
    it.sequential(
      "with --servers, offers only those servers' tools",
      async () => {
        const client = await open(["--servers", "echo,changing"]);
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain("echo__echo");
        expect(names).toContain("changing__echo");
        expect(names.some((name) => name.startsWith("fixture__"))).toBe(false);
      },
      SIDE_BY_SIDE_MS,
    );
  }

  it.sequential(
    "says which server each prompt and resource came from, and routes them back",
    async () => {
      const client = await open();
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toContain("fixture__test_prompt_with_arguments");
      const prompt = await client.getPrompt({
        name: "fixture__test_prompt_with_arguments",
        arguments: { arg1: "one", arg2: "two" },
      });
      expect(JSON.stringify(prompt.messages)).toContain("arg1='one'");

      const { resources } = await client.listResources();
      const text = resources.find((r) => r.uri === "test://static-text");
      expect(text).toMatchObject({
        name: "fixture__static-text",
        _meta: { "mcpool/server": "fixture" },
      });
      const read = await client.readResource({ uri: "test://static-text" });
      expect(read.contents[0]).toMatchObject({ uri: "test://static-text", mimeType: "text/plain" });
      // A URI no list named, found through the server's template.
      const templated = await client.readResource({ uri: "test://template/42/data" });
      expect(JSON.stringify(templated.contents)).toContain("42");
      await expect(client.readResource({ uri: "nowhere://x" })).rejects.toMatchObject({
        code: -32002,
      });
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "with --server, serves prompts and resources under their own names",
    async () => {
      const client = await open(["--server", "fixture"]);
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toContain("test_simple_prompt");
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.name)).toContain("static-text");
      const completion = await client.complete({
        ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
        argument: { name: "arg1", value: "par" },
      });
      expect(completion.completion.values).toEqual(["paris", "park", "party"]);
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "delivers resources/updated to the host that subscribed",
    async () => {
      const client = await open();
      const updated = nextNotification<string>(
        (resolve) =>
          client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) =>
            resolve(n.params.uri),
          ),
        10_000,
        "notifications/resources/updated",
      );
      await client.subscribeResource({ uri: "test://watched-resource" });
      const touched = await client.callTool({
        name: "fixture__touch_watched_resource",
        arguments: {},
      });
      expect(textOf(touched)).toBe("updated");
      expect(await updated).toBe("test://watched-resource");
      await client.unsubscribeResource({ uri: "test://watched-resource" });
      const after = await client.callTool({
        name: "fixture__touch_watched_resource",
        arguments: {},
      });
      expect(textOf(after)).toBe("nobody subscribed");
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "sends tools/list_changed when a pooled server's list changes",
    async () => {
      const client = await open();
      const changed = nextNotification<void>(
        (resolve) =>
          client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
        10_000,
        "notifications/tools/list_changed",
      );
      await client.callTool({ name: "changing__add_tool", arguments: { name: "fresh" } });
      await changed;
      await until(
        async () => (await client.listTools()).tools.some((t) => t.name === "changing__fresh"),
        10_000,
        "changing__fresh to be listed",
      );
      await client.callTool({ name: "changing__remove_tool", arguments: { name: "fresh" } });
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "sends the call's progress to the host under the host's own token",
    async () => {
      const bridge = await stdioBridge(home, ["--server", "fixture"], {}, via);
      bridges.push(bridge);
      // This host reads a notification before the answer that came in the same read, as
      // mcpool's own client does (a stock SDK host drops it: on a loaded machine any relay
      // may deliver the two together), so what it sees is what the bridge wrote: all three.
      progressBeforeResponses(bridge.transport);
      const client = bridge.client;
      const seen: { progress: number; total?: number | undefined }[] = [];
      const result = await client.callTool(
        { name: "test_tool_with_progress", arguments: {} },
        undefined,
        {
          onprogress: (progress) => seen.push(progress),
        },
      );
      expect(textOf(result)).toContain("executed successfully");
      expect(seen).toEqual([
        { progress: 0, total: 100 },
        { progress: 50, total: 100 },
        { progress: 100, total: 100 },
      ]);
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "cancels the call upstream when the host cancels it",
    async () => {
      const client = await open(["--server", "echo"]);
      const abort = new AbortController();
      const call = client.callTool({ name: "sleep", arguments: { ms: 60_000 } }, undefined, {
        signal: abort.signal,
      });
      const inflight = async (): Promise<number> =>
        (await pool.state()).find((s) => s.id === "echo")?.inflight ?? 0;
      await until(async () => (await inflight()) === 1, 10_000, "the call to be in flight");
      abort.abort();
      await expect(call).rejects.toThrow();
      await until(async () => (await inflight()) === 0, 10_000, "the pool to forget the call");
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "asks the host that made the call when its server elicits, and never answers for a host that cannot",
    async () => {
      const asking = await open(["--server", "fixture"], { elicitation: {} });
      let asked: unknown;
      asking.setRequestHandler(ElicitRequestSchema, (request) => {
        asked = request.params;
        return { action: "accept", content: { username: "ada", email: "ada@example.com" } };
      });
      const answered = await asking.callTool({
        name: "test_elicitation",
        arguments: { message: "Who are you?" },
      });
      expect(asked).toMatchObject({ message: "Who are you?" });
      expect(textOf(answered)).toContain("action=accept");
      expect(textOf(answered)).toContain("ada@example.com");

      // A host that cannot answer gets what it gets direct: this server checks its client's
      // capabilities itself, and the pool, having seen it ask, gives such a host a connection
      // that declared what the host declares — no decline, no words of the pool's.
      const direct = new Client({ name: "direct", version: "1.0.0" });
      await direct.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [fixture("conformance-server.mjs")],
        }),
      );
      const directError = await direct
        .callTool({ name: "test_elicitation", arguments: { message: "?" } })
        .then(
          () => undefined,
          (error: { code?: unknown; message?: unknown }) => ({
            code: error.code,
            message: error.message,
          }),
        );
      await direct.close();
      expect(directError).toBeDefined();
      const unable: Client = await open(["--server", "fixture"]);
      await expect(
        unable.callTool({ name: "test_elicitation", arguments: { message: "?" } }),
      ).rejects.toMatchObject(directError!);
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "sends a pooled server's log messages to the host, named by the server",
    async () => {
      const client = await open();
      const messages: { logger?: string | undefined; data?: unknown }[] = [];
      const three = nextNotification<void>(
        (resolve) =>
          client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
            messages.push(n.params);
            if (messages.length === 3) resolve();
          }),
        10_000,
        "three log messages",
      );
      await client.callTool({ name: "fixture__test_tool_with_logging", arguments: {} });
      await three;
      expect(messages.map((m) => m.data)).toEqual([
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
      ]);
      expect(messages[0]?.logger).toBe("fixture/fixture");
    },
    SIDE_BY_SIDE_MS,
  );

  it.sequential(
    "refuses a --server the pool does not have, saying which it has",
    async () => {
      await expect(stdioBridge(home, ["--server", "nope"])).rejects.toThrow(
        /the pool has no server "nope" \(it has echo, fixture, changing\)/,
      );
    },
    SIDE_BY_SIDE_MS,
  );
});

// Beside the paths: each test has its own home and daemon.
describe.concurrent("mcpool bridge and the daemon's lifetime", () => {
  it(
    "starts the daemon when none is running",
    async () => {
      const home = testHome("mcpool-bridge-autostart-");
      home.writeConfig({ echo: { command: node, args: [fixture("echo.mjs")] } });
      let bridge: StdioBridge | undefined;
      try {
        bridge = await stdioBridge(home, ["--server", "echo"]);
        const { client } = bridge;
        await until(
          async () => (await client.listTools()).tools.some((t) => t.name === "echo"),
          20_000,
          "the auto-started daemon's echo tools",
        );
      } finally {
        await bridge?.close();
        // The daemon the bridge started outlives it by design; this test stops it.
        if (existsSync(home.socketPath)) {
          const pool = await poolClient(home);
          const { pid } = await pool.status();
          await pool.shutdown();
          await pool.close();
          await waitFor(() => !alive(pid), 15_000, "the auto-started daemon to stop");
        }
        home.remove();
      }
    },
    SIDE_BY_SIDE_MS,
  );

  it(
    "survives a daemon restart: the call in flight fails with an MCP error, later calls work",
    async () => {
      const home = testHome("mcpool-bridge-restart-");
      home.writeConfig({ echo: { command: node, args: [fixture("echo.mjs")] } });
      let daemon = await startDaemon(home);
      let bridge: StdioBridge | undefined;
      let pool: PoolClient | undefined;
      try {
        pool = await poolClient(home);
        await allReady(pool, ["echo"]);
        await pool.close();
        pool = undefined;
        bridge = await stdioBridge(home, ["--server", "echo"]);
        const { client } = bridge;
        expect(textOf(await client.callTool({ name: "echo", arguments: { text: "before" } }))).toBe(
          "before",
        );
        const inFlight = client.callTool({ name: "sleep", arguments: { ms: 60_000 } });
        const failure = inFlight.then(
          () => undefined,
          (error: unknown) => error,
        );
        // The sleep has reached the daemon when its call is in flight there; kill it then.
        const watcher = await poolClient(home);
        await until(
          async () => ((await watcher.state()).find((s) => s.id === "echo")?.inflight ?? 0) > 0,
          10_000,
          "the sleep to be in flight",
        );
        await watcher.close();
        await daemon.kill9();
        const error = await failure;
        expect(error).toBeInstanceOf(McpError);
        expect(error).toMatchObject({ code: -32603, data: { code: "daemon-unavailable" } });

        daemon = await startDaemon(home);
        let answer = "";
        await until(
          async () => {
            answer = textOf(await client.callTool({ name: "echo", arguments: { text: "after" } }));
            return true;
          },
          20_000,
          "a call through the bridge to work again",
        );
        expect(answer).toBe("after");
      } finally {
        await bridge?.close();
        await pool?.close();
        await daemon.stop();
        home.remove();
      }
    },
    SIDE_BY_SIDE_MS,
  );
});
