/**
 * The bridge over Streamable HTTP: node:http on 127.0.0.1 only, one MCP session
 * (SDK StreamableHTTPServerTransport + a bridge Server) per `initialize`, found again by its
 * `mcp-session-id`. Every request passes three checks before the SDK sees it:
 * - Host must name a loopback host (localhost, 127.0.0.1, [::1]) and Origin, when sent, a
 *   loopback origin: a page whose DNS name was rebound to 127.0.0.1 is refused (403);
 * - `Authorization: Bearer <token>` must carry the bridge's token (401), compared in
 *   constant time; `token: null` switches this off, for loopback test harnesses that
 *   cannot send a header (the conformance runner) — any local process can then use it;
 * - the path must be the MCP endpoint (404).
 *
 * An idle connection stays open until its host closes it (no keep-alive timeout here).
 *
 * Each session keeps its last EVENTS_KEPT stream events, so a host whose SSE stream broke
 * reconnects with `Last-Event-ID` and gets what it missed (the SDK's resumability; every
 * stream opens with a priming event and a `retry` of RETRY_MS).
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import {
  StreamableHTTPServerTransport,
  type EventId,
  type EventStore,
  type StreamId,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

import type { Bridge } from "../legacy/bridge-server.js";
import { servesModern } from "../modern/era-switch.js";
import { urisOf } from "../core/session.js";

/** The MCP endpoint's path. */
export const MCP_PATH = "/mcp";
/** Largest request body read before a session exists, bytes: the SDK's own default bound. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * Stream events a session keeps for a host that reconnects: enough for the notifications and
 * answers of a few calls in flight; older ones are dropped first (a result can be large).
 */
export const EVENTS_KEPT = 100;
/**
 * Sessions kept at once. A host that goes away without DELETE leaves its session behind;
 * past this many, the least recently opened is closed (its host, if still there, gets 404
 * and initializes again, as the spec has it).
 */
export const MAX_SESSIONS = 64;
/** What a host is told to wait before reconnecting a broken SSE stream, ms. */
export const RETRY_MS = 1_000;

/** The last `max` events of one session, for replay after `Last-Event-ID`. */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage }>();
  #next = 0;

  constructor(private readonly max = EVENTS_KEPT) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = String(++this.#next);
    this.#events.set(id, { streamId, message });
    if (this.#events.size > this.max) {
      this.#events.delete(this.#events.keys().next().value as EventId);
    }
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const last = this.#events.get(lastEventId);
    if (last === undefined) return "";
    let after = false;
    for (const [id, event] of this.#events) {
      if (id === lastEventId) after = true;
      else if (after && event.streamId === last.streamId) await send(id, event.message);
    }
    return last.streamId;
  }
}

export interface HttpBridgeOptions {
  bridge: Bridge;
  /** TCP port on 127.0.0.1; 0 lets the system pick one (see `port` on the result). */
  port: number;
  /** The bearer token every request must carry; null: none (see the module comment). */
  token: string | null;
  log?: (line: string) => void;
}

export interface HttpBridge {
  readonly port: number;
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  /** Host sessions open now. */
  readonly sessions: number;
  /** Closes every session and the listener. Idempotent. */
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** The hostname of a Host header value (`name[:port]`, `[v6][:port]`), lower-cased. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether Host (and Origin, if any) say the request came from this machine's own pages. */
export function loopbackRequest(headers: IncomingMessage["headers"]): boolean {
  const host = headers.host;
  if (typeof host !== "string" || !LOOPBACK_HOSTS.has(hostnameOf(host) ?? "")) return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (
      (url.protocol === "http:" || url.protocol === "https:") &&
      LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
    );
  } catch {
    return false; // "null", or not a URL: a sandboxed or foreign page
  }
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Constant-time check of `Authorization: Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match !== null && timingSafeEqual(digest(match[1] as string), digest(token));
}

function refuse(res: ServerResponse, status: number, message: string, headers = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

class BodyTooLarge extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
}

export async function listenHttp(options: HttpBridgeOptions): Promise<HttpBridge> {
  const { bridge, token } = options;
  const log = options.log ?? (() => undefined);
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const openSession = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> => {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        if (transports.size > MAX_SESSIONS) {
          const [oldest, old] = transports.entries().next().value as [
            string,
            StreamableHTTPServerTransport,
          ];
          transports.delete(oldest);
          old.close().catch(() => undefined);
        }
      },
      onsessionclosed: (id) => {
        transports.delete(id);
      },
      eventStore: new BoundedEventStore(),
      retryInterval: RETRY_MS,
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
    };
    const server = bridge.createServer();
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  let modernFace: Promise<ModernHttp> | undefined;
  const modern = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    modernFace ??= modernHttp(bridge);
    return (await modernFace).handle(req, res, body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!loopbackRequest(req.headers)) {
      return refuse(res, 403, "Forbidden: Host and Origin must name this machine (localhost)");
    }
    if (token !== null && !bearerMatches(req.headers.authorization, token)) {
      return refuse(res, 401, "Unauthorized: send Authorization: Bearer <the bridge's token>", {
        "www-authenticate": 'Bearer realm="mcpool"',
      });
    }
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== MCP_PATH) return refuse(res, 404, `Not Found: the MCP endpoint is ${MCP_PATH}`);
    const header = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const transport = transports.get(sessionId);
      if (transport === undefined) return refuse(res, 404, "Session not found");
      return transport.handleRequest(req, res);
    }
    if (req.method !== "POST") {
      return refuse(res, 400, "Bad Request: no valid session id (initialize first)");
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (error) {
      if (error instanceof BodyTooLarge) return refuse(res, 413, "Payload Too Large");
      return refuse(res, 400, "Parse error: the body is not JSON");
    }
    if (isInitializeRequest(body)) return openSession(req, res, body);
    // A 2026-07-28 host has no session: each request stands alone (modernHttp, below).
    // Unless its servers speak only the legacy era: refused as such a server refuses it
    // direct (no session), so the host falls back to initialize.
    if (servesModern(body as JSONRPCMessage, bridge.legacyOnly)) return modern(req, res, body);
    return refuse(res, 400, "Bad Request: no valid session id (initialize first)");
  };

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`mcpool bridge: HTTP ${req.method} failed: ${(error as Error).message}`);
      refuse(res, 500, "Internal error");
    });
  });
  // A host's idle connection is the host's to close. Node closes one after 5 s of its own
  // clock; a host counts its idle time from when it read the answer (later, under load), so
  // it can write its next request into the connection as it closes: a reset, a lost call. On
  // loopback a host that exits closes its connections with it, so none is left behind.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Loopback only: never 0.0.0.0, whatever the caller asks.
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    get sessions() {
      return transports.size;
    },
    close() {
      closing ??= (async () => {
        const open = [...transports.values()];
        transports.clear();
        await (await modernFace?.catch(() => undefined))?.close();
        await Promise.allSettled(open.map((transport) => transport.close()));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

/**
 * Modern (2026-07-28) requests to the HTTP bridge (http.ts routes them here once its Host,
 * Origin, token and path checks passed): each POST is one request with no session, answered
 * by the SDK v2 handler of the bridge's modern side (modern/bridge.ts) — as JSON, or as an SSE
 * stream when notifications come before the answer or the request is a
 * `subscriptions/listen`. Node's request and response are bridged to the fetch API here.
 */
export interface ModernHttp {
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/** The modern face of one HTTP bridge: every modern request in one conversation. */
export async function modernHttp(bridge: Bridge): Promise<ModernHttp> {
  const side = await bridge.modern();
  const handler = side.httpHandler();
  // The URIs the face's listen streams name; its bus puts each update on the streams that
  // named the URI, so one subscriber serves them all.
  const listens = side.listens({
    subscriptions: new Map(),
    server: { sendResourceUpdated: async ({ uri }) => handler.notify.resourceUpdated(uri) },
  });
  let streams = 0;
  return {
    async handle(req, res, body) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      }
      // A host that goes away ends its request (and a listen stream) upstream too.
      const gone = new AbortController();
      res.once("close", () => gone.abort());
      const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
        method: "POST",
        headers,
        signal: gone.signal,
      });
      const response = await handler.fetch(request, { parsedBody: body });
      const uris = listenedUris(body);
      if (listens !== undefined && uris !== undefined && isStream(response)) {
        // Its stream is open: the URIs it names are held until the host goes away, and its
        // acknowledgement goes once they are (as a server direct acknowledges them).
        const stream = String((streams += 1));
        const held = listens.open(stream, uris);
        res.once("close", () => listens.end(stream));
        await held;
      }
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) {
        res.end();
        return;
      }
      const stream = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
      stream.on("error", () => res.destroy());
      stream.pipe(res);
    },
    close: async () => {
      await handler.close();
      await listens?.close();
    },
  };
}

/** The resource URIs a `subscriptions/listen` request names, if it is one. */
function listenedUris(body: unknown): string[] | undefined {
  const request = body as {
    method?: unknown;
    params?: { notifications?: { resourceSubscriptions?: unknown } };
  };
  if (request.method !== "subscriptions/listen") return undefined;
  return urisOf(request.params?.notifications?.resourceSubscriptions);
}

/** Whether the answer is a stream (a listen's), not a refusal. */
function isStream(response: Response): boolean {
  return (
    response.ok && response.headers.get("content-type")?.startsWith("text/event-stream") === true
  );
}
