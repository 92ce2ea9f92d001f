/**
 * The daemon's socket: its lifecycle, from bind to drain. Each connection is a
 * SocketPeer framed by mcpool-protocol's codec; its frames are read and dispatched by
 * socket/dispatch.ts (hello first, then one handler per method of METHODS); the path is
 * bound and released by socket/bind.ts, which never unlinks another daemon's socket. A bad
 * frame fails that frame, or that connection; never the daemon.
 */
import { createServer, type Server, type Socket } from "node:net";
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, toWireError, type WireError } from "mcpool-protocol";

import type { PoolLog } from "../../pool/core/types.js";
import type { HandlerTable } from "./request-context.js";
import { bindSocket, listen, releaseSocket, type BoundSocket } from "./bind.js";
import {
  RESERVED_CLIENTS,
  RESERVED_HELLO_TIMEOUT_MS,
  type ConnectionCap,
  type Entry,
} from "./connection-cap.js";
import { createDispatcher } from "./dispatch.js";
import { SocketPeer } from "./peer.js";

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

// A refused connection's error line is a few hundred bytes: written at once, or never; this
// bounds the wait for a peer that does not read it.
const REFUSAL_GRACE_MS = 1_000;

/** What a connection over the cap is told, as a pool error (`pool-full`, limit maxConnections). */
export function capRefusal(cap: ConnectionCap): WireError {
  const { max } = cap.state();
  return toWireError("pool-full", cap.message(), { limit: "maxConnections", max });
}

/** What a connection over its process's share is told (`pool-full`, limit maxConnectionsPerProcess). */
function shareRefusal(cap: ConnectionCap, message: string): WireError {
  return toWireError("pool-full", message, {
    limit: "maxConnectionsPerProcess",
    max: cap.perProcess,
  });
}

/** Gives back a connection's slot once: when it closes, or when its hello is refused. */
function releaseOnce(socket: Socket, cap: ConnectionCap): () => void {
  let counted = true;
  const giveBack = (): void => {
    if (counted) cap.leave();
    counted = false;
  };
  socket.once("close", giveBack);
  return giveBack;
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
  unhold(): void;
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
  const peers = new Set<SocketPeer>();
  let server: Server | undefined;
  /** Listeners replaced by a rebind: no longer accepting, closed once their connections end. */
  const retired = new Set<Promise<void>>();
  /** Rebinds run one at a time. */
  let rebinding: Promise<unknown> = Promise.resolve();
  let state: "idle" | "starting" | "listening" | "holding" | "draining" | "closed" = "idle";
  /** The inode we bound, so close() unlinks the path only while it is still ours. */
  let bound: BoundSocket | undefined;
  let nextId = 0;
  let closing: Promise<void> | undefined;
  let destroying: Promise<void> | undefined;
  let serverClosed: Promise<void> | undefined;
  const { cap } = options;
  const dispatcher = createDispatcher({
    handlers: options.handlers,
    log,
    draining: () => state === "draining",
    // A connection on a reserved slot stays only if its hello names a reserved client.
    admit: (peer, clientName) => {
      if (cap === undefined || !peer.reserved || RESERVED_CLIENTS.has(clientName)) return;
      cap.refuse();
      const refusal = capRefusal(cap);
      // The slot is free for the next `mcpool status` now, not once this socket has closed.
      peer.release();
      return refusal;
    },
  });
  /** The last accept() error logged, so a burst of EMFILE is one line, not one per connection. */
  let acceptError: string | undefined;

  /**
   * Over the cap: one error line (id null, before any hello), then the connection ends. What
   * the peer sends meanwhile (its hello) is read and dropped, so its write meets no EPIPE
   * before it has read why; the peer closing, or the grace running out, ends the socket.
   */
  function refuse(socket: Socket, wire: WireError): void {
    socket.on("error", () => undefined);
    socket.removeAllListeners("data");
    socket.on("data", () => undefined);
    socket.resume();
    socket.end(encodeFrame({ jsonrpc: "2.0", id: null, error: wire }));
    setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
  }

  function accept(socket: Socket): void {
    if (state !== "listening") {
      socket.destroy();
      return;
    }
    acceptError = undefined;
    const entry = cap?.enter(true) ?? "open";
    if (entry === "refused") {
      // Told at once (a flood must not hold fds waiting): the refusal names the process
      // holding the most slots where that is known, and the lookup makes it known.
      refuse(socket, capRefusal(cap as ConnectionCap));
      void cap?.learnOwners();
      return;
    }
    if (cap === undefined) return admit(socket, entry, () => undefined);
    socket.on("error", () => undefined);
    // Nothing is read until what decides it is known: who holds the slots, or its share.
    socket.pause();
    // On a reserved slot (a few, kept by its hello alone, never by a share): a refused hello
    // names the process holding the most slots.
    const giveBack = releaseOnce(socket, cap);
    if (entry === "reserved") {
      void cap.learnOwners().then(() => {
        if (socket.destroyed) return;
        admit(socket, entry, giveBack);
        socket.resume();
      });
      return;
    }
    void cap.share(socket).then((over) => {
      if (over !== undefined) return refuse(socket, shareRefusal(cap, over));
      if (socket.destroyed) return;
      if (state !== "listening") return void socket.destroy();
      admit(socket, entry, giveBack);
      socket.resume();
    });
  }

  function admit(socket: Socket, entry: Entry, giveBack: () => void): void {
    const peer = new SocketPeer(++nextId, socket, limits, log);
    peer.reserved = entry === "reserved";
    peer.release = giveBack;
    peers.add(peer);
    peer.awaitHello(
      peer.reserved ? Math.min(helloTimeoutMs, RESERVED_HELLO_TIMEOUT_MS) : helloTimeoutMs,
    );
    socket.on("data", (chunk: Buffer) => dispatcher.onFrames(peer, peer.push(chunk)));
    // EPIPE, ECONNRESET: the peer went away; 'close' follows and cleans up.
    socket.on("error", () => undefined);
    socket.once("close", () => {
      peers.delete(peer);
      peer.closed();
    });
  }

  /** Unlinks the socket path if it still is the inode we bound. */
  async function release(): Promise<void> {
    const mine = bound;
    bound = undefined;
    if (mine !== undefined) await releaseSocket(mine, log);
  }

  /** Stops accepting; resolves once every connection it accepted has closed too. */
  function stopListening(): Promise<void> {
    serverClosed ??= Promise.all([
      new Promise<void>((resolve) => {
        // Never listening (not started, or start failed): it accepted nothing.
        if (server === undefined || !server.listening) return resolve();
        server.close(() => resolve());
      }),
      ...retired,
    ]).then(() => undefined);
    return serverClosed;
  }

  async function bindAgain(): Promise<boolean> {
    if (state !== "listening" || options.listenFd !== undefined || server === undefined) {
      return false;
    }
    const fresh = createServer((socket) => accept(socket));
    const mine = await bindSocket(fresh, options.socketPath as string);
    if (state !== "listening") {
      // Closing began while we bound: this listener was never the server's.
      fresh.close();
      await releaseSocket(mine, log);
      return false;
    }
    fresh.on("error", (error) => log.error?.(`socket server: ${error.message}`));
    const old = server;
    server = fresh;
    bound = mine;
    // The old listener's path is gone or taken over: it accepts nothing more. Its clients
    // stay connected; close() waits for them through `retired`.
    const oldClosed = new Promise<void>((resolve) => old.close(() => resolve()));
    retired.add(oldClosed);
    void oldClosed.then(() => retired.delete(oldClosed));
    return true;
  }

  return {
    get clients() {
      return peers.size;
    },

    get bound() {
      return bound;
    },

    get listeningFd() {
      const fd = (server as { _handle?: { fd?: unknown } } | undefined)?._handle?.fd;
      return typeof fd === "number" && fd >= 0 ? fd : undefined;
    },

    hold(keepId) {
      if (state !== "listening") return;
      state = "holding";
      for (const peer of peers) if (peer.info.id !== keepId) peer.socket.destroy();
    },

    unhold() {
      if (state === "holding") state = "listening";
    },

    abandon() {
      // The path is the new daemon's now: never unlinked from here.
      bound = undefined;
      return this.destroy();
    },

    rebind() {
      const run = rebinding.then(() => bindAgain());
      rebinding = run.catch(() => undefined);
      return run;
    },

    async start() {
      if (state !== "idle") throw new Error(`the socket server cannot start: it is ${state}`);
      state = "starting";
      server = createServer((socket) => accept(socket));
      try {
        if (options.listenFd !== undefined) await listen(server, { fd: options.listenFd });
        else bound = await bindSocket(server, options.socketPath as string);
      } catch (error) {
        state = "closed";
        server.close();
        throw error;
      }
      // accept() failing (EMFILE, ENFILE) fails that connection, never the server; one line
      // per burst of the same error.
      server.on("error", (error: NodeJS.ErrnoException) => {
        const key = error.code ?? error.message;
        if (key === acceptError) return;
        acceptError = key;
        log.error?.(`socket server: ${error.message}`);
      });
      state = "listening";
    },

    close() {
      if (closing !== undefined) return closing;
      if (state === "closed") return (closing = Promise.resolve());
      state = "draining";
      closing = (async () => {
        const stopped = stopListening();
        await release();
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
        const stopped = stopListening();
        for (const peer of peers) peer.socket.destroy();
        await release();
        await stopped;
        state = "closed";
      })();
      return destroying;
    },
  };
}
