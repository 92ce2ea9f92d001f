/**
 * The daemon's socket: its lifecycle, from bind to drain. Each connection is a
 * SocketPeer framed by mcpool-protocol's codec; its frames are read and dispatched by
 * socket/dispatch.ts (hello first, then one handler per method of METHODS) once
 * socket/admission.ts has let it past the connection cap; socket/listener.ts listens, and
 * binds and releases the path through socket/bind.ts, which never unlinks another daemon's
 * socket. A bad frame fails that frame, or that connection; never the daemon.
 */
import { DEFAULT_MAX_FRAME_BYTES } from "mcpool-protocol";

import type { PoolLog } from "../../pool/core/types.js";
import type { HandlerTable } from "./request-context.js";
import type { BoundSocket } from "./bind.js";
import type { ConnectionCap } from "./connection-cap.js";
import { Admission } from "./admission.js";
import { SocketListener } from "./listener.js";

export type { ConnectionInfo, Handler, HandlerTable, RequestContext } from "./request-context.js";

/** Outbound bytes a connection may leave unread before it is dropped: 64 MiB. */
export const DEFAULT_MAX_OUTBOUND_BYTES = 64 * 1024 * 1024;
/** Bound on a new connection's hello, ms. */
export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
/**
 * Bound on close() letting calls in flight finish, ms, before it destroys what is left: the
 * daemon's shutdown grace. The service units allow 15 s to stop (TimeoutStopSec,
 * ExitTimeOut); this plus the children's stop ladder (2 s + 2 s) stays under it.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

export interface SocketServerOptions {
  /** Where to bind. Required unless `listenFd` is given. */
  socketPath?: string;
  /** An inherited listening socket (systemd socket activation); nothing is bound or unlinked. */
  listenFd?: number;
  /** With `listenFd`: the path is this daemon's (it came by hand-over), see listener.ts. */
  ownPath?: string;
  handlers: HandlerTable;
  /** Largest frame accepted or sent, bytes. Default 16 MiB. */
  maxFrameBytes?: number;
  /** Unread outbound bytes after which a connection is dropped. Default 64 MiB. */
  maxOutboundBytes?: number;
  /** Bound on a new connection's hello, ms. Default 10000. */
  helloTimeoutMs?: number;
  /** Bound on close() draining calls in flight, ms. Default 10000. */
  drainTimeoutMs?: number;
  /** The daemon's connection cap (connection-cap.ts). Default: none. */
  cap?: ConnectionCap;
  log: PoolLog;
}

export interface SocketServer {
  /** Binds (or adopts `listenFd`) and accepts connections. */
  start(): Promise<void>;
  /**
   * Stops accepting, unlinks the socket, refuses new requests with `closed`, lets calls in
   * flight answer (within `drainTimeoutMs`), then ends every connection. Idempotent.
   */
  close(): Promise<void>;
  /** Stops accepting and drops every connection now, aborting their calls. Idempotent. */
  destroy(): Promise<void>;
  /**
   * Binds the socket path again (it was removed, or SIGUSR1 asked), renaming a new
   * listener over whatever is there; the old listener stops accepting, and the connections
   * it accepted carry on. False when there is nothing to rebind: not listening, or an
   * inherited socket (its path is the service manager's).
   */
  rebind(): Promise<boolean>;
  /**
   * A hand-over to a new daemon (src/daemon/handover): new connections are closed at once
   * (their clients dial again, and find the new daemon), and every connection but
   * `keepId`'s is dropped now. Undone by unhold(); abandon() ends it for good.
   */
  hold(keepId: number): void;
  /**
   * Holding, and the new daemon started with the listening socket: stops listening (the path
   * stays), so what arrives waits in the backlog for the new daemon. The service manager's
   * socket is kept listening (it could not be listened on again): what it accepts is closed.
   */
  letGo(): void;
  /**
   * The hand-over failed: accepts again, on the path bound afresh if it was let go; a bind
   * that fails is tried again RELISTEN_TRIES times in all, then its error is thrown: nothing
   * listens, and the daemon must stop (it would serve no one).
   */
  unhold(): Promise<void>;
  /** After a hand-over: stops listening and drops every connection, leaving the path alone. */
  abandon(): Promise<void>;
  /** The listening socket's file descriptor, to hand to a new daemon. */
  readonly listeningFd: number | undefined;
  /** The inode bound at the socket path, while listening on a path of our own. */
  readonly bound: BoundSocket | undefined;
  /** Connections open now. */
  readonly clients: number;
}

export function createSocketServer(options: SocketServerOptions): SocketServer {
  const { log } = options;
  const limits = {
    maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    maxOutboundBytes: options.maxOutboundBytes ?? DEFAULT_MAX_OUTBOUND_BYTES,
  };
  const helloTimeoutMs = options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  if (options.socketPath === undefined && options.listenFd === undefined) {
    throw new TypeError("createSocketServer needs a socketPath or a listenFd");
  }
  let state: "idle" | "starting" | "listening" | "holding" | "draining" | "closed" = "idle";
  let closing: Promise<void> | undefined;
  let destroying: Promise<void> | undefined;
  // A connection is taken from the moment the path can be reached, which is before start()
  // is over: the path is renamed into place, then start() goes on in later callbacks, and a
  // client that connected in between is this daemon's as much as any later one.
  const accepting = (): boolean => state === "starting" || state === "listening";
  const admission = new Admission({
    handlers: options.handlers,
    log,
    cap: options.cap,
    limits,
    helloTimeoutMs,
    accepting,
    draining: () => state === "draining",
  });
  const { peers } = admission;
  const listener = new SocketListener({
    ...(options.socketPath !== undefined ? { socketPath: options.socketPath } : {}),
    ...(options.listenFd !== undefined ? { listenFd: options.listenFd } : {}),
    ...(options.ownPath !== undefined ? { ownPath: options.ownPath } : {}),
    log,
    accepting,
    accept: (socket) => admission.accept(socket),
  });

  return {
    get clients() {
      return peers.size;
    },

    get bound() {
      return listener.bound;
    },

    get listeningFd() {
      return listener.fd;
    },

    hold(keepId) {
      if (state !== "listening") return;
      state = "holding";
      for (const peer of peers) if (peer.info.id !== keepId) peer.socket.destroy();
    },

    letGo() {
      if (state === "holding") listener.letGo();
    },

    async unhold() {
      if (state !== "holding") return;
      try {
        await listenAgainBounded(listener);
      } finally {
        state = "listening";
      }
    },

    abandon() {
      // The path is the new daemon's now: never unlinked from here.
      listener.disown();
      return this.destroy();
    },

    rebind() {
      return listener.rebind();
    },

    async start() {
      if (state !== "idle") throw new Error(`the socket server cannot start: it is ${state}`);
      state = "starting";
      try {
        await listener.listen();
      } catch (error) {
        state = "closed";
        throw error;
      }
      state = "listening";
    },

    close() {
      if (closing !== undefined) return closing;
      if (state === "closed") return (closing = Promise.resolve());
      state = "draining";
      closing = (async () => {
        const stopped = listener.stop();
        await listener.release();
        for (const peer of peers) if (peer.inflight === 0) peer.end();
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([
          stopped.then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), drainTimeoutMs);
          }),
        ]);
        clearTimeout(timer);
        if (!drained) {
          log.error?.(
            `calls still in flight after ${drainTimeoutMs} ms: dropping their connections`,
          );
          for (const peer of peers) peer.socket.destroy();
          await stopped;
        }
        state = "closed";
      })();
      return closing;
    },

    destroy() {
      destroying ??= (async () => {
        if (state === "idle") state = "closed";
        const stopped = listener.stop();
        for (const peer of peers) peer.socket.destroy();
        await listener.release();
        await stopped;
        state = "closed";
      })();
      return destroying;
    },
  };
}

/** Binds the socket again after a failed hand-over, this many times at most. */
export const RELISTEN_TRIES = 5;
/** The pause before the second try, ms; it doubles before each next one. */
const RELISTEN_FIRST_PAUSE_MS = 100;

/** `listener.listenAgain()`, tried again on failure (a folder briefly in the way), bounded. */
async function listenAgainBounded(listener: SocketListener): Promise<void> {
  for (let tried = 1; ; tried++) {
    try {
      return await listener.listenAgain();
    } catch (error) {
      if (tried >= RELISTEN_TRIES) throw error;
    }
    const pause = RELISTEN_FIRST_PAUSE_MS * 2 ** (tried - 1);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
