/**
 * A real Streamable HTTP MCP server on loopback for tests: node:http on `listen(0)`, the
 * SDK's StreamableHTTPServerTransport keyed by session id. It can forget every session (a
 * restart, as the client sees it: 404 for the old id), switch from stateless to stateful
 * (400 for a request with no id), and counts TCP connections, requests and tool calls.
 */
import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from "node:http";
import type { AddressInfo } from "node:net";
import { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface HttpMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  origin: string;
  port: number;
  server: Server;
  /** Every request, in arrival order. */
  requests: SeenRequest[];
  /** TCP connections accepted. */
  connections: number;
  /** Sessions created by an initialize. */
  sessionsCreated: number;
  /** tools/call requests the server ran. */
  toolCalls: number;
  /** Drops every session, as a restart would: their ids now get 404. */
  forget(): Promise<void>;
  /** From now on, a request without a session id gets 400 (a stateless server came back stateful). */
  becomeStateful(): void;
  /** While true, every tools/call is answered 404, as if each session were forgotten at once. */
  refuseToolCalls: boolean;
  close(): Promise<void>;
}

export interface HttpMcpServerOptions {
  /** Default "stateful". */
  mode?: "stateful" | "stateless";
  /** The server's keep-alive timeout, ms (its `Keep-Alive: timeout` hint). Default Node's 5 s. */
  keepAliveTimeout?: number;
  /** Paths answered with a 307 to the given Location. */
  redirects?: Readonly<Record<string, string>>;
  /** The port to listen on: a server "back" where a stopped one was. Default any free port. */
  port?: number;
}

export async function startHttpMcpServer(
  options: HttpMcpServerOptions = {},
): Promise<HttpMcpServer> {
  let mode = options.mode ?? "stateful";
  const control = { refuseToolCalls: false };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state = {
    requests: [] as SeenRequest[],
    connections: 0,
    sessionsCreated: 0,
    toolCalls: 0,
  };

  const build = (): McpServer => {
    const mcp = new McpServer(
      { name: "http-test", version: "1.0.0" },
      { capabilities: { tools: {} } },
    );
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: "echo",
          description: "Echoes text.",
          inputSchema: { type: "object", properties: { text: { type: "string" } } },
        },
        {
          name: "session",
          description: "The session id this call arrived on.",
          inputSchema: { type: "object" },
        },
      ],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      state.toolCalls += 1;
      const text =
        request.params.name === "session"
          ? String(extra.sessionId ?? "none")
          : String(request.params.arguments?.text ?? "");
      return { content: [{ type: "text", text }] };
    });
    return mcp;
  };

  const refuse = (
    res: import("node:http").ServerResponse,
    status: number,
    message: string,
  ): void => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
  };

  const server = createServer((req, res) => {
    void (async () => {
      state.requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: { ...req.headers },
      });
      const location = options.redirects?.[req.url ?? ""];
      if (location !== undefined) {
        req.resume();
        res.writeHead(307, { location }).end();
        return;
      }
      if (mode === "stateless") {
        if (req.method !== "POST") return refuse(res, 405, "Method not allowed");
        const transport = new StreamableHTTPServerTransport({}); // no sessionIdGenerator: stateless
        const mcp = build();
        res.on("close", () => {
          void transport.close();
          void mcp.close();
        });
        await mcp.connect(transport);
        await transport.handleRequest(req, res);
        return;
      }
      const sessionId = req.headers["mcp-session-id"];
      if (typeof sessionId === "string") {
        const transport = sessions.get(sessionId);
        if (!transport) return refuse(res, 404, "Session not found");
        if (req.method !== "POST") return transport.handleRequest(req, res);
        const message = await readJson(req);
        if (control.refuseToolCalls && (message as { method?: string })?.method === "tools/call") {
          return refuse(res, 404, "Session not found");
        }
        await transport.handleRequest(req, res, message);
        return;
      }
      const body = req.method === "POST" ? await readJson(req) : undefined;
      if (!isInitializeRequest(body)) {
        return refuse(res, 400, "Bad Request: Mcp-Session-Id header is required");
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          state.sessionsCreated += 1;
          sessions.set(id, transport);
        },
      });
      await build().connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, (error as Error).message);
    });
  });
  server.on("connection", () => (state.connections += 1));
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const dropSessions = async (): Promise<void> => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((t) => t.close().catch(() => undefined)));
  };

  return {
    url: `${origin}/mcp`,
    origin,
    port,
    server,
    get requests() {
      return state.requests;
    },
    get connections() {
      return state.connections;
    },
    get sessionsCreated() {
      return state.sessionsCreated;
    },
    get toolCalls() {
      return state.toolCalls;
    },
    forget: dropSessions,
    becomeStateful() {
      mode = "stateful";
    },
    get refuseToolCalls() {
      return control.refuseToolCalls;
    },
    set refuseToolCalls(value: boolean) {
      control.refuseToolCalls = value;
    },
    async close() {
      await dropSessions();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}
