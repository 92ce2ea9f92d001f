/**
 * One configured server: its row, its live connection (if any), its last-known tools and
 * what went wrong. The entry owns the state machine of a server — dial, crash, backoff,
 * revive, retirement — and every transition is one of its methods; the pool reads its
 * state and never writes it. What a transition changes of the state alone is state.ts,
 * dialling dial.ts, the arithmetic of backoff backoff.ts, the list tool-list.ts, its timers
 * server/timers.ts.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import { dialRefusal, wasHealthy } from "./backoff.js";
import {
  checkAlive,
  DEFAULT_DRAIN_MS,
  hangUp,
  Retirements,
  type Connection,
} from "./connection.js";
import { crashMessage, dial, learnServer } from "./dial.js";
import { swapFailedMessage, swapStartedMessage, swapsWarm } from "./warm-swap.js";
import { McpPoolError } from "../core/errors.js";
import { IdleTimer, ReviveTimer } from "./timers.js";
import { redactPoolError, redactSecrets } from "../core/secrets.js";
import {
  authSentence,
  DEFAULT_PING_TIMEOUT_MS,
  entrySecrets,
  standingAuthMessage,
  type EntryContext,
} from "./context.js";
import { EntryState, endsAStart } from "./state.js";
import type { ToolList } from "./tool-list.js";
import type { CacheHint } from "../mcp/list-tools.js";
import type { CloseReason } from "../core/types.js";
import { isUnreachableCode } from "../core/causes.js";
import { serverLog, type ServerLog } from "../core/server-log.js";

/** `; next attempt at <ISO time>` when a backoff holds the next dial, else nothing. */
function nextAttempt(retryAt: number | undefined): string {
  return retryAt === undefined ? "" : `; next attempt at ${new Date(retryAt).toISOString()}`;
}

/** A remote row's dial that reached nothing: refused, no such host, TLS refused. */
function unreachable(row: McpServerConfig, error: McpPoolError): boolean {
  return "url" in row && isUnreachableCode(error.detail?.causeCode as string | undefined);
}

export class ServerEntry extends EntryState {
  readonly #idle = new IdleTimer<Connection>({
    schedule: (work) => this.#context.schedule(work),
    stillIdle: (connection) => this._connection === connection && !this.#held(connection),
    reap: () => this.close("idle"),
  });
  readonly #retiring = new Retirements();
  readonly #revive = new ReviveTimer();
  readonly #context: EntryContext;
  /** Every line this entry logs is about its server, and says so. */
  readonly #log: ServerLog;

  constructor(row: McpServerConfig, context: EntryContext) {
    super(row);
    this.#context = context;
    this.#log = serverLog(context.log, row.id);
  }

  /** The live connection, dialling one if there is none and nothing forbids it. */
  ensure(options: { ignoreBackoff?: boolean } = {}): Promise<Connection> {
    if (this._connection) return Promise.resolve(this._connection);
    if (this._connecting) return this._connecting;
    const refusal = dialRefusal(this, options.ignoreBackoff === true, () =>
      standingAuthMessage(this.#context, this.id),
    );
    if (refusal) return Promise.reject(refusal);
    const connecting = this.#dial().finally(() => {
      if (this._connecting === connecting) this._connecting = undefined;
    });
    this._connecting = connecting;
    return connecting;
  }

  async #dial(): Promise<Connection> {
    const context = this.#context;
    const row = this._row;
    const started = Date.now();
    this._status = "connecting";
    this._starting = { since: started };
    context.changed(this);
    const current = (): boolean => !this._removed && this._row === row;
    try {
      const { connection, tools, hint } = await this.#open(row);
      if (!current()) {
        connection.closing = true;
        await connection.transport.close().catch(() => undefined);
        throw new McpPoolError("closed", `server "${row.id}" was reconfigured while connecting`);
      }
      learnServer(connection);
      this._verdict = connection.client.verdict ?? this._verdict;
      this.#connected(connection, tools, hint, started);
      return connection;
    } catch (cause) {
      const error = cause as McpPoolError;
      this._lastFailure = { error, at: Date.now() };
      // A start ended on purpose (stop, removal, shutdown) is no failure: nothing to count.
      const failed = current() && this._starting?.ended !== true;
      // A modern verdict that failed is found again on the next dial.
      if (failed && this._verdict?.era === "modern") this._verdict = undefined;
      if (failed && error.code === "auth-required") {
        this.#authRequired(error.message, Date.now());
      } else if (failed) {
        this._failed(error.message, Date.now(), context.crashBackoffMs, unreachable(row, error));
        this.#connectFailed(error.message, started);
        this.#scheduleRevive();
      }
      throw error;
    } finally {
      this._starting = undefined;
    }
  }

  /** The row a dial starts: the row itself (a child pinned to one era says otherwise). */
  protected dialled = (row: McpServerConfig): McpServerConfig => row;

  /** Starts a child (or session) for `row`, its events bound to the connection it makes. */
  #open(row: McpServerConfig): ReturnType<typeof dial> {
    const context = this.#context;
    return dial(this.dialled(row), context, row.connectTimeoutMs ?? context.connectTimeoutMs, {
      listChanged: (connection) => this.#relist(connection),
      closed: (connection) => this.#closed(connection),
      authCause: (cause) => authSentence(context, this.id, cause),
      redact: (error) => redactPoolError(error, entrySecrets(context, row)),
      verdict: this._verdict,
      opened: (transport) => this._startOpened(transport),
      probing: (found) => {
        this._probing = found.then((verdict) => {
          if (this._removed || this._row !== row) return;
          this._verdict = verdict;
          if (this._connection && context.indexTools) context.listed(this);
        });
      },
    });
  }

  #connected(connection: Connection, tools: Tool[], hint: CacheHint, started: number): void {
    const context = this.#context;
    const recovered = this._error !== undefined;
    this._connection = connection;
    this._stopped = false;
    this._status = "ready";
    this._error = undefined;
    this._retryAt = undefined;
    this.#revive.cancel();
    this.#setTools(tools, hint);
    context.emit({
      type: "connect",
      serverId: this.id,
      ms: Date.now() - started,
      tools: tools.length,
      ...(recovered ? { recovered: true as const } : {}),
    });
    this.#log.info(`${recovered ? "back" : "connected"} with ${tools.length} tools`);
    context.changed(this);
    if (context.indexTools) context.listed(this);
    this.idle();
  }

  /**
   * The server wants a sign-in. Not a failure that grows a backoff: the first backoff only,
   * so a reconcile or a call retries soon after `mcpool login` without a redial per call.
   */
  #authRequired(message: string, now: number): void {
    this._status = "auth-required";
    this._error = message;
    this._retryAt = now + this.#context.crashBackoffMs;
    this._list.forget();
    this.#context.emit({ type: "auth-required", serverId: this.id, error: message });
    this.#log.error(message);
    this.#context.changed(this);
  }

  /**
   * A call found the session's token refused and nothing to refresh it with: the live
   * connection retires and the server says `auth-required` until someone signs in.
   */
  authLost(): void {
    const connection = this._connection;
    if (!connection || this._status === "auth-required") return;
    this._connection = undefined;
    this.#idle.stop();
    void this.#retire(connection, "reconnect", false); // its list goes (#authRequired)
    this.#authRequired(standingAuthMessage(this.#context, this.id), Date.now());
  }

  /** The transport closed. Ours to expect when we closed it; a crash otherwise. */
  #closed(connection: Connection): void {
    connection.drained?.();
    if (connection.closing || this._connection !== connection) return;
    const message = this.redact(crashMessage(this.id, connection));
    // The leader is gone; whatever it left in its group goes with it.
    void connection.transport.close().catch(() => undefined);
    this.#lost(connection, "crash", message);
  }

  /**
   * A write to the server's stdin failed: it died under the call, before its close reached
   * us. Taken as that crash now, so a read sent again goes to the next child.
   */
  brokenPipe(connection: Connection): void {
    this.#closed(connection);
  }

  /** A call on `connection` was answered: a crash now is the crash of a healthy server. */
  answered(connection: Connection): void {
    connection.answered = true;
  }

  /**
   * A call on `connection` timed out: ask the server for a ping on a small budget. A
   * server that answers anything is alive and only slow; one that answers nothing is hung,
   * and is replaced.
   */
  timedOut(connection: Connection): void {
    if (connection.closing || this._connection !== connection) return;
    const budget = this.#context.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    checkAlive(connection, budget, () => {
      if (this._connection === connection && !connection.closing) this.#hung(connection, budget);
    });
  }

  #hung(connection: Connection, budget: number): void {
    connection.unresponsive = true;
    const message = `server "${this.id}" stopped answering: a call timed out and a ping got no answer within ${budget} ms; replacing it`;
    // Not drained: nothing will come back on it. Its calls fail with `timeout` as it closes,
    // and the stop ladder reaches SIGKILL, which a stopped process cannot ignore.
    void hangUp(connection);
    this.#lost(connection, "unresponsive", this.redact(message));
  }

  /**
   * The live connection is gone without us closing it: a crash, or a hang we cut short.
   * A server that had been healthy is redialled at once and its count starts again; one
   * that died soon after starting backs off, and says `crash-loop` when it keeps doing so.
   * Either way its last-known tools stay offered, marked stale.
   */
  #lost(connection: Connection, reason: "crash" | "unresponsive", message: string): void {
    this._connection = undefined;
    this.#idle.stop();
    const now = Date.now();
    if (wasHealthy(connection, now)) {
      this._failures = 0;
      this._status = reason === "unresponsive" ? "unresponsive" : "error";
      this._error = message;
      this._retryAt = undefined;
      this._list.keepAsLastKnown();
    } else {
      this._failed(message, now, this.#context.crashBackoffMs);
    }
    if (reason === "unresponsive") {
      this.#context.emit({ type: "unresponsive", serverId: this.id, error: message });
    }
    this.#context.emit({ type: "close", serverId: this.id, reason, error: message, kept: true });
    const retryAt = this._retryAt;
    this.#log.error(`${message}${nextAttempt(retryAt)}`);
    this.#context.changed(this);
    this.#scheduleRevive();
  }

  /**
   * Brings an eager server back without waiting for a use: at once after a healthy
   * server's crash, at `retryAt` after a failure. One timer, armed only while the server
   * is down, so an idle pool never wakes for it.
   */
  #scheduleRevive(): void {
    this.#revive.cancel();
    if (this._removed || this._stopped || this.#context.revives?.(this) !== true) return;
    this.#revive.arm(Math.max(0, (this._retryAt ?? 0) - Date.now()), () => {
      if (this._connection || this._removed || this._stopped) return;
      if (this.#context.revives?.(this) !== true) return;
      this.#context.emit({ type: "restart", serverId: this.id });
      this.#log.info("restarting");
      // The timer is the backoff waited out: its clock (libuv's, monotonic, truncated to the
      // ms) may fire a ms before Date.now() reaches retryAt, and a dial asked for then would
      // be refused as too soon, with no timer left to try again. A failure
      // is recorded on the entry, logged, and schedules the next attempt.
      this.ensure({ ignoreBackoff: true }).catch(() => undefined);
    });
  }

  #setTools(tools: Tool[], hint: CacheHint): void {
    const changed = this._list.replace(this.id, tools, hint);
    if (changed) this.#context.emit(changed);
  }

  /** tools/list_changed: list again on the connect budget, one walk at a time. */
  #relist(connection: Connection): void {
    if (this.#context.indexTools) this._list.relist(...this.#walk(connection));
  }

  /**
   * A live list whose cache hint ran out is listed again before this use reads it,
   * one walk for every use meanwhile; undefined when it is fresh (nothing to wait for).
   */
  fresh(): Promise<void> | undefined {
    const connection = this._connection;
    if (!connection || !this.#context.indexTools || !this._list.expired()) return undefined;
    return this._list.refresh(...this.#walk(connection));
  }

  /** A walk of `connection`'s list (ToolList.relist's arguments). */
  #walk(connection: Connection): Parameters<ToolList["relist"]> {
    const live = (): boolean => this._connection === connection;
    return [
      connection.client,
      this._row.connectTimeoutMs ?? this.#context.connectTimeoutMs,
      live,
      (tools, hint) => {
        this.#setTools(tools, hint);
        this.#context.changed(this);
        this.#context.listed(this);
      },
      (error) => this.#log.error(`re-listing tools failed: ${error.message}`),
      (text) => this.#log.error(text),
    ];
  }

  /** Resolves once any tools/list_changed walk in progress has finished. */
  settled(): Promise<void> {
    return this._list.settled();
  }

  /**
   * Close the live connection (and any in progress). `idle` and `stop` keep the list as
   * last-known; the others drop it. Waits for calls in flight to finish (within the call
   * timeout) before the transport closes.
   */
  async close(reason: CloseReason): Promise<void> {
    this.#revive.cancel();
    const pending = this._connecting;
    // A server still starting is ended, not waited for, when it is stopped, removed or the
    // pool shuts down: its handshake may never come (a drain is promised within its bound).
    if (pending && endsAStart(reason)) await this.endStart();
    if (pending) await pending.catch(() => undefined);
    await this._probing;
    this.#revive.cancel();
    this.#idle.stop();
    const connection = this._connection;
    this._connection = undefined;
    const kept = this._closedFor(reason);
    this.#context.changed(this);
    if (connection) await this.#retire(connection, reason, kept);
    await this.#retiring.settled();
  }

  /** A person stopped the server: closed, kept, and not dialled by a reconcile (see stopped). */
  stop(): Promise<void> {
    this._stopped = true;
    return this.close("stop");
  }

  /**
   * The row left the configuration (`removed`) or the pool shuts down (`shutdown`): the
   * entry is never dialled again, and its connection closes.
   */
  remove(reason: Extract<CloseReason, "removed" | "shutdown">): Promise<void> {
    this._removed = true;
    return this.close(reason);
  }

  /** Closes the connection for a reconnect and forgets backoff and stop: the next ensure() dials. */
  async reset(): Promise<void> {
    await this.close("reconnect");
    this.resetBackoff();
    this._stopped = false;
  }

  /**
   * The row's connection fields changed. A live connection is swapped warm: it keeps
   * serving while the new row starts beside it (warm-swap.ts). With none, the next
   * ensure() dials the new row.
   */
  async replace(row: McpServerConfig): Promise<void> {
    const pending = this._connecting;
    if (pending) await pending.catch(() => undefined);
    const live = this._connection;
    if (live && swapsWarm(row)) return this.#swap(live, row);
    this.#revive.cancel();
    this.#idle.stop();
    const old = this._connection;
    this._connection = undefined;
    this._row = row;
    this._list.forget();
    this._verdict = undefined;
    this.resetBackoff();
    this._status = isEnabled(row) ? "idle" : "disabled";
    this.#context.changed(this);
    if (old) void this.#retire(old, "changed", false);
  }

  /**
   * Starts `row` while `live` serves; once it is ready, new calls go to it and `live`
   * retires (its calls in flight finish). A start that fails leaves `live` serving and
   * says why on the entry and in the log. Resolves when the swap is done either way.
   */
  async #swap(live: Connection, row: McpServerConfig): Promise<void> {
    this._row = row;
    this._verdict = undefined;
    this.#log.info(swapStartedMessage());
    const started = Date.now();
    const swappable = (): boolean =>
      !this._removed && this._row === row && this._connection === live;
    try {
      const { connection, tools, hint } = await this.#open(row);
      if (!swappable()) {
        await hangUp(connection);
        return;
      }
      learnServer(connection);
      this._verdict = connection.client.verdict;
      this._connection = undefined;
      this.#idle.stop();
      void this.#retire(live, "changed", false);
      this.resetBackoff();
      this.#connected(connection, tools, hint, started);
    } catch (cause) {
      if (!swappable()) return;
      this._error = this.redact(swapFailedMessage(this.id, (cause as Error).message));
      this.#connectFailed(this._error, started);
    }
  }

  #connectFailed(message: string, started: number): void {
    const ms = Date.now() - started;
    this.#context.emit({ type: "connect-failed", serverId: this.id, ms, error: message });
    this.#log.error(`${message}${nextAttempt(this._retryAt)}`);
    this.#context.changed(this);
  }

  /** Waits for every retiring connection to be closed. */
  retired(): Promise<void> {
    return this.#retiring.settled();
  }

  /**
   * The remote forgot the session behind `dead`: one redial, shared by every caller
   * that saw it refused. The dead client retires in the background once the calls still in
   * flight on it are done; a caller whose refusal arrives after the redial gets the new one.
   */
  redial(dead: Connection): Promise<Connection> {
    if (this._connection === dead) {
      this._connection = undefined;
      this.#log.info("lost its session; redialling");
      void this.#retire(dead, "redial", true);
    }
    return this.ensure({ ignoreBackoff: true });
  }

  /** `text` without this row's secrets: for anything built from what a server said. */
  redact(text: string): string {
    return redactSecrets(text, entrySecrets(this.#context, this._row));
  }

  /**
   * Last-known tools from a store (the tools cache), for a server registered without
   * dialling: offered as stale until the server itself answers.
   */
  adoptCached(tools: Tool[]): void {
    if (this._connection || this._list.tools.length > 0) return;
    this._list.adopt(tools);
    this.#context.changed(this);
  }

  /** A use began: whatever idle timer was armed no longer speaks for the server. */
  busy(): void {
    this.#idle.cancel();
  }

  /**
   * A use ended, or a connection opened: arm the idle timer. The reap runs on the
   * reconcile queue and only if its timer is still the current one, so a call that lands
   * between the fire and the queued close keeps the server.
   */
  idle(): void {
    const ms = this._row.idleTimeoutMs ?? this.#context.idleTimeoutMs;
    const connection = this._connection;
    if (!ms || !connection || this.#held(connection)) return;
    this.#idle.arm(ms, connection);
  }

  /** A call in flight on the connection, or a caller's hold on the server, keeps it. */
  #held(connection: Connection): boolean {
    return connection.inflight > 0 || this.#context.held?.(this.id) === true;
  }

  /** Marks the connection as ours to close, waits for its calls (bounded), then closes it once. */
  #retire(connection: Connection, reason: CloseReason, kept: boolean): Promise<void> {
    const bound = this._row.callTimeoutMs ?? this.#context.callTimeoutMs ?? DEFAULT_DRAIN_MS;
    return this.#retiring.retire(connection, bound, () =>
      this.#context.emit({ type: "close", serverId: this.id, reason, ...(kept && { kept }) }),
    );
  }
}
