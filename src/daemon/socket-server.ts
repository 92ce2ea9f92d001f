/**
 * The daemon's socket (SPEC D2). Each connection is framed by mcpool-client's codec, must
 * say `hello` first, and has its requests dispatched through a table built from
 * mcpool-client's METHODS, so names cannot drift between the two sides. A bad frame fails
 * that frame, or that connection; never the daemon. The socket is bound under a temporary
 * name, made 0600, then renamed into place, so a stopping daemon never unlinks the socket of
 * the daemon that replaced it: it unlinks only the inode it bound.
 */
import { chmod, lstat, rename, stat, unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import {
  JSONRPCErrorCode,
  createJSONRPCErrorResponse,
  createJSONRPCNotification,
  createJSONRPCSuccessResponse,
  isJSONRPCID,
  type JSONRPCID,
} from "json-rpc-2.0";
import {
  CANCEL,
  DEFAULT_MAX_FRAME_BYTES,
  FrameDecoder,
  METHODS,
  PROTOCOL_VERSION,
  McpPoolError as ClientError,
  encodeFrame,
  isMethodName,
  toWireError,
  type DaemonParamsOf,
  type DaemonRequestName,
  type DaemonResultOf,
  type Frame,
  type MethodName,
  type NotificationName,
  type NotificationParamsOf,
  type ParamsCheck,
  type ParamsOf,
  type ResultOf,
  type WireError,
} from "mcpool-client";

import { McpPoolError } from "../pool/errors.js";
import type { PoolLog } from "../pool/types.js";
import { PeerRequests } from "./peer-requests.js";

/** Who is at the other end of a connection. */
export interface ConnectionInfo {
  readonly id: number;
  /** From hello. */
  readonly clientName: string;
  /** From hello: the client's own word, not checked. */
  readonly pid: number;
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
}

export interface RequestContext {
  /**
   * Aborted when the answer is no longer wanted: the connection closed, or the client
   * withdrew this request (`request/cancel`). The connection's own is `connection.signal`.
   */
  readonly signal: AbortSignal;
  /** The request's JSON-RPC id on this connection; undefined for a notification. */
  readonly id: JSONRPCID | undefined;
  readonly connection: ConnectionInfo;
  /** Pushes a notification to this connection; false when it can no longer take one. */
  notify<N extends NotificationName>(name: N, params: NotificationParamsOf<N>): boolean;
  /**
   * Asks this connection's client (DAEMON_REQUESTS: `elicit`, `sample`). Rejects with the client's
   * refusal, when the connection closes, or when `signal` aborts — the client is then told
   * with `request/cancel`.
   */
  request<R extends DaemonRequestName>(
    name: R,
    params: DaemonParamsOf<R>,
    signal?: AbortSignal,
  ): Promise<DaemonResultOf<R>>;
}

export type Handler<M extends MethodName> = (
  params: ParamsOf<M>,
  ctx: RequestContext,
) => ResultOf<M> | PromiseLike<ResultOf<M>>;

/** One handler per method of the wire; tsc insists on every one. */
export type HandlerTable = { readonly [M in MethodName]: Handler<M> };

/** Outbound bytes a connection may leave unread before it is dropped: 64 MiB. */
export const DEFAULT_MAX_OUTBOUND_BYTES = 64 * 1024 * 1024;
/** Bound on a new connection's hello, ms. */
export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
/**
 * Bound on close() letting calls in flight finish, ms, before it destroys what is left: the
 * daemon's shutdown grace (F6). The service units allow 15 s to stop (TimeoutStopSec,
 * ExitTimeOut); this plus the children's stop ladder (2 s + 2 s) stays under it.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
// After an error answer that ends a connection, the peer gets this long to read it before
// the socket is destroyed outright (a peer that never reads must not keep the fd).
const CLOSE_GRACE_MS = 1_000;
// sun_path holds 108 bytes on Linux, 104 on macOS, the terminating NUL included.
const MAX_SOCKET_PATH_BYTES = process.platform === "darwin" ? 103 : 107;

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
  /** Connections open now. */
  readonly clients: number;
}

interface Peer {
  readonly info: { id: number; clientName: string; pid: number; signal: AbortSignal };
  readonly socket: Socket;
  readonly decoder: FrameDecoder;
  readonly controller: AbortController;
  readonly notify: RequestContext["notify"];
  /** Requests in flight both ways, each with its own signal. */
  readonly requests: PeerRequests;
  phase: "hello" | "ready" | "closing";
  inflight: number;
  helloTimer: NodeJS.Timeout | undefined;
}

interface Route {
  check: ParamsCheck;
  run: (params: Record<string, unknown>, ctx: RequestContext) => unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The dispatch table: one route per method of METHODS, each with its params check. */
function routesOf(handlers: HandlerTable): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const name of Object.keys(METHODS) as MethodName[]) {
    const run = handlers[name] as unknown;
    if (typeof run !== "function") throw new TypeError(`no handler for the method "${name}"`);
    routes.set(name, { check: METHODS[name].check, run: run as Route["run"] });
  }
  return routes;
}

/** The JSON-RPC error a handler's throw becomes; only refusals keep their message. */
function wireErrorOf(error: unknown): WireError | undefined {
  if (error instanceof McpPoolError || error instanceof ClientError) {
    return toWireError(error.code, error.message, error.detail);
  }
  return undefined;
}

/** A name beside `path` for binding, short enough for sun_path. */
function temporaryPath(path: string): string {
  const beside = `${path}.${process.pid}.tmp`;
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH_BYTES) return beside;
  return join(dirname(path), `.${process.pid}.tmp`);
}

export function createSocketServer(options: SocketServerOptions): SocketServer {
  const { handlers, log } = options;
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const maxOutboundBytes = options.maxOutboundBytes ?? DEFAULT_MAX_OUTBOUND_BYTES;
  const helloTimeoutMs = options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  if (options.socketPath === undefined && options.listenFd === undefined) {
    throw new TypeError("createSocketServer needs a socketPath or a listenFd");
  }
  const routes = routesOf(handlers);
  const peers = new Set<Peer>();
  let server: Server | undefined;
  let state: "idle" | "starting" | "listening" | "draining" | "closed" = "idle";
  /** The inode we bound, so close() unlinks the path only while it is still ours. */
  let bound: { path: string; dev: number; ino: number } | undefined;
  let nextId = 0;
  let closing: Promise<void> | undefined;
  let destroying: Promise<void> | undefined;
  let serverClosed: Promise<void> | undefined;

  function write(peer: Peer, frame: Uint8Array): boolean {
    const { socket } = peer;
    if (socket.destroyed || !socket.writable) return false;
    socket.write(frame);
    if (socket.writableLength > maxOutboundBytes) {
      log.error?.(
        `dropping client ${peer.info.id} (${peer.info.clientName || "before hello"}): ` +
          `${socket.writableLength} bytes unread, over the ${maxOutboundBytes}-byte cap`,
      );
      socket.destroy();
      return false;
    }
    return true;
  }

  function respond(peer: Peer, message: object, id: JSONRPCID): void {
    let frame: Uint8Array;
    try {
      frame = encodeFrame(message);
    } catch {
      frame = encodeFrame(
        createJSONRPCErrorResponse(id, JSONRPCErrorCode.InternalError, "the answer is not JSON"),
      );
    }
    // The peer's decoder would refuse it and lose every other answer on the connection.
    if (frame.length - 1 > maxFrameBytes) {
      frame = encodeFrame(
        createJSONRPCErrorResponse(
          id,
          JSONRPCErrorCode.InternalError,
          `the answer is ${frame.length - 1} bytes, over the ${maxFrameBytes}-byte frame cap`,
          { bytes: frame.length - 1, limit: maxFrameBytes },
        ),
      );
    }
    write(peer, frame);
  }

  function fail(peer: Peer, id: JSONRPCID, code: number, message: string, data?: unknown): void {
    respond(peer, createJSONRPCErrorResponse(id, code, message, data), id);
  }

  /** Lets the peer read what was sent, then closes; ignores whatever it sends meanwhile. */
  function endPeer(peer: Peer): void {
    if (peer.phase === "closing") return;
    peer.phase = "closing";
    clearTimeout(peer.helloTimer);
    peer.socket.end();
    setTimeout(() => peer.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  function notifyPeer<N extends NotificationName>(
    peer: Peer,
    name: N,
    params: NotificationParamsOf<N>,
  ): boolean {
    if (peer.phase !== "ready") return false;
    let frame: Uint8Array;
    try {
      frame = encodeFrame(createJSONRPCNotification(name, params));
    } catch {
      return false;
    }
    if (frame.length - 1 > maxFrameBytes) {
      log.error?.(`dropped a ${frame.length - 1}-byte "${name}" notification: over the frame cap`);
      return false;
    }
    return write(peer, frame);
  }

  /** A request of ours or a `request/cancel`, to a connection past hello; false if not sent. */
  function sendPeer(peer: Peer, message: object): boolean {
    if (peer.phase !== "ready") return false;
    let frame: Uint8Array;
    try {
      frame = encodeFrame(message);
    } catch {
      return false;
    }
    if (frame.length - 1 > maxFrameBytes) return false;
    return write(peer, frame);
  }

  function settled(peer: Peer): void {
    peer.inflight--;
    if (state === "draining" && peer.inflight === 0) endPeer(peer);
  }

  function invoke(
    peer: Peer,
    id: JSONRPCID | undefined,
    method: MethodName,
    params: Record<string, unknown>,
  ): void {
    const route = routes.get(method) as Route;
    const request = peer.requests.begin(id);
    const ctx: RequestContext = {
      signal: request.signal,
      id,
      connection: peer.info,
      notify: peer.notify,
      request: (name, params, signal) => peer.requests.request(name, params, signal),
    };
    // The answer is written before the request counts as settled: in a drain, settling the
    // last one ends the connection, and an answer written after that would be lost (F6).
    const succeed = (result: unknown): void => {
      peer.requests.end(id, request);
      if (id !== undefined) respond(peer, createJSONRPCSuccessResponse(id, result), id);
      settled(peer);
    };
    const refuse = (error: unknown): void => {
      peer.requests.end(id, request);
      const wire = wireErrorOf(error);
      // A call whose client went away or withdrew it fails by design; nobody waits for it.
      if (wire === undefined && !request.signal.aborted) {
        log.error?.(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
      const answer = wire ?? {
        code: JSONRPCErrorCode.InternalError,
        message: `internal error while handling ${method}`,
      };
      if (id !== undefined) respond(peer, { jsonrpc: "2.0", id, error: answer }, id);
      settled(peer);
    };
    peer.inflight++;
    let result: unknown;
    try {
      result = route.run(params, ctx);
    } catch (error) {
      refuse(error);
      return;
    }
    if (isThenable(result)) result.then(succeed, refuse);
    else succeed(result);
  }

  function onHello(peer: Peer, id: JSONRPCID, params: Record<string, unknown>): void {
    const version = params.protocolVersion as number;
    if (version !== PROTOCOL_VERSION) {
      log.error?.(
        `refused client "${String(params.clientName)}" (pid ${String(params.pid)}): protocol ${version}, not ${PROTOCOL_VERSION}`,
      );
      const wire = toWireError(
        "protocol-mismatch",
        `this daemon speaks protocol ${PROTOCOL_VERSION}, the client ${version}: upgrade the older one`,
        { expected: PROTOCOL_VERSION, received: version },
      );
      respond(peer, { jsonrpc: "2.0", id, error: wire }, id);
      endPeer(peer);
      return;
    }
    clearTimeout(peer.helloTimer);
    peer.helloTimer = undefined;
    peer.info.clientName = params.clientName as string;
    peer.info.pid = params.pid as number;
    // Ready before the handler answers, so a client may pipeline requests behind hello.
    peer.phase = "ready";
    invoke(peer, id, "hello", params);
  }

  function onMessage(peer: Peer, message: unknown): void {
    const beforeHello = peer.phase === "hello";
    const refuse = (id: JSONRPCID, code: number, text: string, data?: unknown): void => {
      fail(peer, id, code, text, data);
      if (beforeHello) endPeer(peer);
    };
    if (!isRecord(message)) {
      const text = Array.isArray(message) ? "batches are not supported" : "not a JSON-RPC message";
      return refuse(null, JSONRPCErrorCode.InvalidRequest, `Invalid Request: ${text}`);
    }
    const rawId = message.id;
    const id = isJSONRPCID(rawId) ? rawId : null;
    if (message.jsonrpc !== "2.0" || (rawId !== undefined && !isJSONRPCID(rawId))) {
      return refuse(id, JSONRPCErrorCode.InvalidRequest, "Invalid Request: not JSON-RPC 2.0");
    }
    if (typeof message.method !== "string") {
      // An answer from the client to one of ours (`elicit`, `sample`); a stray one is ignored.
      if (rawId !== undefined && ("result" in message || "error" in message) && !beforeHello) {
        peer.requests.answer(message);
        return;
      }
      return refuse(id, JSONRPCErrorCode.InvalidRequest, "Invalid Request: no method");
    }
    const method = message.method;
    if (beforeHello && (method !== "hello" || rawId === undefined)) {
      return refuse(
        id,
        JSONRPCErrorCode.InvalidRequest,
        "Invalid Request: the first request must be hello",
      );
    }
    if (method === CANCEL.method && rawId === undefined) {
      const withdrawn = isRecord(message.params) ? message.params : {};
      if (CANCEL.check(withdrawn) === undefined) peer.requests.cancel(withdrawn.id as JSONRPCID);
      return;
    }
    if (!isMethodName(method)) {
      if (rawId !== undefined)
        fail(peer, id, JSONRPCErrorCode.MethodNotFound, `Method not found: ${method}`);
      return;
    }
    if (message.params !== undefined && !isRecord(message.params)) {
      return refuse(id, JSONRPCErrorCode.InvalidParams, "Invalid params: params must be an object");
    }
    const params = (message.params ?? {}) as Record<string, unknown>;
    const problem = (routes.get(method) as Route).check(params);
    if (problem !== undefined) {
      return refuse(id, JSONRPCErrorCode.InvalidParams, `Invalid params: ${problem}`);
    }
    if (method === "hello") {
      if (!beforeHello)
        return refuse(
          id,
          JSONRPCErrorCode.InvalidRequest,
          "Invalid Request: hello was already exchanged",
        );
      return onHello(peer, id, params);
    }
    if (state === "draining") {
      if (rawId === undefined) return;
      const wire = toWireError("closed", "the daemon is shutting down");
      return respond(peer, { jsonrpc: "2.0", id, error: wire }, id);
    }
    invoke(peer, rawId as JSONRPCID | undefined, method, params);
  }

  function onFrames(peer: Peer, frames: Frame[]): void {
    for (const frame of frames) {
      if (peer.phase === "closing") return;
      if (frame.ok) {
        onMessage(peer, frame.value);
        continue;
      }
      const { reason, message, bytes } = frame.error;
      if (reason === "oversize") {
        log.error?.(`dropping client ${peer.info.id}: a frame passed ${maxFrameBytes} bytes`);
        fail(peer, null, JSONRPCErrorCode.InvalidRequest, `Invalid Request: ${message}`, {
          bytes,
          limit: maxFrameBytes,
        });
        endPeer(peer);
        return;
      }
      fail(peer, null, JSONRPCErrorCode.ParseError, `Parse error: ${message}`);
      if (peer.phase === "hello") endPeer(peer);
    }
  }

  function accept(socket: Socket): void {
    if (state !== "listening") {
      socket.destroy();
      return;
    }
    const controller = new AbortController();
    const peer: Peer = {
      info: { id: ++nextId, clientName: "", pid: 0, signal: controller.signal },
      socket,
      decoder: new FrameDecoder({ maxFrameBytes }),
      controller,
      notify: (name, params) => notifyPeer(peer, name, params),
      requests: new PeerRequests((message) => sendPeer(peer, message)),
      phase: "hello",
      inflight: 0,
      helloTimer: undefined,
    };
    peers.add(peer);
    peer.helloTimer = setTimeout(() => {
      fail(
        peer,
        null,
        JSONRPCErrorCode.InvalidRequest,
        `Invalid Request: no hello within ${helloTimeoutMs} ms`,
      );
      endPeer(peer);
    }, helloTimeoutMs);
    peer.helloTimer.unref();
    socket.on("data", (chunk: Buffer) => {
      if (peer.phase !== "closing") onFrames(peer, peer.decoder.push(chunk));
    });
    // EPIPE, ECONNRESET: the peer went away; 'close' follows and cleans up.
    socket.on("error", () => undefined);
    socket.once("close", () => {
      peers.delete(peer);
      clearTimeout(peer.helloTimer);
      peer.phase = "closing";
      peer.decoder.end();
      const gone = new ClientError("daemon-unavailable", "the client disconnected");
      controller.abort(gone);
      peer.requests.close(gone);
    });
  }

  function listen(target: string | { fd: number }): Promise<void> {
    const srv = server as Server;
    return new Promise((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(target, () => {
        srv.off("error", reject);
        resolve();
      });
    });
  }

  async function bind(path: string): Promise<void> {
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw new Error(
        `the socket path ${path} is ${Buffer.byteLength(path)} bytes; sockets allow ${MAX_SOCKET_PATH_BYTES}`,
      );
    }
    const temporary = temporaryPath(path);
    await unlink(temporary).catch((error: unknown) => {
      if (errnoCode(error) !== "ENOENT") throw error;
    });
    await listen(temporary);
    try {
      await chmod(temporary, 0o600);
      const { dev, ino } = await stat(temporary);
      // rename(2) replaces atomically: a client never finds no socket at `path`.
      await rename(temporary, path);
      bound = { path, dev, ino };
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }

  /** Unlinks the socket path if it still is the inode we bound. */
  async function release(): Promise<void> {
    const mine = bound;
    bound = undefined;
    if (mine === undefined) return;
    try {
      const now = await lstat(mine.path);
      if (now.dev === mine.dev && now.ino === mine.ino) await unlink(mine.path);
    } catch (error) {
      if (errnoCode(error) !== "ENOENT")
        log.error?.(`could not remove ${mine.path}: ${String(error)}`);
    }
  }

  /** Stops accepting; resolves once every connection it accepted has closed too. */
  function stopListening(): Promise<void> {
    serverClosed ??= new Promise((resolve) => {
      // Never listening (not started, or start failed): it accepted nothing.
      if (server === undefined || !server.listening) return resolve();
      server.close(() => resolve());
    });
    return serverClosed;
  }

  return {
    get clients() {
      return peers.size;
    },

    async start() {
      if (state !== "idle") throw new Error(`the socket server cannot start: it is ${state}`);
      state = "starting";
      server = createServer((socket) => accept(socket));
      try {
        if (options.listenFd !== undefined) await listen({ fd: options.listenFd });
        else await bind(options.socketPath as string);
      } catch (error) {
        state = "closed";
        server.close();
        throw error;
      }
      server.on("error", (error) => log.error?.(`socket server: ${error.message}`));
      state = "listening";
    },

    close() {
      if (closing !== undefined) return closing;
      if (state === "closed") return (closing = Promise.resolve());
      state = "draining";
      closing = (async () => {
        const stopped = stopListening();
        await release();
        for (const peer of peers) if (peer.inflight === 0) endPeer(peer);
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
