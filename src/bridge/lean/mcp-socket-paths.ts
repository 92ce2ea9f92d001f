/**
 * Where the daemon's MCP sockets are: one Unix socket per scope in a private
 * directory beside the daemon's own socket, `<socket dir>/mcp/<server id>.sock` for one
 * pooled server and `<socket dir>/mcp/@pool.sock` for the whole pool. `@` is not a
 * character a socket is ever named after a server with, so the two cannot meet.
 *
 * Node's path module and mcpool-client/paths only: the lean `mcpool bridge` (src/cli/bin.ts)
 * computes these before it has loaded anything else.
 */
import { dirname, join } from "node:path";
// The client's paths alone (Node's fs, os and path), which the lean bridge loads first anyway:
// the one `sun_path` rule the daemon binds by.
import { socketPathLimit } from "mcpool-client/paths";

/** The directory of the MCP sockets, beside the daemon's socket. */
export const MCP_SOCKET_DIR = "mcp";

/** The file name of the whole pool's MCP socket. */
export const POOL_SOCKET_NAME = "@pool.sock";

/**
 * The whole pool's MCP sockets in catalog mode (`bridge --catalog`; `auto`: with
 * the most-called tools). `@` again: no server id can name them.
 */
export const CATALOG_SOCKET_NAMES = {
  on: "@catalog.sock",
  auto: "@catalog-auto.sock",
} as const;

/** Server ids a socket is named after: a file name anywhere, no dot first, no separator. */
const SOCKET_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function mcpSocketDir(daemonSocketPath: string): string {
  return join(dirname(daemonSocketPath), MCP_SOCKET_DIR);
}

/**
 * The MCP socket of one server (`serverId`) or of the pool (undefined); undefined when the
 * id cannot name a file or the path would not fit in `sun_path` (no socket is made for it).
 */
export function mcpSocketPath(
  daemonSocketPath: string,
  serverId: string | undefined,
  limit = socketPathLimit(),
): string | undefined {
  if (serverId !== undefined && !SOCKET_ID.test(serverId)) return undefined;
  const path = join(
    mcpSocketDir(daemonSocketPath),
    serverId === undefined ? POOL_SOCKET_NAME : `${serverId}.sock`,
  );
  return Buffer.byteLength(path) <= limit ? path : undefined;
}

/** The pool's MCP socket in catalog mode `mode`; undefined when it would not fit `sun_path`. */
export function mcpCatalogSocketPath(
  daemonSocketPath: string,
  mode: keyof typeof CATALOG_SOCKET_NAMES,
  limit = socketPathLimit(),
): string | undefined {
  const path = join(mcpSocketDir(daemonSocketPath), CATALOG_SOCKET_NAMES[mode]);
  return Buffer.byteLength(path) <= limit ? path : undefined;
}
