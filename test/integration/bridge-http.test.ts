/**
 * `mcpool bridge --http`: loopback only, Host/Origin checks against DNS rebinding, and a
 * bearer token generated and printed unless given — each refusal seen from a real socket.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpBridge, type HttpBridgeProcess } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1.0.0" },
  },
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A POST with exactly these headers (fetch may not set Host). */
function post(url: string, headers: Record<string, string>, body = INITIALIZE): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        // An SSE answer stays open for the session; its first event is all we need.
        res.on("data", () => {
          if (text.includes("\n\n")) res.destroy();
        });
        res.on("close", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("mcpool bridge --http", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let bridge: HttpBridgeProcess;
  let open: HttpBridgeProcess | undefined;

  beforeAll(async () => {
    home = testHome("mcpool-bridge-http-");
    home.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    daemon = await startDaemon(home);
    const pool: PoolClient = await poolClient(home);
    await pool.close();
    bridge = await httpBridge(home, ["--server", "echo"]);
  });

  afterAll(async () => {
    await bridge?.stop();
    await open?.stop();
    await daemon?.stop();
    home?.remove();
  });

  it("listens on 127.0.0.1 only and prints the token it generated", () => {
    expect(bridge.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(bridge.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(bridge.stderr()).toContain(`Authorization: Bearer ${bridge.token}`);
  });

  it("serves an MCP host that sends the token", async () => {
    const client = new Client({ name: "http-host", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(bridge.url), {
        requestInit: { headers: { authorization: `Bearer ${bridge.token}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        "echo",
        "add",
        "sleep",
        "pid",
      ]);
      const result = await client.callTool({ name: "echo", arguments: { text: "over http" } });
      expect(result.content).toEqual([{ type: "text", text: "over http" }]);
    } finally {
      await client.close();
    }
  });

  it("refuses a request without the token, or with another one (401)", async () => {
    const port = new URL(bridge.url).port;
    const missing = await post(bridge.url, { host: `127.0.0.1:${port}` });
    expect(missing.status).toBe(401);
    expect(missing.headers["www-authenticate"]).toMatch(/^Bearer/);
    const wrong = await post(bridge.url, {
      host: `127.0.0.1:${port}`,
      authorization: "Bearer not-the-token",
    });
    expect(wrong.status).toBe(401);
  });

  it("refuses a foreign Host or Origin even with the token (403: DNS rebinding)", async () => {
    const auth = { authorization: `Bearer ${bridge.token}` };
    const port = new URL(bridge.url).port;
    const host = await post(bridge.url, { ...auth, host: "evil.example.com" });
    expect(host.status).toBe(403);
    const origin = await post(bridge.url, {
      ...auth,
      host: `127.0.0.1:${port}`,
      origin: "http://evil.example.com",
    });
    expect(origin.status).toBe(403);
    const local = await post(bridge.url, {
      ...auth,
      host: `localhost:${port}`,
      origin: `http://localhost:${port}`,
    });
    expect(local.status).toBe(200);
    expect(local.headers["mcp-session-id"]).toBeTruthy();
  });

  it("answers 404 for another path and for a session it does not have", async () => {
    const auth = { authorization: `Bearer ${bridge.token}` };
    const port = new URL(bridge.url).port;
    const other = await post(`http://127.0.0.1:${port}/other`, auth);
    expect(other.status).toBe(404);
    const session = await post(bridge.url, { ...auth, "mcp-session-id": "no-such-session" });
    expect(session.status).toBe(404);
  });

  it("leaves a host's idle connection open for the host to close", async () => {
    // A GET with no session is answered 400 without a body to read: one request, one answer.
    const port = new URL(bridge.url).port;
    const ask = [
      "GET /mcp HTTP/1.1",
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${bridge.token}`,
      "",
      "",
    ].join("\r\n");
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    let closed = false;
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("close", () => (closed = true));
    const answers = () => received.split("HTTP/1.1 400").length - 1;
    try {
      socket.write(ask);
      await waitFor(() => answers() === 1, 10_000, "the first answer");
      expect(received).not.toMatch(/keep-alive: timeout/i);
      // Idle past the 5 s after which Node would close it: a host stalled under load.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(closed).toBe(false);
      socket.write(ask);
      await waitFor(() => answers() === 2 || closed, 10_000, "the second answer");
      expect(answers()).toBe(2);
    } finally {
      socket.destroy();
    }
  });

  it("with --token none asks for no token but still checks Host and Origin", async () => {
    open = await httpBridge(home, ["--server", "echo", "--token", "none"]);
    expect(open.token).toBeUndefined();
    expect(open.stderr()).toContain("--token none");
    const port = new URL(open.url).port;
    expect((await post(open.url, { host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await post(open.url, { host: "evil.example.com" })).status).toBe(403);
  });
});
