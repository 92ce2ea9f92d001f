/**
 * PoolClient: the daemon's pool, seen from an agent (SPEC D3). One connection at a time;
 * `hello` first on each; when the daemon goes away, calls in flight fail at once with
 * `daemon-unavailable` and the client redials in the background, redoing hello and the
 * subscriptions. The socket keeps the process alive only while a call is pending, so an
 * agent that is done simply exits (esbuild's service does the same with reference counts).
 */
import { Connection } from "./connection.js";
import { checkSocket, openSocket, startDaemon } from "./dial.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./codec.js";
import { McpPoolError } from "./errors.js";
import { defaultSocketPath } from "./paths.js";
import {
  PROTOCOL_VERSION,
  type CallParams,
  type HelloResult,
  type MethodName,
  type NotificationName,
  type ParamsOf,
  type ResultOf,
  type ServerNotificationParams,
} from "./protocol.js";
import type {
  CallToolResult,
  CatalogServer,
  ConfigStatus,
  DaemonStatus,
  PoolEvent,
  ProbeResult,
  ServerNotification,
  ServerRow,
  ServerState,
  ToolDefinition,
} from "./shapes.js";

/** Bound on reaching the daemon and hearing its hello, ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Bound on waiting for an auto-started daemon's socket to appear, ms. */
export const DEFAULT_AUTO_START_TIMEOUT_MS = 5_000;
/** Longest pause between background redials, ms; a restarting daemon is back within it. */
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 5_000;
// First pause after a lost connection: a daemon restarted by its service manager needs a
// moment to bind, and ten redials a second cost nothing. Doubles up to the maximum.
const FIRST_RECONNECT_DELAY_MS = 100;

export interface ConnectOptions {
  /** The daemon's socket. Default: defaultSocketPath(). */
  socketPath?: string;
  /** Sent in hello; the daemon shows it in its logs. */
  clientName: string;
  /** Start the daemon when its socket is absent, with `autoStartCommand`. Default false. */
  autoStart?: boolean;
  /**
   * The daemon's argv for `autoStart`, e.g. `[process.execPath, "/…/mcpool/dist/cli/main.js",
   * "serve"]`. Spawned detached with MCPOOL_SOCKET set to the socket path. Default: none, in
   * which case `autoStart` fails with `daemon-unavailable`.
   */
  autoStartCommand?: readonly string[];
  /** Bound on an auto-started daemon's socket appearing, ms. Default 5000. */
  autoStartTimeoutMs?: number;
  /** Largest frame accepted from the daemon, bytes. Default 16 MiB. */
  maxFrameBytes?: number;
  /** Bound on connecting plus hello, ms, for each dial. Default 5000. */
  connectTimeoutMs?: number;
  /** Longest pause between background redials, ms. Default 5000. */
  maxReconnectDelayMs?: number;
  /** Aborts connect() itself (not the client it returns). */
  signal?: AbortSignal;
}

export interface CallOptions {
  /** Server ids the call may reach; absent = all, empty = none. */
  servers?: readonly string[];
  /** Overrides the row's and the pool's call timeout, ms. */
  timeoutMs?: number;
  /** Return the CallToolResult instead of its text. */
  raw?: boolean;
  /** Overrides the row's and the pool's result cap, characters; 0 = no cap. */
  maxResultChars?: number;
  /** Rejects the call with the signal's reason (an AbortError) when aborted. */
  signal?: AbortSignal;
}

export type EventListener = (event: PoolEvent) => void;
export type NotificationListener = (serverId: string, notification: ServerNotification) => void;

export interface PoolClient {
  /** The daemon's hello on the current connection; undefined while disconnected. */
  readonly daemon: HelloResult | undefined;
  state(options?: { secrets?: boolean }): Promise<readonly ServerState[]>;
  tools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Promise<readonly ToolDefinition[]>;
  catalog(servers?: readonly string[]): Promise<readonly CatalogServer[]>;
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions & { raw?: false },
  ): Promise<string>;
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions & { raw: true },
  ): Promise<CallToolResult>;
  probe(row: ServerRow): Promise<ProbeResult>;
  stop(id: string): Promise<void>;
  reconnect(id: string): Promise<void>;
  reload(): Promise<ConfigStatus>;
  status(): Promise<DaemonStatus>;
  shutdown(): Promise<void>;
  /**
   * Calls `listener` with every pool event; returns the unsubscribe function. Listening does
   * not keep the process alive. A listener that throws is reported as an uncaught exception,
   * as EventTarget does, without keeping the other listeners from the event.
   */
  onEvent(listener: EventListener): () => void;
  /** Calls `listener` with every notification of a pooled server; returns the unsubscribe. */
  onNotification(listener: NotificationListener): () => void;
  /** Fails pending calls with `closed`, stops redialling; resolves once the socket closed. */
  close(): Promise<void>;
}

/** Connects to the daemon and exchanges hello. Fails with `daemon-unavailable` or `protocol-mismatch`. */
export async function connect(options: ConnectOptions): Promise<PoolClient> {
  const client = new SocketPoolClient(options);
  await client.start(options.signal);
  return client;
}

function defined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item;
  return out as T;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function report(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

class SocketPoolClient implements PoolClient {
  daemon: HelloResult | undefined;
  private readonly socketPath: string;
  private readonly clientName: string;
  private readonly autoStart: boolean;
  private readonly autoStartCommand: readonly string[];
  private readonly autoStartTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly maxReconnectDelayMs: number;
  private current: Connection | undefined;
  /** A connection still exchanging hello; closed with the client if it closes first. */
  private opening: Connection | undefined;
  private dialling: Promise<Connection> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = FIRST_RECONNECT_DELAY_MS;
  /** Redialling is for a daemon that went away; a first connect that fails just throws. */
  private connectedOnce = false;
  /** Calls in progress, dials they wait for included: the socket is ref'd while > 0. */
  private holds = 0;
  private closing: Promise<void> | undefined;
  private readonly eventListeners = new Set<EventListener>();
  private readonly notificationListeners = new Set<NotificationListener>();

  constructor(options: ConnectOptions) {
    this.socketPath = options.socketPath ?? defaultSocketPath();
    this.clientName = options.clientName;
    this.autoStart = options.autoStart ?? false;
    this.autoStartCommand = options.autoStartCommand ?? [];
    this.autoStartTimeoutMs = options.autoStartTimeoutMs ?? DEFAULT_AUTO_START_TIMEOUT_MS;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.maxReconnectDelayMs = options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS;
  }

  async start(signal: AbortSignal | undefined): Promise<void> {
    this.hold(1);
    try {
      await abortable(this.dial(true), signal);
    } catch (error) {
      await this.close();
      throw error;
    } finally {
      this.hold(-1);
    }
  }

  state(options: { secrets?: boolean } = {}): Promise<readonly ServerState[]> {
    return this.run("pool/state", defined({ secrets: options.secrets }));
  }

  tools(
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): Promise<readonly ToolDefinition[]> {
    return this.run("tools/list", defined({ names: options.names, servers: options.servers }));
  }

  catalog(servers?: readonly string[]): Promise<readonly CatalogServer[]> {
    return this.run("tools/catalog", defined({ servers }));
  }

  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions & { raw?: false },
  ): Promise<string>;
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions & { raw: true },
  ): Promise<CallToolResult>;
  async call(
    name: string,
    args?: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<string | CallToolResult> {
    const params: CallParams = defined({
      name,
      arguments: args,
      servers: options.servers,
      timeoutMs: options.timeoutMs,
      raw: options.raw,
      maxResultChars: options.maxResultChars,
    });
    const answer = await this.run("tools/call", params, options.signal);
    return "result" in answer ? answer.result : answer.text;
  }

  probe(row: ServerRow): Promise<ProbeResult> {
    return this.run("server/probe", { row });
  }

  async stop(id: string): Promise<void> {
    await this.run("server/stop", { id });
  }

  async reconnect(id: string): Promise<void> {
    await this.run("server/reconnect", { id });
  }

  reload(): Promise<ConfigStatus> {
    return this.run("pool/reload", {});
  }

  status(): Promise<DaemonStatus> {
    return this.run("daemon/status", {});
  }

  async shutdown(): Promise<void> {
    await this.run("daemon/shutdown", {});
  }

  onEvent(listener: EventListener): () => void {
    this.eventListeners.add(listener);
    this.updateSubscription();
    return () => {
      if (this.eventListeners.delete(listener)) this.updateSubscription();
    };
  }

  onNotification(listener: NotificationListener): () => void {
    this.notificationListeners.add(listener);
    this.updateSubscription();
    return () => {
      if (this.notificationListeners.delete(listener)) this.updateSubscription();
    };
  }

  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const error = new McpPoolError("closed", "the client was closed");
    const connections = [this.current, this.opening].filter((c) => c !== undefined);
    this.current = undefined;
    this.opening = undefined;
    this.daemon = undefined;
    this.closing = Promise.all(connections.map((c) => c.close(error))).then(() => undefined);
    return this.closing;
  }

  private closedError(): McpPoolError {
    return new McpPoolError("closed", "the client was closed");
  }

  private async run<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
  ): Promise<ResultOf<M>> {
    if (this.closing !== undefined) throw this.closedError();
    if (signal?.aborted) throw signal.reason;
    this.hold(1);
    try {
      const current = this.current;
      const connection =
        current !== undefined && current.isOpen
          ? current
          : await abortable(this.dial(true), signal);
      return await connection.request(method, params, signal);
    } finally {
      this.hold(-1);
    }
  }

  private hold(delta: 1 | -1): void {
    const before = this.holds > 0;
    this.holds += delta;
    const after = this.holds > 0;
    if (before === after) return;
    this.current?.setRef(after);
    this.opening?.setRef(after);
  }

  /** The one dial in progress, or a new one. `user`: a caller waits on it (autoStart applies). */
  private dial(user: boolean): Promise<Connection> {
    if (this.dialling !== undefined) return this.dialling;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const attempt = this.dialOnce(user);
    this.dialling = attempt;
    attempt.then(
      () => {
        this.dialling = undefined;
        this.retryDelayMs = FIRST_RECONNECT_DELAY_MS;
      },
      () => {
        this.dialling = undefined;
        this.scheduleRedial();
      },
    );
    return attempt;
  }

  private async dialOnce(user: boolean): Promise<Connection> {
    if ((await checkSocket(this.socketPath)) === "absent") {
      if (!(user && this.autoStart)) {
        throw new McpPoolError(
          "daemon-unavailable",
          `no daemon is listening at ${this.socketPath}`,
          {
            socketPath: this.socketPath,
          },
        );
      }
      await startDaemon(this.socketPath, this.autoStartCommand, this.autoStartTimeoutMs);
    }
    if (this.closing !== undefined) throw this.closedError();
    const socket = await openSocket(this.socketPath, {
      timeoutMs: this.connectTimeoutMs,
      ref: this.holds > 0,
    });
    if (this.closing !== undefined) {
      socket.destroy();
      throw this.closedError();
    }
    const connection: Connection = new Connection(socket, this.maxFrameBytes, {
      onNotification: (name, params) => this.dispatch(name, params),
      onClose: () => this.lost(connection),
    });
    connection.setRef(this.holds > 0);
    this.opening = connection;
    const timer = setTimeout(() => {
      void connection.close(
        new McpPoolError(
          "daemon-unavailable",
          `the daemon at ${this.socketPath} did not answer hello within ${this.connectTimeoutMs} ms`,
          { socketPath: this.socketPath, timeoutMs: this.connectTimeoutMs },
        ),
      );
    }, this.connectTimeoutMs);
    timer.unref();
    try {
      const hello = await connection.request("hello", {
        protocolVersion: PROTOCOL_VERSION,
        clientName: this.clientName,
        pid: process.pid,
      });
      if (hello.protocolVersion !== PROTOCOL_VERSION) {
        throw new McpPoolError(
          "protocol-mismatch",
          `the daemon at ${this.socketPath} speaks protocol ${hello.protocolVersion}, this client ${PROTOCOL_VERSION}: upgrade the older one`,
          { expected: PROTOCOL_VERSION, received: hello.protocolVersion },
        );
      }
      await this.syncSubscription(connection);
      if (this.closing !== undefined) throw this.closedError();
      this.daemon = hello;
    } catch (error) {
      await connection.close(
        error instanceof McpPoolError
          ? error
          : new McpPoolError("daemon-unavailable", "the hello exchange failed"),
      );
      throw error;
    } finally {
      clearTimeout(timer);
      if (this.opening === connection) this.opening = undefined;
    }
    this.current = connection;
    this.connectedOnce = true;
    // A listener added while hello was in flight is not in what syncSubscription sent.
    this.updateSubscription();
    return connection;
  }

  /** A connection closed: its calls have failed; redial unless it was never current or we closed. */
  private lost(connection: Connection): void {
    if (this.current !== connection) return;
    this.current = undefined;
    this.daemon = undefined;
    this.scheduleRedial();
  }

  private scheduleRedial(): void {
    if (!this.connectedOnce || this.closing !== undefined || this.retryTimer !== undefined) return;
    if (this.dialling !== undefined || this.current !== undefined) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(delay * 2, this.maxReconnectDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A failed background dial schedules the next one itself (dial()).
      this.dial(false).catch(() => undefined);
    }, delay);
    this.retryTimer.unref();
  }

  private wanted(): { events: boolean; notifications: boolean } {
    return {
      events: this.eventListeners.size > 0,
      notifications: this.notificationListeners.size > 0,
    };
  }

  private async syncSubscription(connection: Connection): Promise<void> {
    const want = this.wanted();
    const had = connection.subscribed;
    if (want.events === had.events && want.notifications === had.notifications) return;
    connection.subscribed = want;
    try {
      await connection.request("pool/subscribe", want);
    } catch (error) {
      // Not subscribed after all: the next change (or the next connection) sends it again.
      if (connection.subscribed === want) connection.subscribed = had;
      throw error;
    }
  }

  private updateSubscription(): void {
    const connection = this.current;
    if (connection === undefined) return; // the next dial subscribes
    this.syncSubscription(connection).catch(() => undefined);
  }

  private dispatch(name: NotificationName, params: unknown): void {
    if (typeof params !== "object" || params === null) return;
    if (name === "event") {
      const event = params as PoolEvent;
      if (typeof event.type !== "string") return;
      for (const listener of [...this.eventListeners]) {
        try {
          listener(event);
        } catch (error) {
          report(error);
        }
      }
    } else {
      const { serverId, notification } = params as ServerNotificationParams;
      if (
        typeof serverId !== "string" ||
        typeof notification !== "object" ||
        notification === null
      ) {
        return;
      }
      for (const listener of [...this.notificationListeners]) {
        try {
          listener(serverId, notification);
        } catch (error) {
          report(error);
        }
      }
    }
  }
}
