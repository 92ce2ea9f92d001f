/**
 * Sessions that survive a daemon restart, through each entry a
 * host spawns: the SDK bridge (`mcpool bridge`, main.js), the lean bridge (the `mcpool`
 * executable, a pipe to the daemon's MCP socket) and the perl relay `mcpool wire` writes.
 * test/faults.ts, "A service left running for weeks": "A daemon restart (upgrade, `systemctl
 * --user restart`) under live host sessions → each host's next call answers; nothing to
 * restart by hand." A call in flight at the restart fails at once with a coded error; a call
 * made while the daemon is away waits for it; the host hears tools/list_changed; the level
 * it set still applies.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, type TestContext } from "vitest";
import {
  BRIDGE_PATHS,
  bridgeCommand,
  scopeSocket,
  stdioBridge,
  stringEnv,
  type BridgePath,
  type StdioBridge,
} from "../helpers/bridge.js";
import {
  client,
  runCli,
  serversReady,
  startDaemon,
  testHome,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

/** Bound on anything the restart sets off: a daemon's start and reconcile on a loaded machine. */
const BOUND_MS = 30_000;

const textOf = (result: unknown): unknown => (result as { content: unknown }).content;

/** What one test started, ended when it ends: the tests run side by side, each its own home. */
interface Started {
  home?: TestHome;
  host?: StdioBridge;
  /** An entry a test drives by hand, line by line. */
  raw?: ChildProcess;
}

/** A test's record of what it starts, cleaned up once it has finished. */
function started({ onTestFinished }: TestContext): Started {
  const own: Started = {};
  onTestFinished(async () => {
    await own.host?.close();
    const raw = own.raw;
    if (raw !== undefined && raw.exitCode === null && raw.signalCode === null) {
      const exited = new Promise((resolve) => raw.once("exit", resolve));
      raw.kill("SIGKILL");
      await exited;
    }
    if (own.home !== undefined) {
      await stopAll(daemonsFor(own.home.socketPath));
      own.home.remove();
    }
  }, 60_000);
  return own;
}

/**
 * A daemon with `echo` and `talk` (log-levels.mjs), and a host on `server` through `via`;
 * `env` is the entry's too.
 */
async function setUp(
  own: Started,
  via: BridgePath,
  server: string,
  env: Record<string, string> = {},
): Promise<{ home: TestHome; host: StdioBridge }> {
  const at = await daemonHome(own, server, env);
  own.host = await stdioBridge(at, entryArgs(at, server), {}, via);
  return { home: at, host: own.host };
}

const entryArgs = (at: TestHome, server: string): string[] => [
  "--server",
  server,
  "--socket",
  at.socketPath,
];

/** A daemon with `echo` and `talk`, its MCP socket for `server` listening. */
async function daemonHome(
  own: Started,
  server: string,
  env: Record<string, string> = {},
): Promise<TestHome> {
  const at = testHome("mcpool-restart-");
  own.home = at;
  Object.assign(at.env, env);
  at.writeConfig({
    echo: { command: process.execPath, args: [fixture("echo.mjs")] },
    talk: { command: process.execPath, args: [fixture("log-levels.mjs")] },
  });
  await startDaemon(at);
  await serversReady(at);
  const path = scopeSocket(at, entryArgs(at, server));
  await waitFor(() => existsSync(path), BOUND_MS, "the MCP socket");
  return at;
}

/** `mcpool shutdown` (the real CLI), and the daemon gone. */
async function shutdown(at: TestHome): Promise<void> {
  const pids = daemonsFor(at.socketPath);
  expect(pids).toHaveLength(1);
  expect(runCli(at, "shutdown").code).toBe(0);
  await waitFor(() => pids.every((pid) => !alive(pid)), BOUND_MS, "the daemon to exit");
}

function listChanges(mcp: Client): () => number {
  let count = 0;
  mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => void (count += 1));
  return () => count;
}

/** Each test restarts a daemon at least once: more than vitest's 30 s on a loaded machine. */
const TEST_MS = 120_000;

/** What a request that failed rejected with; it must fail within BOUND_MS. */
function failure(request: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`no answer within ${BOUND_MS} ms`)), BOUND_MS);
  });
  const settled = request.then(
    () => new Error("the request answered"),
    (error: unknown) => error,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

describe.concurrent.each(BRIDGE_PATHS)(
  "a host session through the %s entry across a daemon restart",
  (via) => {
    /** A daemon again: the test's own, or (SDK bridge) the one a waiting call auto-started. */
    async function daemonAgain(at: TestHome): Promise<void> {
      if (via !== "sdk") await startDaemon(at);
      await waitFor(() => daemonsFor(at.socketPath).length === 1, BOUND_MS, "a daemon again");
    }

    it(
      "fails the call in flight with a coded error, and the next call answers; list_changed follows",
      async (ctx) => {
        const { expect } = ctx;
        const { home: at, host: h } = await setUp(started(ctx), via, "echo");
        const changes = listChanges(h.client);
        expect(
          textOf(await h.client.callTool({ name: "echo", arguments: { text: "one" } })),
        ).toEqual([{ type: "text", text: "one" }]);

        const inFlight = h.client
          .callTool({ name: "sleep", arguments: { ms: 120_000 } }, undefined, { timeout: 120_000 })
          .then(
            () => new Error("the call in flight answered"),
            (error: unknown) => error,
          );
        const pool = await client(at);
        try {
          const running = async (): Promise<boolean> =>
            ((await pool.state()).find((s) => s.id === "echo")?.inflight ?? 0) > 0;
          await waitFor(running, BOUND_MS, "the sleep call to reach the server");
        } finally {
          await pool.close();
        }
        await shutdown(at);
        const failed = await inFlight;
        expect(failed).toBeInstanceOf(McpError);
        expect((failed as McpError).code).toBe(-32603);
        expect((failed as McpError).data).toMatchObject({
          code: "daemon-unavailable",
          detail: { inFlight: true },
        });
        expect((failed as McpError).message).toContain("may or may not have run");

        // Asked while no daemon is there: it waits for one (bounded), then answers.
        const waiting = h.client.callTool({ name: "echo", arguments: { text: "two" } }, undefined, {
          timeout: BOUND_MS * 2,
        });
        await daemonAgain(at);
        expect(textOf(await waiting)).toEqual([{ type: "text", text: "two" }]);
        await waitFor(() => changes() > 0, BOUND_MS, "tools/list_changed after the reconnect");
        expect(textOf(await h.client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toEqual(
          [{ type: "text", text: 'add({"a":2,"b":3})' }],
        );
        const { tools } = await h.client.listTools();
        expect(tools.map((t) => t.name)).toContain("echo");
      },
      TEST_MS,
    );

    it(
      "keeps the logging level the host set before the restart",
      async (ctx) => {
        const { expect } = ctx;
        const { home: at, host: h } = await setUp(started(ctx), via, "talk");
        const heard: unknown[] = [];
        h.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
          heard.push(n.params.data);
        });
        await h.client.setLoggingLevel("error");
        await shutdown(at);
        await startDaemon(at);
        await serversReady(at);
        const say = (level: string, text: string) =>
          h.client.callTool({ name: "say", arguments: { level, text } }, undefined, {
            timeout: BOUND_MS * 2,
          });
        expect(textOf(await say("info", "quiet"))).toEqual([{ type: "text", text: "said quiet" }]);
        await say("error", "loud");
        await waitFor(() => heard.includes("loud"), BOUND_MS, "the error-level line");
        // In order on one stream: the info line, had it been let through, came first.
        expect(heard).toEqual(["loud"]);
      },
      TEST_MS,
    );

    it(
      "keeps the host's resource subscriptions",
      async (ctx) => {
        const { home: at, host: h } = await setUp(started(ctx), via, "talk");
        const updated: string[] = [];
        h.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
          updated.push(n.params.uri);
        });
        await h.client.subscribeResource({ uri: "note://1" });
        await shutdown(at);
        await startDaemon(at);
        await serversReady(at);
        // The SDK bridge's client sends its subscriptions again beside the first request.
        const touch = async (): Promise<boolean> => {
          const touched = await h.client.callTool({ name: "touch", arguments: {} }, undefined, {
            timeout: BOUND_MS * 2,
          });
          return JSON.stringify(textOf(touched)).includes("touched 1");
        };
        await waitFor(touch, BOUND_MS, "the server to have the subscription again");
        await waitFor(() => updated.includes("note://1"), BOUND_MS, "resources/updated");
      },
      TEST_MS,
    );
  },
);

// The pipes to the MCP socket read the host's lines themselves, and wait for the daemon a
// service manager brings back (the SDK bridge auto-starts one for a waiting request, as at
// its first connect).
describe.concurrent.each(["lean", "perl"] as const)(
  "the %s entry, a pipe to the daemon's MCP socket, across a restart",
  (via) => {
    it(
      "answers with an error naming mcpool and how to start it, and reconnects once it is back",
      async (ctx) => {
        const { expect } = ctx;
        const { home: at, host: h } = await setUp(started(ctx), via, "echo", {
          MCPOOL_RECONNECT_MS: "1000",
        });
        const changes = listChanges(h.client);
        await shutdown(at);
        const refused = await failure(
          h.client.callTool({ name: "echo", arguments: { text: "nobody" } }, undefined, {
            timeout: BOUND_MS,
          }),
        );
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).code).toBe(-32603);
        expect((refused as McpError).data).toMatchObject({ code: "daemon-unavailable" });
        expect((refused as McpError).message).toContain(`no daemon answers at ${at.socketPath}`);
        expect((refused as McpError).message).toContain("`mcpool serve`");

        await startDaemon(at);
        await waitFor(() => changes() > 0, BOUND_MS, "tools/list_changed after the reconnect");
        expect(
          textOf(await h.client.callTool({ name: "echo", arguments: { text: "back" } })),
        ).toEqual([{ type: "text", text: "back" }]);
      },
      TEST_MS,
    );
    it(
      "reads any host's lines: keys in any order, string ids with escaped quotes, nested id and method keys",
      async (ctx) => {
        const { expect } = ctx;
        const own = started(ctx);
        const at = await daemonHome(own, "echo");
        const entry = bridgeCommand(at, entryArgs(at, "echo"), via);
        const child = spawn(entry.command, entry.args, {
          env: stringEnv(at.env),
          stdio: ["pipe", "pipe", "ignore"],
        });
        own.raw = child;
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        const answers = (): { id?: unknown; result?: unknown; error?: { data?: unknown } }[] =>
          out
            .split("\n")
            .filter((l) => l !== "")
            .map((l) => JSON.parse(l) as { id?: unknown });
        const answered = (id: unknown) => answers().find((m) => m.id === id);
        const initId = 'init "one"';
        // What an SDK host never writes, but a host may: params first, spaces, id last.
        child.stdin.write(
          `{ "params" : {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0","id":99}}, "id" : ${JSON.stringify(initId)}, "method" : "initialize", "jsonrpc":"2.0" }\n`,
        );
        await waitFor(() => answered(initId) !== undefined, BOUND_MS, "initialize's answer");
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`,
        );
        const call = {
          params: { name: "sleep", arguments: { ms: 120_000, id: 7, method: "x" } },
          method: "tools/call",
          jsonrpc: "2.0",
          id: "call-1",
        };
        child.stdin.write(`${JSON.stringify(call)}\n`);
        const pool = await client(at);
        try {
          const running = async (): Promise<boolean> =>
            ((await pool.state()).find((s) => s.id === "echo")?.inflight ?? 0) > 0;
          await waitFor(running, BOUND_MS, "the sleep call to reach the server");
        } finally {
          await pool.close();
        }
        await shutdown(at);
        await waitFor(() => answered("call-1") !== undefined, BOUND_MS, "the in-flight error");
        expect(answered("call-1")?.error?.data).toMatchObject({ detail: { inFlight: true } });
        await startDaemon(at);
        const listChanged = (): boolean =>
          answers().some(
            (m) => (m as { method?: string }).method === "notifications/tools/list_changed",
          );
        await waitFor(listChanged, BOUND_MS, "tools/list_changed");
        const echo = {
          jsonrpc: "2.0",
          id: 42,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "back" } },
        };
        child.stdin.write(`${JSON.stringify(echo)}\n`);
        await waitFor(() => answered(42) !== undefined, BOUND_MS, "the call after the restart");
        expect(answered(42)?.result).toEqual({ content: [{ type: "text", text: "back" }] });
        // The replayed initialize's answer was the entry's to drop: the host saw one.
        expect(answers().filter((m) => m.id === initId)).toHaveLength(1);
      },
      TEST_MS,
    );
  },
);
