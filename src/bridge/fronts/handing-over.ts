/**
 * The MCP sockets' part in a hand-over to a new daemon (src/daemon/handover/README.md). Held,
 * they accept nothing (a connection that arrives is closed at once), run no pass and end every
 * session; their listening sockets' fds go to the new daemon, and once it has them this process
 * closes its listeners, never their paths (handed-listeners.ts), so what arrives waits in the
 * sockets' backlog. A hand-over that failed resumes them: the next pass binds again what was
 * let go.
 */
import type { Server, Socket } from "node:net";
import { listeningFds } from "./handed-listeners.js";

/** Closes and forgets every listener: their paths are gone; the sessions they accepted carry on. */
export function dropListeners(listeners: Map<string, Server>, paths: Map<string, string>): void {
  for (const listener of listeners.values()) listener.close();
  listeners.clear();
  paths.clear();
}

/** What a hand-over holds of the MCP sockets. */
export interface HeldSockets {
  /** The listeners by scope, and the paths they listen at. */
  listeners: Map<string, Server>;
  paths: Map<string, string>;
  /** The sessions' connections open now. */
  sockets: Set<Socket>;
  /**
   * Closes the daemon client the sessions share (and forgets it: the next connection loads
   * another), so what a session sends as it ends goes to no daemon.
   */
  unload(): Promise<void>;
  /** Resolves once the pass under way, if any, is over. */
  settled(): Promise<void>;
  /** Runs a pass (binding again every listener let go). */
  sync(): Promise<void>;
}

export class HandingOver {
  #holding = false;
  readonly #held: HeldSockets;

  constructor(held: HeldSockets) {
    this.#held = held;
  }

  /** Handing over: a connection that arrives is closed at once, and no pass runs. */
  get holding(): boolean {
    return this.#holding;
  }

  /**
   * Ends every session, and says each listening socket's fd by scope once a pass under way is
   * over. Their shared client is closed first: a session's end (its tasks' release) sends
   * nothing, neither to this daemon nor, redialled into the sockets' backlog, to the new one,
   * so the tasks that move are decided by the hand-over's order alone.
   */
  async hold(): Promise<{ scope: string; fd: number }[]> {
    this.#holding = true;
    await this.#held.unload();
    for (const socket of this.#held.sockets) socket.destroy();
    await this.#held.settled();
    return listeningFds(this.#held.listeners);
  }

  /** The new daemon has the listening sockets: closes the listeners here (never their paths). */
  letGo(): void {
    dropListeners(this.#held.listeners, this.#held.paths);
  }

  /** The hand-over failed: accepts again; those let go are bound again by rename (the path never goes). */
  async resume(): Promise<void> {
    this.#holding = false;
    await this.#held.sync();
  }
}
