/**
 * One stdio-shaped connection (the bridge's stdio, an MCP-socket session), served in the era
 * its host opens with: an `initialize` (or any message that claims no modern
 * revision) is a legacy host, served by the SDK v1 `Server` as before; a `server/discover`,
 * or a request whose `_meta` names a protocol version, is a modern host, served by the SDK
 * v2 entry (`serveStdio`, legacy refused, since the legacy host never reaches it). The
 * connection's transport is started here and stays the caller's; each era's server gets a
 * proxy of it that replays the opening message.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { endConversation } from "../core/conversation.js";
import type { BridgeCore } from "./bridge-core.js";
import type { ModernBridge } from "./bridge.js";
import type { HostName, StdioLike } from "../core/session.js";

export type { StdioLike };

/** The `_meta` key of a modern request's protocol version (2026-07-28 basic/index). */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

/** A served connection: closing it closes its server and the transport. */
export interface ServedConnection {
  readonly era: "legacy" | "modern" | undefined;
  close(): Promise<void>;
}

export interface EraServers {
  /** Connects a v1 server to `transport` (its `connect()` starts it). */
  legacy(transport: StdioLike): Promise<{ close(): Promise<void> }>;
  /** Serves `transport` in the modern era (SDK v2 serveStdio). */
  modern(transport: StdioLike): Promise<{ close(): Promise<void> }>;
  /**
   * Whether the servers behind the connection speak only the legacy era, asked at each
   * connection's opening (servesModern): a modern opening then goes to the legacy side.
   */
  legacyOnly?: () => boolean;
}

/** Whether a connection's opening message is a modern host's. */
export function opensModern(message: JSONRPCMessage): boolean {
  if (!("method" in message)) return false;
  // Even an `initialize` that names a modern revision in its `_meta` is a modern host's
  // (asking a method its revision removed: the v2 entry answers -32601).
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (typeof meta?.[PROTOCOL_VERSION_KEY] === "string") return true;
  return message.method === "server/discover";
}

/**
 * Whether a connection's opening message is served in the modern era — the one rule of
 * every front (stdio and the MCP sockets here, HTTP in fronts/http.ts): a modern host's
 * opening is, unless the servers behind the connection speak only the legacy era. Then the
 * legacy side answers it as such a server answers it direct (a `server/discover` is "Method
 * not found"; over HTTP a request outside a session is refused), and a dual-era host falls
 * back to `initialize`, as it does direct.
 */
export function servesModern(message: JSONRPCMessage, legacyOnly: boolean): boolean {
  return opensModern(message) && !legacyOnly;
}

/**
 * Starts `transport` and serves it in the era its first message opens; messages before the
 * chosen server has started are held and delivered in order. A host that opened with
 * `server/discover` alone and then sends `initialize` fell back to the legacy era (a
 * dual-era client whose probe timed out, or that did not like the answer: the stdio
 * binding's fallback): the modern server is closed and the connection served as legacy
 * from that `initialize` on, as SDK v2's own dual-era entry discards its probe instance.
 */
export async function serveEitherEra(
  transport: StdioLike,
  servers: EraServers,
): Promise<ServedConnection> {
  let current: Served | undefined;
  let era: ServedConnection["era"];
  let closed = false;
  /** Only `server/discover` came so far: a fallback to `initialize` is still the host's to make. */
  let probing = false;

  const serve = (chosen: "legacy" | "modern"): Served => {
    era = chosen;
    const served = new Served(transport);
    (chosen === "modern" ? servers.modern : servers.legacy)(served.proxy).then(
      (server) => {
        served.server = server;
        if (closed || current !== served) void server.close().catch(() => undefined);
      },
      (error: unknown) => {
        transport.onerror?.(error as Error);
        void transport.close().catch(() => undefined);
      },
    );
    return served;
  };

  transport.onmessage = (message, extra) => {
    const method = "method" in message ? message.method : undefined;
    if (current === undefined) {
      const modern = servesModern(message, servers.legacyOnly?.() === true);
      current = serve(modern ? "modern" : "legacy");
      probing = modern && method === "server/discover";
    } else if (probing && method === "initialize" && !opensModern(message)) {
      const probe = current;
      current = serve("legacy");
      probing = false;
      probe.retire();
    } else if (probing && method !== undefined && method !== "server/discover") {
      probing = false;
    }
    current.deliver(message, extra);
  };
  transport.onclose = () => {
    closed = true;
    current?.proxy.onclose?.();
  };
  transport.onerror = (error) => current?.proxy.onerror?.(error);
  await transport.start();

  return {
    get era() {
      return era;
    },
    async close() {
      closed = true;
      if (current?.server !== undefined) await current.server.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
    },
  };
}

/** A request's id, or undefined for a notification or an answer. */
function requestId(message: JSONRPCMessage): string | number | undefined {
  return "method" in message && "id" in message ? message.id : undefined;
}

/**
 * One era's server on the connection: its view of the transport, what it was sent before it
 * started, and the requests it still owes an answer — every one of them is answered, even
 * by a server given up for the other era (a lean entry waits for each answer it is owed).
 */
class Served {
  readonly proxy: StdioLike;
  server: { close(): Promise<void> } | undefined;
  readonly #transport: StdioLike;
  readonly #held: [JSONRPCMessage, unknown][] = [];
  /** Requests delivered to the server and not yet answered. */
  readonly #owed = new Set<string | number>();
  #started = false;
  /** Given up for the other era: it asks and tells nothing more, and its close is its own. */
  #retired = false;

  constructor(transport: StdioLike) {
    this.#transport = transport;
    this.proxy = {
      start: async () => {
        this.#started = true;
        queueMicrotask(() => this.#flush());
      },
      send: async (message, options) => {
        const answered = "method" in message ? undefined : (message as { id?: unknown }).id;
        if (typeof answered === "string" || typeof answered === "number") {
          if (this.#retired && !this.#owed.has(answered)) return;
          this.#owed.delete(answered);
        }
        // Retired, it still answers what it was asked (the host's server/discover is owed
        // its answer); it starts nothing more.
        if (!this.#retired || answered !== undefined) await transport.send(message, options);
      },
      close: async () => {
        if (!this.#retired) await transport.close();
      },
    };
  }

  /**
   * The host fell back to the other era: this server closes, and the connection stays.
   * What it was asked and has not answered — held before it started, or in flight at its
   * close — is answered as a legacy server answers a method it does not know.
   */
  retire(): void {
    this.#retired = true;
    for (const [message] of this.#held.splice(0)) {
      const id = requestId(message);
      if (id !== undefined) this.#owed.add(id);
    }
    const close = this.server?.close() ?? Promise.resolve();
    void close.catch(() => undefined).then(() => this.#refuseOwed());
  }

  #refuseOwed(): void {
    for (const id of this.#owed) {
      void this.#transport
        .send({
          jsonrpc: "2.0",
          id,
          error: {
            code: -32601,
            message:
              "Method not found: the host fell back to the legacy era (initialize) before this was answered",
          },
        })
        .catch(() => undefined);
    }
    this.#owed.clear();
  }

  deliver(message: JSONRPCMessage, extra: unknown): void {
    this.#held.push([message, extra]);
    this.#flush();
  }

  #flush(): void {
    while (this.#started && !this.#retired && this.#held.length > 0) {
      const [message, extra] = this.#held.shift()!;
      const id = requestId(message);
      if (id !== undefined) this.#owed.add(id);
      this.proxy.onmessage?.(message, extra as never);
    }
  }
}

/**
 * A bridge's two eras: `serve()` a connection in the era it opens with; the modern side
 * (SDK v2, modern/bridge.ts) loaded on the first modern host, so a legacy-only bridge never loads it.
 */
export function dualEra(
  core: BridgeCore,
  createServer: (host?: HostName) => {
    connect(transport: never): Promise<void>;
    close(): Promise<void>;
  },
): {
  serve(transport: StdioLike, host?: HostName): Promise<ServedConnection>;
  modern(): Promise<ModernBridge>;
  ready(): ModernBridge | undefined;
} {
  let ready: ModernBridge | undefined;
  let loading: Promise<ModernBridge> | undefined;
  const modern = (): Promise<ModernBridge> =>
    (loading ??= import("./bridge.js").then((m) => (ready = new m.ModernBridge(core))));
  const serve = (transport: StdioLike, host?: HostName): Promise<ServedConnection> =>
    serveEitherEra(transport, {
      legacyOnly: () => core.legacyOnly,
      legacy: async (proxy) => {
        const server = createServer(host);
        await server.connect(proxy as never);
        return server;
      },
      modern: async (proxy) => {
        const identity = core.newIdentity();
        const served = (await modern()).serveConnection(proxy as never, identity);
        return {
          close: async () => {
            endConversation(core.upstream, identity);
            await served.close();
          },
        };
      },
    });
  return { serve, modern, ready: () => ready };
}
