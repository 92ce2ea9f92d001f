/**
 * Remote servers over real loopback HTTP (test/faults.ts, "Remote servers"): the
 * keep-alive fetch under load, Keep-Alive hints, session loss and its single redial,
 * redirects that leave the origin or downgrade, and the URL policy applied to what
 * placeholders expand to. Every peer is a real server on `listen(0)`.
 */
import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import {
  keepAliveFetch,
  McpPool,
  McpPoolError,
  originPinnedFetch,
  RedirectRefusedError,
  validateServerConfig,
  type FetchLike,
  type HttpServerConfig,
  type McpPoolOptions,
  type PoolEvent,
} from "../../src/index.js";
import { fixture } from "../helpers/processes.js";
import { startHttpMcpServer, type HttpMcpServer } from "../helpers/http-mcp-server.js";

const servers: { close(): Promise<void> }[] = [];
const pools: McpPool[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function mcpServer(
  options: Parameters<typeof startHttpMcpServer>[0] = {},
): Promise<HttpMcpServer> {
  const server = await startHttpMcpServer(options);
  servers.push(server);
  return server;
}

function pool(options: Partial<McpPoolOptions> = {}): McpPool {
  const created = new McpPool({ clientName: "remote-test", log: {}, ...options });
  pools.push(created);
  return created;
}

const row = (url: string, extra: Partial<HttpServerConfig> = {}): HttpServerConfig => ({
  id: "remote",
  transport: "http",
  url,
  ...extra,
});

interface PlainServer {
  origin: string;
  seen: { url: string; headers: IncomingHttpHeaders }[];
  connections: number;
}

/** A plain loopback server answering every request with `answer`; counts its connections. */
async function plainServer(
  answer: (url: string) => { status: number; headers?: Record<string, string>; body?: string },
  options: { keepAliveTimeout?: number; tls?: boolean } = {},
): Promise<PlainServer> {
  const seen: PlainServer["seen"] = [];
  const state = { connections: 0 };
  const handler = (
    req: import("node:http").IncomingMessage,
    res: import("node:http").ServerResponse,
  ) => {
    seen.push({ url: req.url ?? "", headers: { ...req.headers } });
    req.resume();
    const { status, headers, body } = answer(req.url ?? "");
    res.writeHead(status, headers).end(body);
  };
  const server: Server = options.tls
    ? createHttpsServer(
        { key: readFileSync(fixture("tls/key.pem")), cert: readFileSync(fixture("tls/cert.pem")) },
        handler,
      )
    : createHttpServer(handler);
  server.on(options.tls ? "secureConnection" : "connection", () => (state.connections += 1));
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    seen,
    get connections() {
      return state.connections;
    },
  };
}

/** A fetch that trusts the test certificate, for the https servers here. */
function trustingFetch(): FetchLike {
  const agent = new Agent({ connect: { ca: readFileSync(fixture("tls/cert.pem")) } });
  servers.push({ close: () => agent.destroy() });
  return (url, init) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("keepAliveFetch", () => {
  it("makes 2,000 calls to a loopback MCP server without a MaxListenersExceededWarning, on kept connections", async () => {
    const server = await mcpServer();
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on("warning", onWarning);
    try {
      const p = pool();
      await p.sync([row(server.url)]);
      const before = server.toolCalls;
      // 100 rounds of 20 concurrent calls. The SDK hands every request of a transport one
      // shared signal; on it, undici's fetch passes its 1,500-listener limit well before 2,000.
      for (let round = 0; round < 100; round++) {
        const texts = await Promise.all(
          Array.from({ length: 20 }, (_, i) => p.call("remote__echo", { text: `${round}-${i}` })),
        );
        expect(texts[19]).toBe(`${round}-19`);
      }
      expect(server.toolCalls - before).toBe(2000);
      // Warnings are emitted on the next tick; let any that is queued arrive.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
      // Connections are kept and reused: a new one per call would make 2,000.
      expect(server.connections).toBeLessThan(100);
    } finally {
      process.off("warning", onWarning);
    }
  }, 90_000);

  it("keeps an idle connection when the server gives no short hint, and takes a short Keep-Alive hint at its word", async () => {
    const patient = await plainServer(() => ({ status: 200, body: "ok" }), {
      keepAliveTimeout: 60_000,
    });
    // Node's server says `Keep-Alive: timeout=1`: less the one-second margin, nothing is left to keep.
    const hasty = await plainServer(() => ({ status: 200, body: "ok" }), {
      keepAliveTimeout: 1000,
    });
    const fetch = keepAliveFetch();
    servers.push({ close: () => fetch.destroy() });
    for (let i = 0; i < 5; i++) {
      expect(await (await fetch(`${patient.origin}/`)).text()).toBe("ok");
      expect(await (await fetch(`${hasty.origin}/`)).text()).toBe("ok");
    }
    expect(patient.connections).toBe(1);
    expect(hasty.connections).toBe(5);
  });

  it("aborts a request when the caller's shared signal aborts, and refuses after close()", async () => {
    const hanging = await plainServer(() => ({ status: 200, body: "never" }));
    const stalled = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
    servers.push({
      close: () =>
        new Promise<void>((resolve) => {
          stalled.closeAllConnections();
          stalled.close(() => resolve());
        }),
    });
    const fetch = keepAliveFetch(5_000);
    const shared = new AbortController();
    const pending = fetch(`http://127.0.0.1:${(stalled.address() as AddressInfo).port}/`, {
      signal: shared.signal,
    });
    const ok = await fetch(`${hanging.origin}/`, { signal: shared.signal });
    expect(await ok.text()).toBe("never");
    const many = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${hanging.origin}/`, { signal: shared.signal })),
    );
    await Promise.all(many.map((r) => r.text()));
    // Fifty-two requests on the caller's signal, one listener on it: each has a signal of its own.
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    shared.abort();
    const error = await refusal(pending);
    expect(error.name).toBe("AbortError");
    await fetch.close();
    await expect(fetch(`${hanging.origin}/`)).rejects.toThrow(/closed/);
  });
});

describe("session loss", () => {
  it("redials once when the server forgot the session, and the call runs exactly once", async () => {
    const server = await mcpServer();
    const p = pool();
    const events: PoolEvent[] = [];
    p.onEvent((e) => events.push(e));
    await p.sync([row(server.url)]);
    const first = await p.call("remote__session");
    await server.forget();
    const calls = server.toolCalls;
    const second = await p.call("remote__session");
    expect(second).not.toBe(first);
    expect(server.toolCalls).toBe(calls + 1);
    expect(server.sessionsCreated).toBe(2);
    expect(events.filter((e) => e.type === "close")).toEqual([
      { type: "close", serverId: "remote", reason: "redial", kept: true },
    ]);
    expect(events.filter((e) => e.type === "connect")).toHaveLength(2);
    expect(p.state()[0]).toMatchObject({ status: "ready" });
  });

  it("shares one redial between concurrent calls that all saw the loss", async () => {
    const server = await mcpServer();
    const p = pool();
    await p.sync([row(server.url)]);
    await server.forget();
    const calls = server.toolCalls;
    const sessions = await Promise.all(Array.from({ length: 12 }, () => p.call("remote__session")));
    expect(new Set(sessions).size).toBe(1);
    expect(server.sessionsCreated).toBe(2);
    expect(server.toolCalls).toBe(calls + 12);
  });

  it("redials on a 400 for a missing session id when a stateless server came back stateful", async () => {
    const server = await mcpServer({ mode: "stateless" });
    const p = pool();
    await p.sync([row(server.url)]);
    expect(await p.call("remote__session")).toBe("none");
    server.becomeStateful();
    const session = await p.call("remote__session");
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.sessionsCreated).toBe(1);
  });

  it("never loops: a server that keeps refusing fails the call after one redial", async () => {
    const server = await mcpServer();
    const p = pool();
    await p.sync([row(server.url)]);
    server.refuseToolCalls = true;
    const error = await refusal(p.call("remote__echo", { text: "x" }));
    expect((error as Error & { code?: number }).code).toBe(404);
    expect(server.sessionsCreated).toBe(2);
    expect(server.toolCalls).toBe(0);
  });

  it("use() redials for a consumer driving the client, and client() hands the connected client out", async () => {
    const server = await mcpServer();
    const p = pool();
    await p.sync([row(server.url), row(server.url, { id: "off", enabled: false })]);
    const client = await p.client("remote");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "session"]);
    await server.forget();
    const listed = await p.use("remote", (c) => c.listTools());
    expect(listed.tools).toHaveLength(2);
    expect(server.sessionsCreated).toBe(2);
    // The old client is retired, the new one is what client() gives now.
    expect(await p.client("remote")).not.toBe(client);
    const failure = await refusal(p.use("remote", () => Promise.reject(new Error("mine"))));
    expect(failure.message).toBe("mine");
    expect(server.sessionsCreated).toBe(2);
    expect(((await refusal(p.client("off"))) as McpPoolError).code).toBe("disabled");
    expect(((await refusal(p.client("nope"))) as McpPoolError).code).toBe("unknown-server");
    expect(((await refusal(p.use("nope", async () => 1))) as McpPoolError).code).toBe(
      "unknown-server",
    );
  });
});

describe("redirects", () => {
  const secrets = { Authorization: "Bearer tok-of-origin-a", "X-Api-Key": "key-of-origin-a" };

  it("drops configured headers and authorization on a hop to another origin", async () => {
    const target = await mcpServer();
    const front = await plainServer(() => ({ status: 307, headers: { location: target.url } }));
    const p = pool();
    await p.sync([row(`${front.origin}/mcp`, { headers: secrets })]);
    expect(await p.call("remote__echo", { text: "through" })).toBe("through");
    expect(front.seen.length).toBeGreaterThan(0);
    for (const seen of front.seen) {
      expect(seen.headers.authorization).toBe("Bearer tok-of-origin-a");
      expect(seen.headers["x-api-key"]).toBe("key-of-origin-a");
    }
    expect(target.requests.length).toBeGreaterThan(0);
    for (const seen of target.requests) {
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers["x-api-key"]).toBeUndefined();
    }
  });

  it("keeps the headers on a redirect within the configured origin", async () => {
    const server = await mcpServer({ redirects: { "/old": "/mcp" } });
    const p = pool();
    await p.sync([row(`${server.origin}/old`, { headers: secrets })]);
    expect(await p.call("remote__echo", { text: "moved" })).toBe("moved");
    const moved = server.requests.filter((r) => r.url === "/mcp");
    expect(moved.length).toBeGreaterThan(0);
    for (const seen of moved) expect(seen.headers.authorization).toBe("Bearer tok-of-origin-a");
  });

  it("refuses a redirect from https down to plain http; the http server is never asked", async () => {
    const plain = await mcpServer();
    const secure = await plainServer(() => ({ status: 307, headers: { location: plain.url } }), {
      tls: true,
    });
    const p = pool({ fetch: trustingFetch() });
    await p.sync([row(`${secure.origin}/mcp`, { headers: secrets })]);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toMatch(
      /refused a redirect from https:\/\/127\.0\.0\.1:\d+ to http:.*downgrade/,
    );
    expect(secure.seen.length).toBeGreaterThan(0);
    expect(plain.requests).toEqual([]);
  });

  it("refuses a redirect to plain http off this machine, and bounds the hops", async () => {
    const away = await plainServer(() => ({
      status: 302,
      headers: { location: "http://mcp.example.invalid/mcp" },
    }));
    const loop = await plainServer((url) => ({
      status: 307,
      headers: { location: `${url === "/mcp" ? "/a" : "/mcp"}` },
    }));
    const fetch = keepAliveFetch();
    servers.push({ close: () => fetch.destroy() });
    const awayError = await refusal(
      originPinnedFetch(`${away.origin}/mcp`, [], fetch)(`${away.origin}/mcp`),
    );
    expect(awayError).toBeInstanceOf(RedirectRefusedError);
    expect((awayError as RedirectRefusedError).code).toBe("redirect-disallowed");
    const loopError = await refusal(
      originPinnedFetch(
        `${loop.origin}/mcp`,
        [],
        fetch,
      )(`${loop.origin}/mcp`, {
        method: "POST",
        body: "{}",
      }),
    );
    expect((loopError as RedirectRefusedError).code).toBe("too-many-redirects");
    // The first request and five redirects followed, then nothing.
    expect(loop.seen).toHaveLength(6);
  });

  it("hands a 302 answer to a POST back unfollowed rather than turning it into a GET", async () => {
    const moved = await plainServer(() => ({ status: 302, headers: { location: "/elsewhere" } }));
    const fetch = keepAliveFetch();
    servers.push({ close: () => fetch.destroy() });
    const response = await originPinnedFetch(
      `${moved.origin}/mcp`,
      [],
      fetch,
    )(`${moved.origin}/mcp`, {
      method: "POST",
      body: "{}",
    });
    expect(response.status).toBe(302);
    expect(moved.seen).toHaveLength(1);
  });
});

describe("placeholders at the transport boundary and the URL policy on what they make", () => {
  it("fills url and header placeholders only when dialling; state() keeps them as written", async () => {
    const server = await mcpServer();
    const logged: string[] = [];
    const p = pool({
      env: { MCP_PORT: String(server.port), API_TOKEN: "tok-from-env-123" },
      log: { error: (m) => logged.push(m), info: () => undefined },
    });
    const configured = row("http://127.0.0.1:${MCP_PORT}/mcp", {
      headers: { Authorization: "Bearer ${API_TOKEN}", "X-Missing": "${NOT_SET_ANYWHERE}" },
    });
    expect(validateServerConfig(configured)).toEqual([]);
    await p.sync([configured]);
    expect(await p.call("remote__echo", { text: "hi" })).toBe("hi");
    const seen = server.requests.at(-1)!;
    expect(seen.headers.authorization).toBe("Bearer tok-from-env-123");
    expect(seen.headers["x-missing"]).toBe("${NOT_SET_ANYWHERE}");
    expect(p.state()[0]?.config).toEqual({
      id: "remote",
      transport: "http",
      url: "http://127.0.0.1:${MCP_PORT}/mcp",
    });
    expect((p.state({ secrets: true })[0]?.config as HttpServerConfig).headers).toEqual(
      configured.headers,
    );
    expect(JSON.stringify(p.state({ secrets: true }))).not.toContain("tok-from-env-123");
    // Named once, though the server was dialled again.
    await p.reconnect("remote");
    expect(logged.filter((m) => m.includes("${NOT_SET_ANYWHERE}"))).toEqual([
      "mcpool: remote: ${NOT_SET_ANYWHERE} is not set and has no default; it is passed to the server as written",
    ]);
  });

  it("refuses at dial time a url whose placeholder host turns out not to be loopback over http", async () => {
    const configured = row("http://${MCP_HOST}/mcp");
    expect(validateServerConfig(configured)).toEqual([]);
    const p = pool({ env: { MCP_HOST: "mcp.example.com" } });
    await p.sync([configured]);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toBe(
      'could not connect to server "remote": `url` uses plain http to mcp.example.com; http is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https',
    );
    const call = (await refusal(p.call("remote__echo", {}))) as McpPoolError;
    expect(call.code).toBe("backoff");
  });
});
