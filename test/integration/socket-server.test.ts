import { spawn } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FrameDecoder,
  METHODS,
  McpPoolError as ClientError,
  PROTOCOL_VERSION,
  connect,
  encodeFrame,
  type DaemonStatus,
  type HostProfile,
  type PoolClient,
} from "mcpool-client";

import { DaemonSetupError, MAX_SOCKET_PATH_BYTES } from "../../src/daemon/process/paths.js";
import { createHandlers, type PoolLike } from "../../src/daemon/handlers/rpc.js";
import {
  createSocketServer,
  type HandlerTable,
  type SocketServer,
  type SocketServerOptions,
} from "../../src/daemon/socket/server.js";
import type { HookContext, HookEvent, HookOutcome } from "../../src/config/hooks.js";
import type { McpServerConfig, StdioServerConfig } from "../../src/config/rows.js";
import { McpPoolError } from "../../src/pool/core/errors.js";
import type { CallOptions } from "../../src/pool/calls/options.js";
import type { TaskOwner } from "../../src/pool/calls/tasks.js";
import type { NotificationListener } from "../../src/pool/pool-events.js";
import type {
  PinInfo,
  PoolEvent,
  ServerAuthState,
  ServerNotification,
  ServerState,
  ToolDefinition,
} from "../../src/pool/core/types.js";
import { fakeConversations } from "../helpers/fake-conversations.js";
import { alive, waitFor } from "../helpers/processes.js";

// Every wait in this file is bounded by this, well under vitest's own timeout.
const BOUND_MS = 5_000;

/** `promise`, or a rejection naming `what` once `ms` have passed. */
function within<T>(promise: Promise<T>, what: string, ms = BOUND_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const ROW: StdioServerConfig = {
  id: "echo",
  transport: "stdio",
  command: "node",
  args: ["echo.mjs"],
  env: { TOKEN: "canary-secret" },
};

/** A pool made of plain data: what the handlers need of one, and a record of their calls. */
class FakePool implements PoolLike {
  readonly calls: { name: string; input: unknown; options: CallOptions }[] = [];
  readonly stateSecrets: boolean[] = [];
  readonly stopped: string[] = [];
  readonly reconnected: string[] = [];
  readonly eventListeners = new Set<(event: PoolEvent) => void>();
  readonly notificationListeners = new Set<NotificationListener>();
  /** What `profiles/prepare` and `profiles/release` were asked: holder, profile, servers. */
  readonly prepared: unknown[][] = [];
  readonly profiles = {
    prepare: async (profile: HostProfile, holder: string, servers?: readonly string[]) => {
      this.prepared.push(["prepare", holder, profile, servers]);
      return [...(servers ?? ["echo"])];
    },
    release: (holder: string) => void this.prepared.push(["release", holder]),
  };
  /** Settles when a call to `echo__hang` arrives / is aborted. */
  hangStarted = deferred();
  hangAborted = deferred<unknown>();
  bigTools = 0;
  readonly conversations = fakeConversations();

  async ready(): Promise<void> {}

  state(options: { secrets: boolean }): ServerState[] {
    this.stateSecrets.push(options.secrets);
    const { env: _env, ...bare } = ROW;
    return [
      {
        id: "echo",
        slug: "echo",
        label: "Echo",
        config: options.secrets ? ROW : bare,
        status: "ready",
        pid: 4242,
        tools: [{ name: "echo", qualified: "echo__echo", hidden: false }],
      },
    ];
  }

  hostTools(
    _profile: unknown,
    options: { names?: readonly string[]; servers?: readonly string[] },
  ): Promise<ToolDefinition[]> {
    return Promise.resolve(this.tools(options));
  }

  tools(options: { names?: readonly string[]; servers?: readonly string[] }): ToolDefinition[] {
    const count = this.bigTools > 0 ? this.bigTools : 1;
    return Array.from({ length: count }, (_, i) => ({
      type: "function" as const,
      function: {
        name: options.names?.[0] ?? `echo__tool${i}`,
        description: "x".repeat(this.bigTools > 0 ? 1000 : 10),
        parameters: { type: "object" },
      },
    }));
  }

  catalog(servers?: readonly string[]) {
    return [
      {
        id: "echo",
        slug: "echo",
        label: servers?.join(",") ?? "all",
        tools: [{ name: "echo__echo" }],
      },
    ];
  }

  async call(
    name: string,
    input: Record<string, unknown> | undefined,
    options: CallOptions,
  ): Promise<unknown> {
    this.calls.push({ name, input, options });
    switch (name) {
      case "echo__hang":
        return new Promise((_, reject) => {
          options.signal?.addEventListener("abort", () => {
            this.hangAborted.resolve(options.signal?.reason);
            reject(new Error("aborted"));
          });
          this.hangStarted.resolve();
        });
      case "echo__missing":
        throw new McpPoolError("unknown-tool", "no tool echo__missing", { serverId: "echo" });
      case "echo__crash":
        throw new Error("internal detail canary-secret");
      default:
        return options.raw
          ? { content: [{ type: "text", text: JSON.stringify(input) }], isError: false }
          : `echo: ${JSON.stringify(input)}`;
    }
  }

  search(query: string, options: { servers?: readonly string[]; limit?: number }) {
    const label = `${query}/${options.servers?.join(",") ?? "all"}/${options.limit ?? "-"}`;
    return [{ id: "echo", slug: "echo", label, tools: [{ name: "echo__echo" }] }];
  }

  describe(name: string, options: { servers?: readonly string[]; hidden?: boolean }) {
    if (name !== "echo__echo") return undefined;
    const toolName = options.hidden ? "hidden" : "echo";
    return { name, serverId: "echo", toolName, inputSchema: { type: "object" }, tokens: 3 };
  }

  alwaysLoaded(servers?: readonly string[]): string[] {
    return servers?.length === 0 ? [] : ["echo__echo"];
  }

  async runHooks(event: HookEvent, context: HookContext): Promise<HookOutcome[]> {
    return [
      {
        hook: "recall",
        serverId: "echo",
        label: "Echo",
        event,
        tool: "echo__echo",
        ok: true,
        text: context.prompt ?? "",
        inject: true,
        ms: 1,
      },
    ];
  }

  readonly requests: { id: string; method: string; params: unknown }[] = [];
  readonly resourceListeners = new Map<string, (n: ServerNotification) => void>();

  async request(id: string, method: string, params?: unknown): Promise<never> {
    this.requests.push({ id, method, params });
    return {} as never;
  }

  async task(id: string, method: string, params: Record<string, unknown>, owner: TaskOwner) {
    this.requests.push({ id, method, params: { ...params, owner: owner.key, name: owner.name } });
    return {};
  }

  readonly released: string[] = [];
  async releaseTasks(owner: TaskOwner): Promise<void> {
    this.released.push(owner.key);
  }

  readonly named: { name: string; naming?: unknown }[] = [];
  async taskNames(name: string, naming?: unknown) {
    this.named.push(naming === undefined ? { name } : { name, naming });
    return [] as { serverId: string; taskId: string; hostId: string }[];
  }

  async subscribeResource(id: string, uri: string, listener: (n: ServerNotification) => void) {
    this.resourceListeners.set(`${id} ${uri}`, listener);
    return async () => void this.resourceListeners.delete(`${id} ${uri}`);
  }

  probe(row: McpServerConfig) {
    return { ok: true, tools: [{ name: `probed-${row.id}` }] };
  }

  stop(id: string): void {
    this.stopped.push(id);
  }

  reconnect(id: string): void {
    this.reconnected.push(id);
  }

  async pinInfo(id: string): Promise<PinInfo> {
    if (id !== "echo") throw new McpPoolError("unknown-server", `unknown server "${id}"`);
    const tools = [{ name: "echo", inputSchema: { type: "object" } }];
    return {
      serverId: id,
      pin: "a".repeat(64),
      fingerprint: "b".repeat(64),
      tools,
      withheld: true,
    };
  }

  async approve(id: string, fingerprint: string): Promise<PinInfo> {
    const info = await this.pinInfo(id);
    if (fingerprint !== info.fingerprint) throw new McpPoolError("pin-mismatch", "moved on");
    return { ...info, pin: fingerprint, withheld: false };
  }

  /** What auth/store handed over, so a test can see it arrived whole and went nowhere else. */
  readonly credentials: unknown[] = [];

  async storeCredentials(id: string, credentials: unknown): Promise<ServerAuthState> {
    this.credentials.push(credentials);
    return { id, status: "ready" };
  }

  async forgetCredentials(id: string): Promise<ServerAuthState> {
    return { id, status: "auth-required", error: `run \`mcpool login ${id}\`` };
  }

  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onNotification(listener: NotificationListener): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  emit(event: PoolEvent): void {
    for (const listener of this.eventListeners) listener(event);
  }

  notify(serverId: string, notification: ServerNotification): void {
    // Sent by the row's own connection, which serves the hosts that name no profile.
    const from = { key: undefined, serves: (profile: unknown) => profile === undefined };
    for (const listener of this.notificationListeners) listener(serverId, notification, from);
  }
}

interface Daemon {
  server: SocketServer;
  pool: FakePool;
  errors: string[];
  seen: Set<string>;
  shutdowns: number;
  shutdownCalled: Promise<void>;
}

let dir: string;
let socketPath: string;
const cleanups: (() => unknown)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcpool-sock-"));
  socketPath = join(dir, "mcpool.sock");
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function startDaemon(
  options: Partial<SocketServerOptions> = {},
  pool = new FakePool(),
): Promise<Daemon> {
  const errors: string[] = [];
  const seen = new Set<string>();
  const shutdown = deferred();
  const daemon: Daemon = {
    server: undefined as unknown as SocketServer,
    pool,
    errors,
    seen,
    shutdowns: 0,
    shutdownCalled: shutdown.promise,
  };
  const status = (): DaemonStatus => ({
    pid: process.pid,
    version: "9.9.9",
    startedAt: 1,
    socketPath,
    configPath: "/x/mcp.json",
    config: { path: "/x/mcp.json", ok: true, problems: [] },
    servers: pool.state({ secrets: false }),
    clients: daemon.server.clients,
  });
  const handlers = createHandlers({
    pool,
    status,
    reload: async () => ({
      path: "/x/mcp.json",
      ok: false,
      error: "bad",
      line: 3,
      column: 7,
      problems: ["row x"],
    }),
    shutdown: () => {
      daemon.shutdowns++;
      shutdown.resolve();
    },
  });
  // Records which methods were dispatched, to prove every one of METHODS was exercised.
  const recorded = Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      (params: never, ctx: never) => {
        seen.add(name);
        return (handler as (p: never, c: never) => unknown)(params, ctx);
      },
    ]),
  ) as unknown as HandlerTable;
  daemon.server = createSocketServer({
    socketPath,
    handlers: recorded,
    log: { error: (message) => errors.push(message) },
    ...options,
  });
  await daemon.server.start();
  cleanups.push(() => daemon.server.destroy());
  return daemon;
}

async function client(
  name = "test",
  extra: { maxReconnectDelayMs?: number } = {},
): Promise<PoolClient> {
  const c = await connect({ socketPath, clientName: name, ...extra });
  cleanups.push(() => c.close());
  return c;
}

/** A hand-driven connection: bytes out, decoded JSON-RPC messages in. */
class RawPeer {
  readonly messages: Record<string, unknown>[] = [];
  readonly closed: Promise<void>;
  private readonly decoder = new FrameDecoder();
  private waiter: (() => void) | undefined;
  private nextId = 100;

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      for (const frame of this.decoder.push(chunk)) {
        if (frame.ok) this.messages.push(frame.value as Record<string, unknown>);
      }
      this.waiter?.();
    });
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    void this.closed.then(() => this.waiter?.());
  }

  static async open(path = socketPath): Promise<RawPeer> {
    const socket = createConnection(path);
    await within(
      new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject)),
      "raw connect",
    );
    const peer = new RawPeer(socket);
    cleanups.push(() => socket.destroy());
    return peer;
  }

  send(data: string | Buffer | object): void {
    this.socket.write(typeof data === "string" || Buffer.isBuffer(data) ? data : encodeFrame(data));
  }

  async next(what = "a message"): Promise<Record<string, unknown>> {
    return within(
      new Promise((resolve, reject) => {
        const check = (): void => {
          const message = this.messages.shift();
          if (message !== undefined) {
            this.waiter = undefined;
            resolve(message);
          } else if (this.socket.destroyed) {
            reject(new Error(`connection closed while waiting for ${what}`));
          }
        };
        this.waiter = check;
        check();
      }),
      what,
    );
  }

  async request(method: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    this.send({ jsonrpc: "2.0", id, method, params });
    const answer = await this.next(`the answer to ${method}`);
    expect(answer.id).toBe(id);
    return answer;
  }

  async hello(): Promise<void> {
    const answer = await this.request("hello", {
      protocolVersion: PROTOCOL_VERSION,
      clientName: "raw",
      pid: process.pid,
    });
    expect(answer.result).toMatchObject({ protocolVersion: PROTOCOL_VERSION });
  }
}

const errorCodeOf = (message: Record<string, unknown>): unknown =>
  (message.error as { code?: unknown } | undefined)?.code;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return within(
    promise.then(
      () => {
        throw new Error("expected a rejection");
      },
      (error: unknown) => error,
    ),
    "a rejection",
  );
}

describe("socket server and PoolClient", () => {
  it("answers hello and every method of the wire through a real PoolClient", async () => {
    const daemon = await startDaemon();
    const c = await client("agent");
    const { pool } = daemon;
    expect(c.daemon).toEqual({
      protocolVersion: PROTOCOL_VERSION,
      daemonVersion: "9.9.9",
      pid: process.pid,
      // It names hosts: a bridge subscribes a named host by its name here.
      namesHosts: true,
    });

    const state = await c.state();
    expect(state[0]?.config).not.toHaveProperty("env");
    expect(JSON.stringify(state)).not.toContain("canary-secret");
    expect(pool.stateSecrets).not.toContain(true);
    expect((await c.state({ secrets: true }))[0]?.config).toMatchObject({
      env: { TOKEN: "canary-secret" },
    });
    expect(pool.stateSecrets.at(-1)).toBe(true);
    // Usage counts come from the daemon's monitor; without one, nothing is counted.
    expect(await c.usage({ since: 0 })).toEqual({ tools: [] });

    expect((await c.tools({ names: ["echo__echo"] }))[0]?.function.name).toBe("echo__echo");
    expect((await c.catalog(["echo"]))[0]).toMatchObject({ id: "echo", label: "echo" });
    expect((await c.catalog())[0]?.label).toBe("all");
    expect((await c.search("read", { servers: ["echo"], limit: 3 }))[0]?.label).toBe("read/echo/3");
    expect(await c.describe("echo__echo", { hidden: true })).toMatchObject({ toolName: "hidden" });
    expect(await c.describe("echo__missing")).toBeUndefined();
    expect(await c.alwaysLoaded()).toEqual(["echo__echo"]);
    expect(await c.alwaysLoaded([])).toEqual([]);
    const outcomes = await c.runHooks("beforeTurn", { session: { id: "s" }, prompt: "hi" });
    expect(outcomes).toMatchObject([{ hook: "recall", event: "beforeTurn", ok: true, text: "hi" }]);
    await expect(
      c.call("echo__echo", {}, { coerce: false, cache: false, hidden: true }),
    ).resolves.toBe("echo: {}");
    expect(pool.calls.at(-1)?.options).toMatchObject({ coerce: false, cache: false, hidden: true });

    expect(await c.call("echo__echo", { text: "hé 🎉" })).toBe('echo: {"text":"hé 🎉"}');
    expect(pool.calls.at(-1)?.options).not.toHaveProperty("raw");
    const raw = await c.call(
      "echo__echo",
      { n: 1 },
      { raw: true, timeoutMs: 250, servers: ["echo"], maxResultChars: 9 },
    );
    expect(raw).toEqual({ content: [{ type: "text", text: '{"n":1}' }], isError: false });
    expect(pool.calls.at(-1)?.options).toMatchObject({
      raw: true,
      timeoutMs: 250,
      servers: ["echo"],
      maxResultChars: 9,
    });

    const refused = await rejection(c.call("echo__missing"));
    expect(refused).toBeInstanceOf(ClientError);
    expect(refused).toMatchObject({
      code: "unknown-tool",
      message: "no tool echo__missing",
      detail: { serverId: "echo" },
    });
    const crashed = await rejection(c.call("echo__crash"));
    expect(crashed).toMatchObject({ code: "rpc-error", detail: { rpcCode: -32603 } });
    expect(String((crashed as Error).message)).not.toContain("canary-secret");
    expect(daemon.errors.join("\n")).toContain("tools/call failed");

    expect(await c.probe({ id: "new", transport: "http", url: "https://x.example/mcp" })).toEqual({
      ok: true,
      tools: [{ name: "probed-new" }],
    });
    await c.stop("echo");
    await c.reconnect("echo");
    expect(await c.pinInfo("echo")).toMatchObject({ withheld: true, fingerprint: "b".repeat(64) });
    expect(await rejection(c.approve("echo", "c".repeat(64)))).toMatchObject({
      code: "pin-mismatch",
    });
    expect(await c.approve("echo", "b".repeat(64))).toMatchObject({ withheld: false });
    const tokens = { access_token: "canary-token", token_type: "Bearer" };
    expect(await c.storeCredentials("echo", { tokens })).toEqual({ id: "echo", status: "ready" });
    expect(pool.credentials).toEqual([{ tokens, clientInformation: undefined }]);
    expect(await c.forgetCredentials("echo")).toMatchObject({ status: "auth-required" });
    expect(pool.stopped).toEqual(["echo"]);
    expect(pool.reconnected).toEqual(["echo"]);
    expect(await c.reload()).toMatchObject({ ok: false, line: 3, column: 7, problems: ["row x"] });
    expect(await c.status()).toMatchObject({ pid: process.pid, version: "9.9.9", clients: 1 });

    const events: PoolEvent[] = [];
    const notes: [string, ServerNotification][] = [];
    const offEvents = c.onEvent((event) => events.push(event));
    const offNotes = c.onNotification((id, n) => notes.push([id, n]));
    await c.status(); // the subscriptions are handled before this answer is written
    expect(pool.eventListeners.size).toBe(1);
    pool.emit({ type: "connect", serverId: "echo", ms: 5, tools: 1 });
    pool.notify("echo", { method: "notifications/message", params: { level: "info" } });
    await waitFor(
      () => events.length === 1 && notes.length === 1,
      BOUND_MS,
      "event and notification",
    );
    expect(events).toEqual([{ type: "connect", serverId: "echo", ms: 5, tools: 1 }]);
    expect(notes).toEqual([
      ["echo", { method: "notifications/message", params: { level: "info" } }],
    ]);
    offEvents();
    offNotes();
    await c.status();
    expect(pool.eventListeners.size).toBe(0);
    expect(pool.notificationListeners.size).toBe(0);
    pool.emit({ type: "connect", serverId: "echo", ms: 6, tools: 1 });
    await c.status(); // an event still delivered would have arrived before this answer
    expect(events).toHaveLength(1);

    // Passthrough: the server id and MCP's params reach the pool, nothing else.
    await c.listResources("echo", { cursor: "c1" });
    await c.listResourceTemplates("echo");
    await c.readResource("echo", "file:///a");
    await c.listPrompts("echo");
    await c.getPrompt("echo", "greet", { who: "x" });
    const ref = { type: "ref/prompt" as const, name: "greet" };
    await c.complete("echo", { ref, argument: { name: "who", value: "a" } });
    await c.ping("echo");
    await c.setLoggingLevel("echo", "debug");
    expect(pool.requests).toEqual([
      { id: "echo", method: "resources/list", params: { cursor: "c1" } },
      { id: "echo", method: "resources/templates/list", params: {} },
      { id: "echo", method: "resources/read", params: { uri: "file:///a" } },
      { id: "echo", method: "prompts/list", params: {} },
      { id: "echo", method: "prompts/get", params: { name: "greet", arguments: { who: "x" } } },
      {
        id: "echo",
        method: "completion/complete",
        params: { ref, argument: { name: "who", value: "a" } },
      },
      { id: "echo", method: "ping", params: undefined },
      { id: "echo", method: "logging/setLevel", params: { level: "debug" } },
    ]);
    await c.subscribeResource("echo", "file:///a");
    expect([...pool.resourceListeners.keys()]).toEqual(["echo file:///a"]);
    await c.unsubscribeResource("echo", "file:///a");
    expect(pool.resourceListeners.size).toBe(0);

    // Tasks: the server id, MCP's params and this connection's owner key for the host named.
    const asked = pool.requests.length;
    await c.tasks.request("echo", "tasks/get", { taskId: "t1" }, { taskOwner: "h1" });
    await c.tasks.request("echo", "tasks/result", { taskId: "t1" }, { taskOwner: "h1" });
    await c.tasks.request("echo", "tasks/cancel", { taskId: "t1" }, { taskOwner: "h1" });
    await c.tasks.request("echo", "tasks/list", {}, { taskOwner: "h1" });
    const owners = new Set(
      pool.requests.slice(asked).map((r) => (r.params as { owner: string }).owner),
    );
    expect(owners.size).toBe(1);
    expect(pool.requests.slice(asked).map(({ method, params }) => [method, params])).toEqual(
      ["tasks/get", "tasks/result", "tasks/cancel", "tasks/list"].map((method) => [
        method,
        method === "tasks/list"
          ? { owner: [...owners][0], name: "h1" }
          : { taskId: "t1", owner: [...owners][0], name: "h1" },
      ]),
    );
    await c.tasks.release("h1");
    expect(pool.released).toEqual([...owners]);
    // The ids a host knows its tasks by: kept with a task, and read back by the host's name.
    await c.tasks.name("echo", "t1", "h1", "t1@echo");
    expect(await c.tasks.names("h1")).toEqual([]);
    expect(pool.named).toEqual([
      { name: "h1", naming: { serverId: "echo", taskId: "t1", hostId: "t1@echo" } },
      { name: "h1" },
    ]);

    // A 2025-11-25 host's servers opened ahead of its roots, held by its name, let go of.
    const pending = { elicitation: ["form" as const], roots: [] };
    expect(await c.profiles.prepare(pending, "h1", ["echo"])).toEqual(["echo"]);
    await c.profiles.release("h1");
    expect(pool.prepared).toEqual([
      ["prepare", "h1", pending, ["echo"]],
      ["release", "h1"],
    ]);

    // Per-conversation rows: identities, selectors and leases reach the registry.
    const who = { tenant: "acme", principal: "alice", conversationId: "c1" };
    const lease = await c.conversations.acquire("orders", who);
    expect(lease).toMatchObject({ serverId: "orders", keyHash: "0123456789ab" });
    expect(pool.conversations.held.size).toBe(1);
    await lease.release();
    expect(pool.conversations.held.size).toBe(0);
    const mine = c.withIdentity(who);
    expect((await mine.tools()).map((t) => t.function.name)).toEqual([
      "echo__tool0",
      "orders__count",
    ]);
    expect((await mine.listTools()).bindings).toEqual({ orders: "binding-1" });
    await mine.call("echo__echo", { text: "x" });
    expect(pool.calls.at(-1)?.options).toMatchObject({
      identity: who,
      bindings: { orders: "binding-1" },
    });
    expect(await mine.terminate({ timeoutMs: 50 })).toMatchObject([{ outcome: "terminated" }]);
    expect(await c.conversations.stats(["orders"])).toMatchObject([{ serverId: "orders" }]);
    await c.conversations.permissionsChanged({ tenant: "acme" });
    await c.conversations.toolsChanged(["orders"]);
    expect(pool.conversations.log.map(([method]) => method)).toEqual([
      "acquire",
      "tools",
      "tools",
      "terminate",
      "stats",
      "permissionsChanged",
      "toolsChanged",
    ]);
    expect(pool.conversations.log[3]).toEqual(["terminate", who, { timeoutMs: 50 }]);

    // A daemon that cannot hand over (no handover in its deps) says so, coded.
    await expect(c.handover()).rejects.toMatchObject({ code: "handover-failed" });

    await c.shutdown();
    await within(daemon.shutdownCalled, "deps.shutdown()");
    expect(daemon.seen).toEqual(new Set(Object.keys(METHODS)));
  });

  it("binds the socket 0600 and leaves nothing behind but it", async () => {
    const daemon = await startDaemon();
    const { statSync } = await import("node:fs");
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["mcpool.sock"]);
    await daemon.server.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a socket path too long for sun_path by the daemon's one limit, binding nothing", async () => {
    // One byte over paths.ts's limit, in the test's own directory.
    const long = join(dir, "s".repeat(MAX_SOCKET_PATH_BYTES - dir.length));
    expect(Buffer.byteLength(long)).toBe(MAX_SOCKET_PATH_BYTES + 1);
    const error = await rejection(startDaemon({ socketPath: long }));
    expect(error).toBeInstanceOf(DaemonSetupError);
    expect(error).toMatchObject({
      code: "socket-path-too-long",
      path: long,
      detail: { bytes: MAX_SOCKET_PATH_BYTES + 1, limit: MAX_SOCKET_PATH_BYTES },
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("never unlinks a socket that a successor renamed over its own", async () => {
    const first = await startDaemon();
    const second = await startDaemon();
    await first.server.close();
    const c = await client();
    expect((await c.status()).clients).toBe(1);
    expect(second.server.clients).toBe(1);
  });
});

describe("a connection while the server starts", () => {
  it("serves a client that connected before start() was over", async () => {
    // The socket is listened on under a temporary name, then chmod, stat and rename go by the
    // thread pool, a loop turn each: a connection made in one of those turns reaches a server
    // that is bound but still starting, as one made to the path just after the rename can.
    const starting = startDaemon();
    let peer: RawPeer | undefined;
    await within(
      (async () => {
        for (;;) {
          const name = readdirSync(dir).find((entry) => entry.endsWith(".tmp"));
          if (name !== undefined) return (peer = await RawPeer.open(join(dir, name)));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
      "the socket under its temporary name",
    );
    await starting;
    await peer!.hello();
    expect((await peer!.request("daemon/status", {})).result).toMatchObject({ version: "9.9.9" });
  });
});

describe("hostile peers", () => {
  let daemon: Daemon;
  let witness: PoolClient;

  beforeEach(async () => {
    daemon = await startDaemon({ maxFrameBytes: 1024 * 1024, maxOutboundBytes: 512 * 1024 });
    witness = await client("witness");
  });

  afterEach(async () => {
    // Whatever the peer did, another client is served.
    expect(await witness.call("echo__echo", { still: "ok" })).toBe('echo: {"still":"ok"}');
  });

  it("answers garbage after hello with a parse error and keeps the connection", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    peer.send("this is not json\n");
    const answer = await peer.next();
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect((await peer.request("daemon/status", {})).result).toMatchObject({ version: "9.9.9" });
  });

  it("answers garbage before hello with a parse error, then closes", async () => {
    const peer = await RawPeer.open();
    peer.send(Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x0a]));
    expect(errorCodeOf(await peer.next())).toBe(-32700);
    await within(peer.closed, "the connection to close");
  });

  it("refuses a request before hello, then closes", async () => {
    const peer = await RawPeer.open();
    peer.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    expect(await peer.next()).toMatchObject({ id: 1, error: { code: -32600 } });
    await within(peer.closed, "the connection to close");
  });

  it("refuses a hello of another protocol version with protocol-mismatch, then closes", async () => {
    const peer = await RawPeer.open();
    peer.send({
      jsonrpc: "2.0",
      id: 1,
      method: "hello",
      params: { protocolVersion: 99, clientName: "x", pid: 1 },
    });
    const answer = await peer.next();
    expect(answer).toMatchObject({
      id: 1,
      error: { data: { code: "protocol-mismatch", detail: { received: 99 } } },
    });
    await within(peer.closed, "the connection to close");
  });

  it("forgets half a frame when its peer disconnects", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    peer.send('{"jsonrpc":"2.0","id":5,"method":"daemon/st');
    expect(daemon.server.clients).toBe(2);
    peer.socket.destroy();
    await waitFor(
      () => daemon.server.clients === 1,
      BOUND_MS,
      "the half-frame peer to be forgotten",
    );
  });

  it("refuses a frame over the cap while it streams, then closes", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    // 1.5 MiB with no newline at all: an answer can only mean it was refused mid-stream.
    const slab = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 24 && !peer.socket.destroyed; i++) peer.send(slab);
    const answer = await peer.next("the oversize refusal");
    expect(answer).toMatchObject({
      id: null,
      error: { code: -32600, data: { limit: 1024 * 1024 } },
    });
    await within(peer.closed, "the connection to close");
    expect(daemon.errors.join("\n")).toContain("passed 1048576 bytes");
  });

  it("refuses deeply nested JSON without overflowing the stack", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    peer.send(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}}\n`,
    );
    expect(await peer.next()).toMatchObject({ error: { code: -32700 } });
    expect((await peer.request("daemon/status", {})).result).toBeDefined();
  });

  it("refuses invalid UTF-8 and NUL bytes frame by frame", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    peer.send(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"daemon/status","x":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}\n'),
      ]),
    );
    peer.send(Buffer.from('{"jsonrpc":"2.0",\0"id":2}\n'));
    expect(await peer.next()).toMatchObject({
      error: { code: -32700, message: expect.stringContaining("UTF-8") },
    });
    expect(await peer.next()).toMatchObject({ error: { code: -32700 } });
    expect((await peer.request("daemon/status", {})).result).toBeDefined();
  });

  it("answers JSON that is not JSON-RPC with invalid request, and keeps the connection", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    for (const junk of [
      { foo: 1 },
      42,
      [],
      [{ jsonrpc: "2.0", id: 1, method: "daemon/status" }],
      { jsonrpc: "1.0", id: 3, method: "x" },
      { jsonrpc: "2.0", id: { no: 1 }, method: "x" },
    ]) {
      peer.send(encodeFrame(junk));
      expect(errorCodeOf(await peer.next(`the answer to ${JSON.stringify(junk)}`))).toBe(-32600);
    }
    expect((await peer.request("daemon/status", {})).result).toBeDefined();
  });

  it("answers an unknown method with method not found, and wrong params with invalid params", async () => {
    const peer = await RawPeer.open();
    await peer.hello();
    expect(errorCodeOf(await peer.request("pool/explode", {}))).toBe(-32601);
    expect(errorCodeOf(await peer.request("tools/call", { name: 42 }))).toBe(-32602);
    expect(errorCodeOf(await peer.request("tools/call", ["by", "position"]))).toBe(-32602);
    expect(
      errorCodeOf(await peer.request("server/probe", { row: { id: "x", transport: "sse" } })),
    ).toBe(-32602);
    expect(
      errorCodeOf(await peer.request("hello", { protocolVersion: 1, clientName: "again", pid: 1 })),
    ).toBe(-32600);
    expect((await peer.request("daemon/status")).result).toBeDefined();
  });

  it("answers two peers that use the same request ids each with their own answer", async () => {
    const [a, b] = await Promise.all([RawPeer.open(), RawPeer.open()]);
    await a.hello();
    await b.hello();
    a.send({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "echo__echo", arguments: { who: "a" } },
    });
    b.send({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "echo__echo", arguments: { who: "b" } },
    });
    expect(await a.next()).toMatchObject({ id: 7, result: { text: 'echo: {"who":"a"}' } });
    expect(await b.next()).toMatchObject({ id: 7, result: { text: 'echo: {"who":"b"}' } });
  });

  it("closes a connection that says nothing within the hello bound", async () => {
    const quietPath = join(dir, "quiet.sock");
    const quiet = await startDaemon({ socketPath: quietPath, helloTimeoutMs: 50 });
    const peer = await RawPeer.open(quietPath);
    expect(await peer.next()).toMatchObject({
      id: null,
      error: { code: -32600, message: expect.stringContaining("no hello") },
    });
    await within(peer.closed, "the connection to close");
    await quiet.server.destroy();
  });

  it("refuses an answer larger than the frame cap instead of sending a frame the peer would drop", async () => {
    daemon.pool.bigTools = 2_000; // ~2 MB, over the 1 MiB cap
    const error = await rejection(witness.tools());
    daemon.pool.bigTools = 0;
    expect(error).toMatchObject({
      code: "answer-too-large",
      detail: { maxFrameBytes: 1024 * 1024, method: "tools/list" },
    });
    expect((error as Error).message).toContain("frame cap");
  });

  it("drops a peer that never reads once its unread answers pass the outbound cap", async () => {
    daemon.pool.bigTools = 200; // ~200 KB per answer
    const peer = await RawPeer.open();
    await peer.hello();
    peer.socket.pause();
    for (let i = 0; i < 40; i++)
      peer.send({ jsonrpc: "2.0", id: 1000 + i, method: "tools/list", params: {} });
    await waitFor(
      () => daemon.server.clients === 1,
      BOUND_MS,
      "the non-reading peer to be dropped",
    );
    expect(daemon.errors.join("\n")).toMatch(/unread, over the 524288-byte cap/);
    daemon.pool.bigTools = 0;
  });
});

describe("lifecycle", () => {
  it("aborts the handler's signal when its client disconnects mid-call", async () => {
    const { pool } = await startDaemon();
    const c = await client();
    const call = rejection(c.call("echo__hang"));
    await within(pool.hangStarted.promise, "the call to reach the pool");
    await c.close();
    expect(await call).toMatchObject({ code: "closed" });
    expect(await within(pool.hangAborted.promise, "ctx.signal to abort")).toBeInstanceOf(Error);
  });

  it("rejects a call at once when its AbortSignal fires, and stays usable", async () => {
    const { pool } = await startDaemon();
    const c = await client();
    const controller = new AbortController();
    const call = rejection(c.call("echo__hang", {}, { signal: controller.signal }));
    await within(pool.hangStarted.promise, "the call to reach the pool");
    controller.abort();
    expect(await call).toMatchObject({ name: "AbortError" });
    expect(await c.call("echo__echo", { after: 1 })).toBe('echo: {"after":1}');
  });

  it("withdraws an aborted call at the daemon too: its handler's signal aborts, the connection stays", async () => {
    const { pool } = await startDaemon();
    const c = await client();
    const controller = new AbortController();
    const call = rejection(c.call("echo__hang", {}, { signal: controller.signal }));
    await within(pool.hangStarted.promise, "the call to reach the pool");
    controller.abort();
    expect(await within(pool.hangAborted.promise, "ctx.signal to abort")).toMatchObject({
      name: "AbortError",
    });
    await call;
    expect(c.daemon).toBeDefined();
    expect(await c.call("echo__echo", { after: 2 })).toBe('echo: {"after":2}');
  });

  it("fails pending calls with daemon-unavailable at once when the daemon goes away", async () => {
    const { server, pool } = await startDaemon();
    const c = await client();
    const calls = [c.call("echo__hang"), c.status().then(() => c.call("echo__hang"))];
    await within(pool.hangStarted.promise, "the call to reach the pool");
    const destroyed = server.destroy();
    const errors = await within(Promise.all(calls.map(rejection)), "pending calls to fail", 1_000);
    for (const error of errors) expect(error).toMatchObject({ code: "daemon-unavailable" });
    await destroyed;
    // Called while disconnected: one redial, then a clear refusal.
    expect(await rejection(c.status())).toMatchObject({
      code: "daemon-unavailable",
      message: expect.stringContaining(socketPath),
    });
  });

  it("redials after the daemon restarts on the same path and re-subscribes by itself", async () => {
    const first = await startDaemon();
    const c = await client("agent", { maxReconnectDelayMs: 200 });
    const events: PoolEvent[] = [];
    c.onEvent((event) => events.push(event));
    await c.status();
    expect(first.pool.eventListeners.size).toBe(1);
    await first.server.destroy();

    const pool = new FakePool();
    await startDaemon({}, pool);
    // No call is made: the background redial alone must bring the subscription back.
    await waitFor(() => pool.eventListeners.size === 1, BOUND_MS, "the re-subscription");
    pool.emit({ type: "close", serverId: "echo", reason: "idle" });
    await waitFor(() => events.length === 1, BOUND_MS, "the event after the restart");
    expect(events[0]).toEqual({ type: "close", serverId: "echo", reason: "idle" });
    expect(c.daemon?.daemonVersion).toBe("9.9.9");
  });

  it("drains on close: a call in flight is answered before its connection ends", async () => {
    const { server, pool } = await startDaemon({ drainTimeoutMs: BOUND_MS });
    const c = await client();
    const call = c.call("echo__echo", { slow: false });
    const late = rejection(c.call("echo__hang"));
    await within(pool.hangStarted.promise, "the hanging call to reach the pool");
    expect(await call).toBe('echo: {"slow":false}');
    const closed = server.close();
    // The connection stays open for the call in flight, but takes no new work.
    expect(await rejection(c.status())).toMatchObject({ code: "closed" });
    // The hanging call holds the drain until the bound; a destroy cuts it short.
    await server.destroy();
    await within(closed, "close() to settle");
    expect(await late).toMatchObject({ code: "daemon-unavailable" });
  });

  it("keeps the daemon's fd count flat over 1,000 connect/close cycles", async () => {
    const daemon = await startDaemon();
    const fds = (): number => readdirSync("/proc/self/fd").length;
    for (let i = 0; i < 20; i++) await (await connect({ socketPath, clientName: "warm" })).close();
    await waitFor(() => daemon.server.clients === 0, BOUND_MS, "warm-up clients to go");
    const before = fds();
    for (let i = 0; i < 1_000; i++) {
      const c = await connect({ socketPath, clientName: `cycle-${i}` });
      await c.close();
    }
    await waitFor(() => daemon.server.clients === 0, BOUND_MS, "every client to be forgotten");
    expect(fds() - before).toBeLessThanOrEqual(4);
  });
});

describe("the socket check before the first byte", () => {
  it("refuses a path that is not a socket", async () => {
    writeFileSync(socketPath, "not a socket");
    const error = await rejection(connect({ socketPath, clientName: "x" }));
    expect(error).toMatchObject({
      code: "daemon-unavailable",
      message: `refusing ${socketPath}: it is not a socket`,
    });
  });

  it("refuses a symlink to a real socket rather than follow it", async () => {
    await startDaemon();
    const link = join(dir, "link.sock");
    symlinkSync(socketPath, link);
    const error = await rejection(connect({ socketPath: link, clientName: "x" }));
    expect(error).toMatchObject({
      code: "daemon-unavailable",
      message: expect.stringContaining("not a socket"),
    });
  });

  it("refuses a socket owned by another uid without sending it a byte", async () => {
    if (process.getuid?.() !== 0) {
      // Only root can give a socket away; the same refusal path is proven with a plain file.
      writeFileSync(socketPath, "");
      expect(await rejection(connect({ socketPath, clientName: "x" }))).toMatchObject({
        code: "daemon-unavailable",
      });
      return;
    }
    let accepted = 0;
    const foreign: Server = createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => foreign.listen(socketPath, resolve));
    cleanups.push(() => new Promise((resolve) => foreign.close(resolve)));
    chownSync(socketPath, 65534, 65534);
    const error = await rejection(connect({ socketPath, clientName: "x" }));
    expect(error).toMatchObject({
      code: "daemon-unavailable",
      message: `refusing ${socketPath}: the socket belongs to uid 65534, not to this user (uid 0)`,
    });
    expect(accepted).toBe(0);
  });

  it("says plainly that no daemon listens when the socket is absent", async () => {
    expect(await rejection(connect({ socketPath, clientName: "x" }))).toMatchObject({
      code: "daemon-unavailable",
      message: `no daemon is listening at ${socketPath}`,
    });
  });

  it("refuses a daemon that answers hello with another protocol version", async () => {
    const fake = createServer((socket) => {
      const decoder = new FrameDecoder();
      socket.on("data", (chunk: Buffer) => {
        for (const frame of decoder.push(chunk)) {
          const id = (frame.ok ? (frame.value as { id: number }).id : null) ?? null;
          socket.write(
            encodeFrame({
              jsonrpc: "2.0",
              id,
              result: { protocolVersion: 99, daemonVersion: "z", pid: 1 },
            }),
          );
        }
      });
    });
    await new Promise<void>((resolve) => fake.listen(socketPath, resolve));
    cleanups.push(() => new Promise((resolve) => fake.close(resolve)));
    expect(await rejection(connect({ socketPath, clientName: "x" }))).toMatchObject({
      code: "protocol-mismatch",
      detail: { expected: PROTOCOL_VERSION, received: 99 },
    });
  });
});

describe("processes", () => {
  const require = createRequire(join(process.cwd(), "package.json"));
  const clientUrl = pathToFileURL(require.resolve("mcpool-client")).href;

  function run(
    script: string,
    args: string[],
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    return within(
      new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr }))),
      `${script} to exit by itself`,
      10_000,
    );
  }

  it("lets an agent that connected, subscribed and called exit without close()", async () => {
    await startDaemon();
    const agent = join(dir, "agent.mjs");
    writeFileSync(
      agent,
      `import { connect } from ${JSON.stringify(clientUrl)};
const client = await connect({ socketPath: process.argv[2], clientName: "agent" });
client.onEvent(() => {});
process.stdout.write(await client.call("echo__echo", { from: "agent" }));
`,
    );
    const { code, stdout, stderr } = await run(agent, [socketPath]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe('echo: {"from":"agent"}');
  });

  it("starts the daemon with autoStartCommand when the socket is absent", async () => {
    const fakeDaemon = join(dir, "fake-daemon.mjs");
    writeFileSync(
      fakeDaemon,
      `import { createServer } from "node:net";
import { FrameDecoder, encodeFrame } from ${JSON.stringify(clientUrl)};
const server = createServer((socket) => {
  const decoder = new FrameDecoder();
  socket.on("data", (chunk) => {
    for (const frame of decoder.push(chunk)) {
      const { id, method } = frame.value;
      const result = method === "hello" ? { protocolVersion: 1, daemonVersion: "fake", pid: process.pid } : {};
      socket.write(encodeFrame({ jsonrpc: "2.0", id, result }));
    }
  });
  socket.on("close", () => server.close());
});
server.listen(process.env.MCPOOL_SOCKET);
setTimeout(() => process.exit(1), 20000).unref();
`,
    );
    const c = await connect({
      socketPath,
      clientName: "starter",
      autoStart: true,
      autoStartCommand: [process.execPath, fakeDaemon],
    });
    const pid = c.daemon?.pid ?? 0;
    cleanups.push(() => alive(pid) && process.kill(pid, "SIGKILL"));
    expect(c.daemon?.daemonVersion).toBe("fake");
    expect(pid).not.toBe(process.pid);
    await c.close();
    await waitFor(() => !alive(pid), BOUND_MS, "the fake daemon to exit");
  });

  // Without autoStartCommand the client starts its own mcpool CLI (daemon-autostart-env).
  it("refuses autoStart with an empty autoStartCommand", async () => {
    expect(
      await rejection(
        connect({ socketPath, clientName: "x", autoStart: true, autoStartCommand: [] }),
      ),
    ).toMatchObject({
      code: "daemon-unavailable",
      message: expect.stringContaining("autoStartCommand"),
    });
  });
});
