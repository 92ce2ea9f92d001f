/**
 * The MCP sockets' listeners, bound at their paths or listening on the fds a previous daemon
 * handed over (src/daemon/handover): a handed socket is listened on as it is, its path never
 * unlinked and bound again. A socket is bound under a temporary name and renamed into place,
 * as the daemon's own is (bindByRename, mcpool-client/paths): libuv unlinks the name a listener was
 * bound at when it closes, so closing one never unlinks the live path — the old daemon of a
 * hand-over closes its listeners while the new one listens on the same sockets. Node has no
 * public getter for a server's fd; `_handle.fd` is what libuv holds, as the daemon's own
 * listener reads it (src/daemon/socket/listener.ts).
 */
import { closeSync } from "node:fs";
import { lstat, readdir, unlink } from "node:fs/promises";
import type { Server } from "node:net";
import { join } from "node:path";
import {
  bindByRename,
  isTemporarySocketName,
  listenOn,
  socketPathLimit,
} from "mcpool-client/paths";

/** The fd each of `listeners` listens on, by scope (one that does not listen is left out). */
export function listeningFds(
  listeners: ReadonlyMap<string, Server>,
): { scope: string; fd: number }[] {
  return [...listeners].flatMap(([scope, server]) => {
    const fd = (server as { _handle?: { fd?: unknown } })._handle?.fd;
    return typeof fd === "number" && fd >= 0 ? [{ scope, fd }] : [];
  });
}

/** Whether `path` itself (not what a link points to) is a Unix socket. */
async function isSocket(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined);
  return stats?.isSocket() === true;
}

export class Listeners {
  /** The fds handed over and not yet listened on, by scope. */
  readonly #handed: Map<string, number>;
  /** Listening on a handed fd: closing it unlinks nothing, its path is unlinked by hand. */
  readonly #byFd = new WeakSet<Server>();
  readonly #pathOf: (scope: string) => string | undefined;

  private constructor(
    handed: ReadonlyMap<string, number> | undefined,
    pathOf: (scope: string) => string | undefined,
  ) {
    this.#handed = new Map(handed);
    this.#pathOf = pathOf;
  }

  /**
   * The listeners of the MCP sockets (each scope's at `pathOf(scope)`), once the previous
   * daemon's sockets in `dir` are unlinked (we hold the lock), but for those it handed over.
   * Only sockets are unlinked, named as an MCP socket or a bind's temporary name: a file or a
   * folder of the user's in `dir`, whatever its name, is left alone.
   */
  static async clearing(
    dir: string,
    handed: ReadonlyMap<string, number> | undefined,
    pathOf: (scope: string) => string | undefined,
  ): Promise<Listeners> {
    const listeners = new Listeners(handed, pathOf);
    const kept = new Set([...listeners.#handed.keys()].map((scope) => listeners.#pathOf(scope)));
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      // A socket, or one a daemon that died was binding (bindByRename's temporary name). The
      // folder may be the user's own: only an entry that is a socket is ever unlinked.
      const named = name.endsWith(".sock") || isTemporarySocketName(name);
      if (named && !kept.has(path) && (await isSocket(path))) await unlink(path).catch(() => {});
    }
    return listeners;
  }

  /**
   * Makes `listener` listen for `scope`: on its handed fd, else bound at `path` (0600, by
   * rename). A handed fd is this scope's until a listen on it succeeds: if it fails, the fd
   * stays handed, for closeUntaken() to close.
   */
  async listen(listener: Server, scope: string, path: string): Promise<void> {
    const fd = this.#handed.get(scope);
    if (fd === undefined) return void (await bindByRename(listener, path, socketPathLimit()));
    await listenOn(listener, { fd });
    this.#handed.delete(scope);
    this.#byFd.add(listener);
  }

  /** After `listener` of `scope` closed: its path is unlinked by hand (closing unlinks none). */
  async closed(listener: Server | undefined, scope: string): Promise<void> {
    const path = this.#pathOf(scope);
    if (listener && path) await unlink(path).catch(() => {});
  }

  /** Closes each handed fd no scope took (its server is gone), and unlinks its path. */
  async closeUntaken(): Promise<void> {
    for (const [scope, fd] of this.#handed) {
      try {
        closeSync(fd);
      } catch {
        // Closed already.
      }
      const path = this.#pathOf(scope);
      if (path !== undefined) await unlink(path).catch(() => undefined);
    }
    this.#handed.clear();
  }
}
