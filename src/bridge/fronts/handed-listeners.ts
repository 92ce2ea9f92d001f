/**
 * The MCP sockets' listeners, bound at their paths or listening on the fds a previous daemon
 * handed over (src/daemon/handover): a handed socket is listened on as it is, its path never
 * unlinked and bound again. Node has no public getter for a server's fd; `_handle.fd` is what
 * libuv holds, as the daemon's own listener reads it (src/daemon/socket/listener.ts).
 */
import { closeSync } from "node:fs";
import { chmod, readdir, unlink } from "node:fs/promises";
import type { Server } from "node:net";
import { join } from "node:path";

/** The fd each of `listeners` listens on, by scope (one that does not listen is left out). */
export function listeningFds(
  listeners: ReadonlyMap<string, Server>,
): { scope: string; fd: number }[] {
  return [...listeners].flatMap(([scope, server]) => {
    const fd = (server as { _handle?: { fd?: unknown } })._handle?.fd;
    return typeof fd === "number" && fd >= 0 ? [{ scope, fd }] : [];
  });
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
      if (name.endsWith(".sock") && !kept.has(path)) await unlink(path).catch(() => {});
    }
    return listeners;
  }

  /** Makes `listener` listen for `scope`: on its handed fd, else bound at `path` (0600). */
  async listen(listener: Server, scope: string, path: string): Promise<void> {
    const fd = this.#handed.get(scope);
    this.#handed.delete(scope);
    if (fd === undefined) await unlink(path).catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(fd === undefined ? path : { fd }, () => {
        listener.off("error", reject);
        resolve();
      });
    });
    if (fd === undefined) await chmod(path, 0o600);
    else this.#byFd.add(listener);
  }

  /** After `listener` of `scope` closed: a handed one's path is unlinked by hand. */
  async closed(listener: Server | undefined, scope: string): Promise<void> {
    const path = this.#pathOf(scope);
    if (listener && this.#byFd.has(listener) && path) await unlink(path).catch(() => {});
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
