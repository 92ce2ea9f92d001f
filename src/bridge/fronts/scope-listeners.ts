/**
 * One pass of the MCP sockets: a listener for each scope wanted (the whole pool's, the
 * catalogue's, one per server), in the sockets' folder as it is now (socket-folder.ts). A
 * renewal (the folder removed, or `kill -USR1` on the daemon) makes the folder again and
 * replaces every listener, each retired only once its scope's new one is bound: a bind by
 * rename (handed-listeners.ts) takes the path over at once, so while the folder stays, a host
 * never finds a path that refuses it between the old listener and the new; and a retired
 * listener serves what its backlog holds before it closes (retireListener), so a host that
 * connected just before the path changed hands is not reset.
 */
import type { Server } from "node:net";
import { retireListener } from "mcpool-client/paths";
import { privateDir, type PassFolders } from "./socket-folder.js";

export interface ScopeListenersParts {
  /** The sockets' folder. */
  dir: string;
  /** The listening servers by scope; `listen` adds one, `forget` takes one away. */
  listeners: Map<string, Server>;
  paths: Map<string, string>;
  listen(scope: string): Promise<void>;
  /** Closes a scope's listener, unlinks its path and ends its bridge. */
  forget(scope: string): Promise<void>;
  /** The scopes to listen for now. */
  wanted(): Set<string>;
  /** Queues another pass. */
  again(): void;
  /** Says a scope could not be listened for. */
  failed(scope: string, error: Error): void;
}

export class ScopeListeners {
  /** The next pass makes the folder again and replaces every listener. */
  relisten = false;
  readonly #parts: ScopeListenersParts;

  constructor(parts: ScopeListenersParts) {
    this.#parts = parts;
  }

  /** One pass in `folders`, held for it. */
  async pass(folders: PassFolders): Promise<void> {
    const { dir, listeners, paths } = this.#parts;
    const raced = (): boolean => this.relisten || folders.overtaken();
    // The sockets' folder went (alone, or with a runtime folder not yet renewed): all anew.
    if (folders.missing) this.relisten = true;
    const wanted = this.#parts.wanted();
    /** The listeners this pass replaces, by scope: each closed once its new one is bound. */
    const replaced = new Map<string, Server>();
    if (this.relisten) {
      this.relisten = false;
      try {
        await privateDir(dir);
      } catch (error) {
        // Removed as it was made: the keeper's next renewal comes.
        if ((error as NodeJS.ErrnoException).code === "ENOENT" || raced()) return;
        throw error;
      }
      folders.made();
      // A scope no more wanted stays, to be forgotten (its path and its bridge with it).
      for (const [scope, listener] of listeners) {
        if (!wanted.has(scope)) continue;
        replaced.set(scope, listener);
        listeners.delete(scope);
        paths.delete(scope);
      }
    }
    try {
      await this.#bind(wanted, replaced, raced);
    } finally {
      // Those not listened for anew: the next pass binds them.
      for (const listener of replaced.values()) void retireListener(listener);
    }
  }

  /** Listens for each scope of `wanted` that has no listener, closing the one it replaces. */
  async #bind(
    wanted: ReadonlySet<string>,
    replaced: Map<string, Server>,
    raced: () => boolean,
  ): Promise<void> {
    const { listeners, listen, forget } = this.#parts;
    for (const scope of [...listeners.keys()]) if (!wanted.has(scope)) await forget(scope);
    for (const scope of wanted) {
      if (listeners.has(scope)) continue;
      const failed = await listen(scope).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      if (failed === undefined) {
        const old = replaced.get(scope);
        if (old !== undefined) void retireListener(old);
        replaced.delete(scope);
        continue;
      }
      listeners.get(scope)?.close();
      listeners.delete(scope);
      // Folder removed under the bind: the next pass makes it (or awaits the keeper's renewal).
      if (raced() || (failed as NodeJS.ErrnoException).code === "ENOENT") {
        this.relisten = true;
        return this.#parts.again();
      }
      this.#parts.failed(scope, failed);
    }
  }
}
