/**
 * The reconnecting link to the daemon: one connection at a time, `hello` first on each;
 * when the daemon goes away, requests in flight fail at once with `daemon-unavailable` and
 * the link redials in the background (a first connect that fails just throws). It may start
 * the daemon (`autoStart`). The socket keeps the process alive only while a request is
 * pending, so an agent that is done simply exits (esbuild's service counts references the
 * same way). What the link carries is the caller's business: it knows methods only as the
 * protocol's descriptors, and hands a new connection to `prepare` before anyone uses it.
 */
import {
  McpPoolError,
  PROTOCOL_VERSION,
  type HelloResult,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from "mcpool-protocol";

import { Connection, type ConnectionHooks } from "./connection.js";
import { reachDaemon, type AutoStart } from "./dial.js";

// First pause after a lost connection: a daemon restarted by its service manager needs a
// moment to bind, and ten redials a second cost nothing. Doubles up to the maximum.
const FIRST_RECONNECT_DELAY_MS = 100;

export interface DaemonLinkOptions {
  socketPath: string;
  clientName: string;
  /** Argv that starts the daemon when none answers; undefined: never start one. */
  autoStart: AutoStart | undefined;
  maxFrameBytes: number;
  connectTimeoutMs: number;
  maxReconnectDelayMs: number;
  /** How long after a lost connection a request waits for the redial, ms; 0: it fails at once. */
  reconnectWaitMs: number;
}

// How often a request waiting for a lost daemon (reconnectWaitMs) dials again itself, ms.
const RECONNECT_POLL_MS = 500;
// After a lost connection, a waiting request (reconnectWaitMs) dials without starting a
// daemon for this long, ms: a service manager restarting the daemon binds first. A daemon
// started here would take the socket, and the service's own start would then fail.
const AUTO_START_GRACE_MS = 5_000;

/** What the link's owner does with each connection: its traffic, and its set-up. */
export interface LinkHooks extends Required<Omit<ConnectionHooks, "onClose">> {
  /** After hello, before the connection is used: a failure fails the dial. */
  prepare(connection: Connection): Promise<void>;
  /** The connection is the current one. */
  ready(connection: Connection): void;
}

export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
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

export class DaemonLink {
  /** The daemon's hello on the current connection; undefined while disconnected. */
  daemon: HelloResult | undefined;
  private current: Connection | undefined;
  /** A connection still exchanging hello; closed with the link if it closes first. */
  private opening: Connection | undefined;
  private dialling: Promise<Connection> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = FIRST_RECONNECT_DELAY_MS;
  /** Redialling is for a daemon that went away; a first connect that fails just throws. */
  private connectedOnce = false;
  /** Requests in progress, dials they wait for included: the socket is ref'd while > 0. */
  private holds = 0;
  private closing: Promise<void> | undefined;
  /** When the current connection was lost (ms since epoch); undefined while connected. */
  private lostAt: number | undefined;
  /** Requests waiting for a redial: told when a connection becomes current. */
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly options: DaemonLinkOptions,
    private readonly hooks: LinkHooks,
  ) {}

  /** The current connection, if one is open: for traffic that must not dial. */
  get connection(): Connection | undefined {
    return this.current;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** The first dial: it throws rather than redials, and closes the link when it fails. */
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

  /** One request on the current connection, dialling (and maybe starting) the daemon first. */
  request<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
    onId?: (id: number) => void,
  ): Promise<ResultOf<M>> {
    const current = this.current;
    if (this.closing !== undefined || signal?.aborted === true || current?.isOpen !== true) {
      return this.dialled(method, params, signal, onId);
    }
    // An open connection is taken as it is: no async step, no dial's promise and wait. The
    // hold ends as the answer settles, before its caller hears of it.
    this.hold(1);
    const answer = current.request(method, params, signal, onId);
    answer.then(this.release, this.release);
    return answer;
  }

  /** The end of one request's hold: one function for every request, made once. */
  private readonly release = (): void => this.hold(-1);

  /** request() on a link that is closing, for a withdrawn request, or with no connection open. */
  private async dialled<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    signal: AbortSignal | undefined,
    onId: ((id: number) => void) | undefined,
  ): Promise<ResultOf<M>> {
    if (this.closing !== undefined) throw closedError();
    if (signal?.aborted) throw signal.reason;
    this.hold(1);
    try {
      const connection = this.current?.isOpen === true ? this.current : await this.open(signal);
      return await connection.request(method, params, signal, onId);
    } finally {
      this.hold(-1);
    }
  }

  /**
   * The current connection, or a dial's. Within reconnectWaitMs of a lost connection, a dial
   * that fails is tried again (the daemon restarting) until one succeeds or the time is over.
   */
  private async open(signal: AbortSignal | undefined): Promise<Connection> {
    for (;;) {
      const current = this.current;
      if (current !== undefined && current.isOpen) return current;
      const { reconnectWaitMs } = this.options;
      const since = this.lostAt === undefined ? Infinity : Date.now() - this.lostAt;
      try {
        return await abortable(
          this.dial(since >= Math.min(AUTO_START_GRACE_MS, reconnectWaitMs)),
          signal,
        );
      } catch (error) {
        const left =
          this.lostAt === undefined ? 0 : this.lostAt + this.options.reconnectWaitMs - Date.now();
        const lost = error instanceof McpPoolError && error.code === "daemon-unavailable";
        if (!lost || left <= 0 || this.closing !== undefined) throw error;
        await abortable(this.nextConnection(Math.min(left, RECONNECT_POLL_MS)), signal);
      }
    }
  }

  /** Resolves when a connection becomes current, or after `ms`. */
  private nextConnection(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Fails pending requests with `closed`, stops redialling; resolves once the socket closed. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const error = closedError();
    for (const waiter of [...this.waiters]) waiter();
    const connections = [this.current, this.opening].filter((c) => c !== undefined);
    this.current = undefined;
    this.opening = undefined;
    this.daemon = undefined;
    this.closing = Promise.all(connections.map((c) => c.close(error))).then(() => undefined);
    return this.closing;
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
    const starts = user && this.options.autoStart !== undefined;
    if (this.dialling !== undefined) {
      // A background redial never starts a daemon: a caller who may start one dials again
      // itself when it fails (after its handlers below have cleared `dialling`).
      return starts ? this.dialling.catch(() => this.dial(true)) : this.dialling;
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const attempt = starts ? this.dialStarting() : this.dialOnce(user);
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

  /**
   * A dial that may start the daemon. A daemon dying as we dial can accept the connect and
   * reset it before its hello; a reset or an end (not a hello that ran out of time) is
   * dialled once more, which finds the socket refused and starts a daemon.
   */
  private async dialStarting(): Promise<Connection> {
    try {
      return await this.dialOnce(true);
    } catch (error) {
      const reset =
        error instanceof McpPoolError &&
        error.code === "daemon-unavailable" &&
        error.detail.timeoutMs === undefined;
      if (!reset || this.closing !== undefined) throw error;
      return this.dialOnce(true);
    }
  }

  private async dialOnce(user: boolean): Promise<Connection> {
    const { socketPath, connectTimeoutMs } = this.options;
    const socket = await reachDaemon(
      socketPath,
      { timeoutMs: connectTimeoutMs, ref: this.holds > 0 },
      user ? this.options.autoStart : undefined,
    );
    if (this.closing !== undefined) {
      socket.destroy();
      throw closedError();
    }
    const connection: Connection = new Connection(socket, this.options.maxFrameBytes, {
      onNotification: (name, params) => this.hooks.onNotification(name, params),
      onRequest: (name, params, signal) => this.hooks.onRequest(name, params, signal),
      onClose: () => this.lost(connection),
    });
    connection.setRef(this.holds > 0);
    this.opening = connection;
    const timer = setTimeout(() => {
      void connection.close(
        new McpPoolError(
          "daemon-unavailable",
          `the daemon at ${socketPath} did not answer hello within ${connectTimeoutMs} ms`,
          { socketPath, timeoutMs: connectTimeoutMs },
        ),
      );
    }, connectTimeoutMs);
    timer.unref();
    try {
      const hello = await this.hello(connection);
      await this.hooks.prepare(connection);
      if (this.closing !== undefined) throw closedError();
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
    this.lostAt = undefined;
    this.hooks.ready(connection);
    for (const waiter of [...this.waiters]) waiter();
    return connection;
  }

  private async hello(connection: Connection): Promise<HelloResult> {
    const { socketPath, clientName } = this.options;
    const hello = await connection.request("hello", {
      protocolVersion: PROTOCOL_VERSION,
      clientName,
      pid: process.pid,
    });
    if (hello.protocolVersion !== PROTOCOL_VERSION) {
      throw new McpPoolError(
        "protocol-mismatch",
        `the daemon at ${socketPath} speaks protocol ${hello.protocolVersion}, this client ${PROTOCOL_VERSION}: upgrade the older one`,
        { expected: PROTOCOL_VERSION, received: hello.protocolVersion },
      );
    }
    return hello;
  }

  /** A connection closed: its calls have failed; redial unless it was never current or we closed. */
  private lost(connection: Connection): void {
    if (this.current !== connection) return;
    this.current = undefined;
    this.daemon = undefined;
    this.lostAt = Date.now();
    this.scheduleRedial();
  }

  private scheduleRedial(): void {
    if (!this.connectedOnce || this.closing !== undefined || this.retryTimer !== undefined) return;
    if (this.dialling !== undefined || this.current !== undefined) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(delay * 2, this.options.maxReconnectDelayMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A failed background dial schedules the next one itself (dial()).
      this.dial(false).catch(() => undefined);
    }, delay);
    this.retryTimer.unref();
  }
}

function closedError(): McpPoolError {
  return new McpPoolError("closed", "the client was closed");
}
