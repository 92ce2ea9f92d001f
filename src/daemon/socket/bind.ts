/**
 * Binding the daemon's socket path. The socket is bound under a temporary name,
 * made 0600, then renamed into place (mcpool-client/paths, as the MCP sockets are), so a client never finds a socket it may not use and
 * never finds none; and a stopping daemon unlinks only the inode it bound, never the socket
 * of the daemon that replaced it. Both names are held to paths.ts's `sun_path` limit, the
 * one the daemon checks its socket path against before it starts.
 */
import { lstat, unlink } from "node:fs/promises";
import type { Server } from "node:net";
import { bindByRename } from "mcpool-client/paths";

import type { PoolLog } from "../../pool/core/types.js";
import { MAX_SOCKET_PATH_BYTES, checkSocketPath } from "../process/paths.js";

/** The socket this process bound: the path, and the inode that was ours there. */
export interface BoundSocket {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Makes `server` listen at `path`, replacing whatever socket is there by rename(2), which
 * is atomic. Throws paths.ts's `socket-path-too-long` for a path `bind(2)` would refuse.
 */
export async function bindSocket(server: Server, path: string): Promise<BoundSocket> {
  checkSocketPath(path);
  const { dev, ino } = await bindByRename(server, path, MAX_SOCKET_PATH_BYTES);
  return { path, dev, ino };
}

/** Unlinks the socket path if it still is the inode we bound. */
export async function releaseSocket(mine: BoundSocket, log: PoolLog): Promise<void> {
  try {
    const now = await lstat(mine.path);
    if (now.dev === mine.dev && now.ino === mine.ino) await unlink(mine.path);
  } catch (error) {
    if (errnoCode(error) !== "ENOENT")
      log.error?.(`could not remove ${mine.path}: ${String(error)}`);
  }
}
