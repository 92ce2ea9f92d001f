/**
 * One connection of the daemon's socket: its phase (hello → ready → closing), the
 * frames it may be sent, and how it ends. Every write is bounded twice: a frame the peer's
 * decoder would refuse is never sent (it would lose every other answer on the connection),
 * and a peer that leaves more than `maxOutboundBytes` unread is dropped rather than let grow
 * the daemon's memory. Ending lets the peer read what was sent, then destroys the socket.
 */
import type { Socket } from "node:net";
import {
  JSONRPCErrorCode,
  createJSONRPCErrorResponse,
  createJSONRPCNotification,
  type JSONRPCID,
} from "mcpool-protocol";
import {
  FrameDecoder,
  McpPoolError,
  encodeFrame,
  frameText,
  toWireError,
  type Frame,
  type NotificationName,
  type NotificationParamsOf,
} from "mcpool-protocol";

import type { PoolLog } from "../../pool/core/types.js";
import { PeerRequests } from "./peer-requests.js";

// After an error answer that ends a connection, the peer gets this long to read it before
// the socket is destroyed outright (a peer that never reads must not keep the fd).
const CLOSE_GRACE_MS = 1_000;

/** What an answer over the frame cap is refused with: what ran, and what to do about it. */
function tooLargeMessage(method: string | undefined, bytes: number, cap: number): string {
  const size = `${bytes} bytes, over the daemon's ${cap}-byte frame cap`;
  if (method === "tools/call") {
    return `the tool ran, but its answer is ${size}, so it was not sent; cap the result with maxResultChars (on the call, the row, or the "mcpool" section of mcp.json)`;
  }
  return `the answer to ${method ?? "the request"} is ${size}, so it was not sent`;
}

export interface PeerLimits {
  /** Largest frame accepted or sent, bytes. */
  readonly maxFrameBytes: number;
  /** Unread outbound bytes after which the connection is dropped. */
  readonly maxOutboundBytes: number;
}

export type PeerPhase = "hello" | "ready" | "closing";

export class SocketPeer {
  readonly info: { id: number; clientName: string; pid: number; signal: AbortSignal };
  /** Requests in flight both ways, each with its own signal. */
  readonly requests: PeerRequests;
  /** Accepted on a slot past the connection cap: only a reserved client's hello keeps it. */
  reserved = false;
  /**
   * Gives back its slot of the connection cap: once, when it closes, or at once when its
   * hello on a reserved slot is refused (not when its socket is done closing).
   */
  release: () => void = () => undefined;
  #phase: PeerPhase = "hello";
  /** Requests whose handler has not settled; a draining server ends the peer at zero. */
  #inflight = 0;
  #helloTimer: NodeJS.Timeout | undefined;
  readonly #decoder: FrameDecoder;
  readonly #controller = new AbortController();
  readonly #log: PoolLog;

  constructor(
    id: number,
    readonly socket: Socket,
    readonly limits: PeerLimits,
    log: PoolLog,
  ) {
    this.#log = log;
    this.info = { id, clientName: "", pid: 0, signal: this.#controller.signal };
    this.#decoder = new FrameDecoder({ maxFrameBytes: limits.maxFrameBytes });
    this.requests = new PeerRequests((message) => this.send(message));
  }

  get phase(): PeerPhase {
    return this.#phase;
  }

  get inflight(): number {
    return this.#inflight;
  }

  /** The frames `chunk` completes; none once the peer is closing. */
  push(chunk: Buffer): Frame[] {
    return this.#phase === "closing" ? [] : this.#decoder.push(chunk);
  }

  /** Refuses the connection, and ends it, unless hello comes within `ms`. */
  awaitHello(ms: number): void {
    this.#helloTimer = setTimeout(() => {
      this.fail(null, JSONRPCErrorCode.InvalidRequest, `Invalid Request: no hello within ${ms} ms`);
      this.end();
    }, ms);
    this.#helloTimer.unref();
  }

  /** Hello was accepted: requests may follow, even before its answer. */
  ready(clientName: string, pid: number): void {
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    this.info.clientName = clientName;
    this.info.pid = pid;
    this.#phase = "ready";
  }

  /** A request's handler starts. */
  started(): void {
    this.#inflight++;
  }

  /** A request's handler settled and its answer is written; a drain ends the peer at zero. */
  settled(draining: boolean): void {
    this.#inflight--;
    if (draining && this.#inflight === 0) this.end();
  }

  /**
   * Writes one frame; false when the peer can no longer take one (and then it is dropped).
   * Text goes as text while nothing is queued (the socket encodes it into its write, as a
   * bare relay's does); behind a queue, as bytes, so `writableLength` counts the bytes the
   * outbound cap is about, not characters.
   */
  write(frame: Uint8Array | string): boolean {
    const { socket } = this;
    if (socket.destroyed || !socket.writable) return false;
    socket.write(
      typeof frame === "string" && socket.writableLength > 0 ? Buffer.from(frame) : frame,
    );
    if (socket.writableLength > this.limits.maxOutboundBytes) {
      this.#log.error?.(
        `dropping client ${this.info.id} (${this.info.clientName || "before hello"}): ` +
          `${socket.writableLength} bytes unread, over the ${this.limits.maxOutboundBytes}-byte cap`,
      );
      socket.destroy();
      return false;
    }
    return true;
  }

  /**
   * Answers request `id`; an answer that cannot be sent becomes an error that can. One over
   * the frame cap is `answer-too-large`: the work is done, and asking again answers the
   * same, so the error says so and, for a call, how to cap the result.
   */
  respond(message: object, id: JSONRPCID, method?: string): void {
    const { maxFrameBytes } = this.limits;
    let frame: string;
    try {
      frame = frameText(message);
    } catch {
      frame = frameText(
        createJSONRPCErrorResponse(id, JSONRPCErrorCode.InternalError, "the answer is not JSON"),
      );
    }
    // A character is at most 3 bytes of UTF-8: most answers are measured by their length alone.
    const bytes = (frame.length - 1) * 3 > maxFrameBytes ? Buffer.byteLength(frame) - 1 : 0;
    if (bytes > maxFrameBytes) {
      const wire = toWireError("answer-too-large", tooLargeMessage(method, bytes, maxFrameBytes), {
        bytes,
        maxFrameBytes,
        ...(method !== undefined ? { method } : {}),
      });
      frame = frameText({ jsonrpc: "2.0", id, error: wire });
    }
    this.write(frame);
  }

  fail(id: JSONRPCID, code: number, message: string, data?: unknown): void {
    this.respond(createJSONRPCErrorResponse(id, code, message, data), id);
  }

  /** Pushes a notification once past hello; false when it was not sent. */
  notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): boolean {
    if (this.#phase !== "ready") return false;
    const frame = this.#encode(createJSONRPCNotification(name, params));
    if (frame === undefined) return false;
    if (frame.length - 1 > this.limits.maxFrameBytes) {
      this.#log.error?.(
        `dropped a ${frame.length - 1}-byte "${name}" notification: over the frame cap`,
      );
      return false;
    }
    return this.write(frame);
  }

  /** A request of the daemon's or a `request/cancel`, once past hello; false if not sent. */
  send(message: object): boolean {
    if (this.#phase !== "ready") return false;
    const frame = this.#encode(message);
    if (frame === undefined || frame.length - 1 > this.limits.maxFrameBytes) return false;
    return this.write(frame);
  }

  /** Lets the peer read what was sent, then closes; ignores whatever it sends meanwhile. */
  end(): void {
    if (this.#phase === "closing") return;
    this.#phase = "closing";
    clearTimeout(this.#helloTimer);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  /** The socket closed: every handler's signal aborts and every request of ours fails. */
  closed(): void {
    clearTimeout(this.#helloTimer);
    this.#phase = "closing";
    this.#decoder.end();
    const gone = new McpPoolError("daemon-unavailable", "the client disconnected");
    this.#controller.abort(gone);
    this.requests.close(gone);
  }

  #encode(message: object): Uint8Array | undefined {
    try {
      return encodeFrame(message);
    } catch {
      return undefined;
    }
  }
}
