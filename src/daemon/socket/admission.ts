/**
 * Who may talk on the daemon's socket. Every socket the server accepts comes here: the
 * connection cap decides (over the cap, over its process's share, or on a reserved slot kept
 * by its hello alone), and an admitted socket becomes a SocketPeer whose frames the
 * dispatcher reads. A refused socket is told why in one error line, then ends.
 */
import type { Socket } from "node:net";
import { encodeFrame, toWireError, type WireError } from "mcpool-protocol";

import type { PoolLog } from "../../pool/core/types.js";
import type { HandlerTable } from "./request-context.js";
import {
  RESERVED_CLIENTS,
  RESERVED_HELLO_TIMEOUT_MS,
  type ConnectionCap,
  type Entry,
} from "./connection-cap.js";
import { createDispatcher, type Dispatcher } from "./dispatch.js";
import { SocketPeer } from "./peer.js";

// A refused connection's error line is a few hundred bytes: written at once, or never; this
// bounds the wait for a peer that does not read it.
const REFUSAL_GRACE_MS = 1_000;

// Refused connections kept open for their grace at once. Each holds a file descriptor past
// the cap, and the cap is half the open-file limit: in a flood, refusals past these few are
// closed as soon as their line is written, so the refusals themselves cannot meet EMFILE.
const LINGERING_REFUSALS = 8;

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

/**
 * Over the cap: one error line (id null, before any hello), then the connection ends. What
 * the peer sends meanwhile (its hello) is read and dropped, so its write meets no EPIPE
 * before it has read why; the peer closing, or the grace running out, ends the socket.
 */
function refuse(socket: Socket, wire: WireError, lingering: { count: number }): void {
  socket.on("error", () => undefined);
  socket.removeAllListeners("data");
  socket.on("data", () => undefined);
  socket.resume();
  const line = encodeFrame({ jsonrpc: "2.0", id: null, error: wire });
  if (lingering.count >= LINGERING_REFUSALS) {
    // A Unix socket's peer still reads what was written before the close.
    socket.end(line, () => socket.destroy());
    return;
  }
  lingering.count++;
  socket.once("close", () => lingering.count--);
  socket.end(line);
  setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
}

export interface AdmissionOptions {
  handlers: HandlerTable;
  log: PoolLog;
  /** The daemon's connection cap; none admits every connection. */
  cap: ConnectionCap | undefined;
  /** Largest frame accepted or sent, and unread outbound bytes before a drop, bytes. */
  limits: { maxFrameBytes: number; maxOutboundBytes: number };
  /** Bound on a new connection's hello, ms. */
  helloTimeoutMs: number;
  /** Whether the server still accepts: a socket admitted once it stopped is dropped. */
  accepting(): boolean;
  /** Whether the server is draining: new requests are refused with `closed`. */
  draining(): boolean;
}

/** The connections of one socket server, from the cap's verdict to their close. */
export class Admission {
  /** Connections open now. */
  readonly peers = new Set<SocketPeer>();
  readonly #options: AdmissionOptions;
  readonly #dispatcher: Dispatcher;
  /** Refused connections still open for their grace (LINGERING_REFUSALS). */
  readonly #lingering = { count: 0 };
  #nextId = 0;

  constructor(options: AdmissionOptions) {
    this.#options = options;
    const { cap } = options;
    this.#dispatcher = createDispatcher({
      handlers: options.handlers,
      log: options.log,
      draining: () => options.draining(),
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
  }

  /** Takes a socket the server accepted: admits it, or refuses it. */
  accept(socket: Socket): void {
    const { cap } = this.#options;
    const entry = cap?.enter(true) ?? "open";
    if (entry === "refused") {
      // Told at once (a flood must not hold fds waiting): the refusal names the process
      // holding the most slots where that is known, and the lookup makes it known.
      refuse(socket, capRefusal(cap as ConnectionCap), this.#lingering);
      void cap?.learnOwners();
      return;
    }
    if (cap === undefined) return this.#admit(socket, entry, () => undefined);
    socket.on("error", () => undefined);
    // Nothing is read until what decides it is known: who holds the slots, or its share.
    socket.pause();
    // On a reserved slot (a few, kept by its hello alone, never by a share): a refused hello
    // names the process holding the most slots.
    const giveBack = releaseOnce(socket, cap);
    if (entry === "reserved") {
      void cap.learnOwners().then(() => {
        if (socket.destroyed) return;
        this.#admit(socket, entry, giveBack);
        socket.resume();
      });
      return;
    }
    void cap.share(socket).then((over) => {
      if (over !== undefined) return refuse(socket, shareRefusal(cap, over), this.#lingering);
      if (socket.destroyed) return;
      if (!this.#options.accepting()) return void socket.destroy();
      this.#admit(socket, entry, giveBack);
      socket.resume();
    });
  }

  #admit(socket: Socket, entry: Entry, giveBack: () => void): void {
    const { limits, log, helloTimeoutMs } = this.#options;
    const peer = new SocketPeer(++this.#nextId, socket, limits, log);
    peer.reserved = entry === "reserved";
    peer.release = giveBack;
    this.peers.add(peer);
    peer.awaitHello(
      peer.reserved ? Math.min(helloTimeoutMs, RESERVED_HELLO_TIMEOUT_MS) : helloTimeoutMs,
    );
    socket.on("data", (chunk: Buffer) => this.#dispatcher.onFrames(peer, peer.push(chunk)));
    // EPIPE, ECONNRESET: the peer went away; 'close' follows and cleans up.
    socket.on("error", () => undefined);
    socket.once("close", () => {
      this.peers.delete(peer);
      peer.closed();
    });
  }
}
