/**
 * The socket server's listening end: the listener at the socket path (or an inherited one),
 * its binding again over a removed or taken-over path, and its stop, which waits for every
 * connection any of its listeners accepted. The server decides when; this knows how.
 */
import { createServer, type Server, type Socket } from "node:net";
import { listenOn, retireListener } from "mcpool-client/paths";

import type { PoolLog } from "../../pool/core/types.js";
import { bindSocket, releaseSocket, type BoundSocket } from "./bind.js";

export interface SocketListenerOptions {
  /** Where to bind, unless `listenFd` is given. */
  socketPath?: string;
  /** An inherited listening socket (systemd socket activation); nothing is bound or unlinked. */
  listenFd?: number;
  /**
   * Where an inherited socket may be bound again, after letGo() or when its path was removed
   * (it came by hand-over, the path is this daemon's); absent for the service manager's
   * socket, never let go nor bound again.
   */
  ownPath?: string;
  log: PoolLog;
  /** Whether the server accepts now: a connection arriving otherwise is dropped. */
  accepting(): boolean;
  /** Takes a connection accepted while the server accepts. */
  accept(socket: Socket): void;
}

export class SocketListener {
  readonly #options: SocketListenerOptions;
  #server: Server | undefined;
  /** The inode we bound, so a release unlinks the path only while it is still ours. */
  #bound: BoundSocket | undefined;
  /** Listeners replaced by a rebind: no longer accepting, closed once their connections end. */
  readonly #retired = new Set<Promise<void>>();
  /** Rebinds run one at a time. */
  #rebinding: Promise<unknown> = Promise.resolve();
  #stopped: Promise<void> | undefined;
  /** The last accept() error logged, so a burst of EMFILE is one line, not one per connection. */
  #acceptError: string | undefined;
  /** The listener letGo() closed, until listenAgain() replaces it. */
  #letGo: Server | undefined;

  constructor(options: SocketListenerOptions) {
    this.#options = options;
  }

  /** The inode bound at the socket path, while listening on a path of our own. */
  get bound(): BoundSocket | undefined {
    return this.#bound;
  }

  /** The listening socket's file descriptor, to hand to a new daemon. */
  get fd(): number | undefined {
    const fd = (this.#server as { _handle?: { fd?: unknown } } | undefined)?._handle?.fd;
    return typeof fd === "number" && fd >= 0 ? fd : undefined;
  }

  /** Forgets the bound path without unlinking it: after a hand-over it is the new daemon's. */
  disown(): void {
    this.#bound = undefined;
  }

  /**
   * A hand-over started the new daemon with this socket: stop listening, so connections wait
   * in the backlog for it. Closing unlinks nothing: the path was bound under a temporary name
   * and renamed, or came as a fd. False (still listening) for the service manager's socket,
   * which could not be listened on again if the hand-over failed.
   */
  letGo(): boolean {
    const server = this.#server;
    if (server === undefined || !server.listening || this.#relistenPath() === undefined) {
      return false;
    }
    this.#letGo = server;
    server.close();
    return true;
  }

  /** After letGo(), the hand-over failed: the path bound again (by rename), listened on. */
  async listenAgain(): Promise<void> {
    const path = this.#relistenPath();
    if (this.#letGo === undefined || path === undefined) return;
    const fresh = createServer((socket) => this.#accept(socket));
    try {
      this.#bound = await bindSocket(fresh, path);
    } catch (error) {
      fresh.close();
      throw error;
    }
    fresh.on("error", (error) => this.#options.log.error?.(`socket server: ${error.message}`));
    this.#letGo = undefined;
    this.#server = fresh;
  }

  #relistenPath(): string | undefined {
    const { listenFd, socketPath, ownPath } = this.#options;
    return listenFd === undefined ? socketPath : ownPath;
  }

  #accept(socket: Socket): void {
    if (!this.#options.accepting()) {
      socket.destroy();
      return;
    }
    this.#acceptError = undefined;
    this.#options.accept(socket);
  }

  /** Binds the path (or adopts `listenFd`); on failure nothing is left listening. */
  async listen(): Promise<void> {
    const { listenFd, socketPath, log } = this.#options;
    const server = createServer((socket) => this.#accept(socket));
    this.#server = server;
    try {
      if (listenFd !== undefined) await listenOn(server, { fd: listenFd });
      else this.#bound = await bindSocket(server, socketPath as string);
    } catch (error) {
      server.close();
      throw error;
    }
    // accept() failing (EMFILE, ENFILE) fails that connection, never the server; one line
    // per burst of the same error.
    server.on("error", (error: NodeJS.ErrnoException) => {
      const key = error.code ?? error.message;
      if (key === this.#acceptError) return;
      this.#acceptError = key;
      log.error?.(`socket server: ${error.message}`);
    });
  }

  /** Binds the path again, one rebind at a time; false when there is nothing to rebind. */
  rebind(): Promise<boolean> {
    const run = this.#rebinding.then(() => this.#bindAgain());
    this.#rebinding = run.catch(() => undefined);
    return run;
  }

  async #bindAgain(): Promise<boolean> {
    const { log, accepting } = this.#options;
    const path = this.#relistenPath();
    if (!accepting() || path === undefined || this.#server === undefined) return false;
    const fresh = createServer((socket) => this.#accept(socket));
    const mine = await bindSocket(fresh, path);
    if (!accepting()) {
      // Closing began while we bound: this listener was never the server's.
      fresh.close();
      await releaseSocket(mine, log);
      return false;
    }
    fresh.on("error", (error) => log.error?.(`socket server: ${error.message}`));
    const old = this.#server;
    this.#server = fresh;
    this.#bound = mine;
    // The old listener's path is gone or taken over: it serves what its backlog holds (a
    // client that connected just before the path changed hands), then closes. Its clients
    // stay connected; stop() waits for them through `retired`.
    const oldClosed = retireListener(old);
    this.#retired.add(oldClosed);
    void oldClosed.then(() => this.#retired.delete(oldClosed));
    return true;
  }

  /** Stops accepting; resolves once every connection it accepted has closed too. */
  stop(): Promise<void> {
    const server = this.#server;
    this.#stopped ??= Promise.all([
      new Promise<void>((resolve) => {
        // Never listening (not started, or start failed): it accepted nothing.
        if (server === undefined || !server.listening) return resolve();
        server.close(() => resolve());
      }),
      ...this.#retired,
    ]).then(() => undefined);
    return this.#stopped;
  }

  /** Unlinks the socket path if it still is the inode we bound. */
  async release(): Promise<void> {
    const mine = this.#bound;
    this.#bound = undefined;
    if (mine !== undefined) await releaseSocket(mine, this.#options.log);
  }
}
