/**
 * In-memory rows for tests: no process starts. `memoryTransport(servers)` is a
 * createTransport that links the SDK's in-memory pair to a server built for that connect,
 * found by the host of the row's `memory://` url. A builder rather than a server, because
 * an SDK server connects once and a reconnect needs another.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { HttpServerConfig } from "../config/rows.js";
import type { CreateTransport } from "../pool/transport/transport.js";

export type ServerBuilder = () => Server | McpServer;

export function memoryTransport(servers: Readonly<Record<string, ServerBuilder>>): CreateTransport {
  return async (row) => {
    if (row.transport !== "http" || !row.url.startsWith("memory://")) {
      throw new Error(`memoryTransport serves memory:// rows only, not "${row.id}"`);
    }
    const host = new URL(row.url).host;
    const build = servers[host];
    if (!build) throw new Error(`memoryTransport has no server "${host}"`);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await build().connect(serverSide);
    return clientSide;
  };
}

/** A row served by memoryTransport: `memory://<host>`, host defaulting to the id. */
export function memoryRow(
  id: string,
  host: string = id,
  extra: Partial<HttpServerConfig> = {},
): HttpServerConfig {
  return { id, transport: "http", url: `memory://${host}`, ...extra };
}
