/**
 * The ways in of the matrix: `direct` (the host spawns the server itself) and each entry a
 * host can be given for one pooled server — the perl relay `mcpool wire` writes, the lean
 * `mcpool bridge --server ID` (the installed executable's byte pipe), the full CLI's
 * `mcpool bridge --server ID`, `mcpool bridge --server ID --http` — and the client library
 * (mcpool-client), which has no handshake and lists tools as a model is offered them.
 */
import { existsSync } from "node:fs";
import { expect } from "vitest";
import { connect, McpPoolError, type HostProfile, type PoolClient } from "mcpool-client";
import { bridgeCommand, httpBridge, scopeSocket, stringEnv } from "../helpers/bridge.js";
import type { TestHome } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { connectHost, elicitAnswer, SAMPLE, type Asked, type Host, type HostSpec } from "./host.js";
import { LIBRARY_TOOL_NAMES } from "./normalise.js";
import type { MatrixServer } from "./servers.js";

export const ENTRIES = ["perl", "lean", "cli", "http", "library"] as const;
export type Entry = "direct" | (typeof ENTRIES)[number];

/** A host of `spec` on `server` through `entry`; close() ends what the entry started too. */
export async function openHost(
  home: TestHome,
  server: MatrixServer,
  spec: HostSpec,
  entry: Entry,
): Promise<Host> {
  const env = stringEnv(home.env);
  if (entry === "direct") {
    const target = {
      kind: "stdio" as const,
      command: server.command,
      args: server.args,
      env: { ...env, ...server.env },
    };
    return connectHost(spec, target);
  }
  if (entry === "library") return libraryHost(home, server, spec);
  const args = ["--server", server.id, "--socket", home.socketPath];
  await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, `${server.id}'s MCP socket`);
  if (entry === "http") return httpHost(home, spec, args);
  const via = entry === "cli" ? "sdk" : entry;
  return connectHost(spec, { kind: "stdio", ...bridgeCommand(home, args, via), env });
}

/**
 * `run` with a plain SDK v1 host (no capabilities, rooted in the test's home) of `server`
 * through `entry`, and, when pooled, a pool client watching the row; both closed after.
 */
export async function withPlainHost<R>(
  home: TestHome,
  server: MatrixServer,
  entry: Entry,
  run: (host: Host, pool: PoolClient | undefined) => Promise<R>,
): Promise<R> {
  const pool =
    entry === "direct"
      ? undefined
      : await connect({ socketPath: home.socketPath, clientName: "differential-watch" });
  const spec: HostSpec = { client: "v1", capabilities: "none", root: home.dir };
  const host = await openHost(home, server, spec, entry).catch(async (error: unknown) => {
    await pool?.close();
    throw error;
  });
  try {
    return await run(host, pool);
  } finally {
    await Promise.all([host.close(), pool?.close()]);
  }
}

/** The names of the tools `host` lists. */
export async function toolNames(host: Host): Promise<string[]> {
  const listed = (await host.request("tools/list", {})) as { tools: { name: string }[] };
  return listed.tools.map((tool) => tool.name);
}

/**
 * Has test/fixtures/roots-notices.mjs grow a tool, which it says (one tool list change, heard
 * by `host`), and resolves with the tools it listed before.
 */
export async function growOneTool(host: Host): Promise<string[]> {
  const before = await toolNames(host);
  await host.request("tools/call", { name: "grow", arguments: {} });
  await waitFor(() => host.notices?.length === 1, 15_000, "the grown tool's list change");
  expect(await toolNames(host)).toEqual([...before, "grown-1"]);
  return before;
}

/** A host of `spec` on `mcpool bridge --http 0 …args`; close() stops the bridge too. */
export async function httpHost(home: TestHome, spec: HostSpec, args: string[]): Promise<Host> {
  const bridge = await httpBridge(home, args);
  try {
    const host = await connectHost(spec, { kind: "http", url: bridge.url, token: bridge.token });
    return { ...host, close: () => host.close().finally(() => bridge.stop()) };
  } catch (error) {
    await bridge.stop();
    throw error;
  }
}

/**
 * The client library as a host, as its API lets an agent be one (docs/client-library.md):
 * the host's clientInfo given to connect(); its listings and calls for the one server with
 * the host's profile — sampling and elicitation form and url, as the SDK host declares them
 * — given to every request that takes one, and its handlers answering as a host's do (it declares no roots). A refusal is an
 * McpPoolError: the server's JSON-RPC code is its `detail.mcpCode`, read as the host's code.
 */
/**
 * A library refusal that carries the server's own JSON-RPC error, as the SDK v2 host has
 * it: the code is the McpPoolError's `detail.mcpCode`, and its message the server's words as
 * it sent them, `detail.mcpMessage` (the library's own message puts `MCP error <code>: `
 * once before them, which SDK v2 leaves off).
 */
function asServerError(error: unknown): never {
  const detail = (error as { detail?: { mcpCode?: unknown; mcpMessage?: unknown; data?: unknown } })
    .detail;
  if (error instanceof McpPoolError && typeof detail?.mcpCode === "number") {
    const message = typeof detail.mcpMessage === "string" ? detail.mcpMessage : error.message;
    throw Object.assign(new Error(message), { code: detail.mcpCode, data: detail.data });
  }
  throw error;
}

async function libraryHost(home: TestHome, server: MatrixServer, spec: HostSpec): Promise<Host> {
  const pool = await connect({
    socketPath: home.socketPath,
    clientName: "differential-host",
    clientInfo: { name: "differential-host", version: "1.0.0" },
  });
  const profile: HostProfile =
    spec.capabilities === "asks" ? { sampling: true, elicitation: ["form", "url"] } : {};
  const asked: Asked[] = [];
  if (spec.capabilities === "asks") {
    pool.onSample((params) => {
      asked.push({ method: "sampling/createMessage", params });
      return SAMPLE as never;
    });
    pool.onElicit((params) => {
      asked.push({ method: "elicitation/create", params });
      return elicitAnswer(params as Record<string, unknown>) as never;
    });
  }
  const id = server.id;
  const updated: string[] = [];
  pool.onNotification((from, notification) => {
    const { method, params } = notification as { method: string; params?: { uri?: unknown } };
    if (from === id && method === "notifications/resources/updated") {
      updated.push(String(params?.uri));
    }
  });
  const servers = [id];
  const state = (await pool.state()).find((s) => s.id === id);
  type Params = Record<string, never>;
  const methods: Record<string, (p: Params) => Promise<unknown>> = {
    "tools/list": async () => ({
      tools: await Promise.all(
        (await pool.tools({ servers, profile })).map(async (t) => ({
          name: LIBRARY_TOOL_NAMES.own(id, t.function.name),
          description: LIBRARY_TOOL_NAMES.ownDescription(id, t.function.description),
          inputSchema: t.function.parameters,
          // Whether it may run as a task: describe() says (a model is not told).
          execution: (await pool.describe(t.function.name, { servers, profile }))?.execution,
        })),
      ),
    }),
    "tools/call": (p) =>
      pool.call(LIBRARY_TOOL_NAMES.name(id, p.name), p.arguments, {
        servers,
        profile,
        raw: true,
        ...(p.task !== undefined ? { task: p.task } : {}),
      }),
    // A task-augmented call's task: the library's task requests, to the same server.
    ...Object.fromEntries(
      (["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"] as const).map((m) => [
        m,
        (p: Params) => pool.tasks.request(id, m, p),
      ]),
    ),
    "prompts/list": (p) => pool.listPrompts(id, { ...p, profile }),
    "prompts/get": (p) => pool.getPrompt(id, p.name, p.arguments, { profile }),
    "resources/list": (p) => pool.listResources(id, { ...p, profile }),
    "resources/templates/list": (p) => pool.listResourceTemplates(id, { ...p, profile }),
    "resources/read": (p) => pool.readResource(id, p.uri, { profile }),
    "resources/subscribe": async (p) => (await pool.subscribeResource(id, p.uri), {}),
    "resources/unsubscribe": async (p) => (await pool.unsubscribeResource(id, p.uri), {}),
    "completion/complete": (p) => pool.complete(id, p as never),
  };
  return {
    era: "library",
    serverInfo: undefined,
    serverCapabilities: (state as { capabilities?: unknown } | undefined)?.capabilities,
    instructions: state?.instructions,
    asked,
    updated,
    request: (method, params) => methods[method]!(params as Params).catch(asServerError),
    close: () => pool.close(),
  };
}
