/**
 * A stateful Streamable HTTP MCP server for per-conversation tests:
 * node:http on a loopback port, one SDK StreamableHTTPServerTransport per session, keyed by
 * the session id it issued. It counts requests by method (and GETs, its sessions' streams of
 * unasked messages), keeps a counter per session (the `count` tool), and its DELETEs can be held, refused with 405, or answered 404 for
 * sessions it forgot.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  counter: number;
}

export interface SessionServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Requests seen: JSON-RPC methods by name, and `DELETE` for session ends. */
  count(method: string): number;
  /** Sessions the server holds now. */
  sessions(): number;
  /** Sessions ever opened. */
  opened(): number;
  /** DELETEs wait until the returned function is called. */
  holdDeletes(): () => void;
  /** true: DELETE answers 405 (the server does not end sessions on request). */
  refuseDeletes(refuse: boolean): void;
  /** Forgets every session without telling its client: the next request gets 404. */
  forgetAll(): void;
  /** Replaces the tool list every session offers (`count` stays). */
  setTools(extra: Tool[]): void;
  /** GET streams open now (where a session's unasked messages go); `count("GET")` counts them all. */
  listening(): number;
  /** Sends tools/list_changed on every session. */
  listChanged(): Promise<void>;
  close(): Promise<void>;
}

const COUNT_TOOL: Tool = {
  name: "count",
  description: "Counts the calls made in this session.",
  inputSchema: { type: "object" },
};

export async function sessionServer(): Promise<SessionServer> {
  const sessions = new Map<string, Session>();
  const counts = new Map<string, number>();
  let opened = 0;
  let listening = 0;
  let refuse = false;
  let held: Promise<void> | undefined;
  let extra: Tool[] = [];
  const bump = (method: string): void => {
    counts.set(method, (counts.get(method) ?? 0) + 1);
  };

  const build = (): Server => {
    const server = new Server(
      { name: "session-server", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [COUNT_TOOL, ...extra] }));
    server.setRequestHandler(CallToolRequestSchema, (request, context) => {
      const session = sessions.get(context.sessionId ?? "");
      if (request.params.name !== "count" || session === undefined) {
        return { isError: true, content: [{ type: "text", text: "no such tool" }] };
      }
      session.counter += 1;
      return { content: [{ type: "text", text: String(session.counter) }] };
    });
    return server;
  };

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return text === "" ? undefined : (JSON.parse(text) as unknown);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = req.headers["mcp-session-id"];
    const sessionId = typeof id === "string" ? id : undefined;
    if (req.method === "DELETE") {
      bump("DELETE");
      if (held) await held;
      if (refuse) {
        res.writeHead(405).end();
        return;
      }
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (session === undefined) {
        res.writeHead(404).end();
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method === "GET") {
      bump("GET");
      listening += 1;
      res.once("close", () => (listening -= 1));
    }
    const body = req.method === "POST" ? await readBody(req) : undefined;
    for (const message of Array.isArray(body) ? body : [body]) {
      const method = (message as { method?: unknown } | undefined)?.method;
      if (typeof method === "string") bump(method);
    }
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (session === undefined) {
        res.writeHead(404).end();
        return;
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    const server = build();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (issued) => {
        opened += 1;
        sessions.set(issued, { transport, server, counter: 0 });
      },
      onsessionclosed: (closed) => {
        sessions.delete(closed);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    count: (method) => counts.get(method) ?? 0,
    sessions: () => sessions.size,
    opened: () => opened,
    listening: () => listening,
    holdDeletes() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      const current = held;
      return () => {
        if (held === current) held = undefined;
        release();
      };
    },
    refuseDeletes(value) {
      refuse = value;
    },
    forgetAll() {
      const all = [...sessions.values()];
      sessions.clear();
      for (const session of all) void session.transport.close();
    },
    setTools(tools) {
      extra = tools;
    },
    async listChanged() {
      await Promise.all([...sessions.values()].map((s) => s.server.sendToolListChanged()));
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
