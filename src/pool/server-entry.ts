/**
 * One configured server: its row, its live connection (if any), its last-known tools and
 * what went wrong. The entry owns the state machine of a server — dial, crash, backoff,
 * revive, retirement — and every transition is one of its methods; the pool reads its
 * state and never writes it. Dialling is dial.ts, the arithmetic of backoff backoff.ts,
 * the list tool-list.ts, its timers entry-timers.ts.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, type McpServerConfig } from "../config/rows.js";
import { BACKED_OFF, backoffMs, dialRefusal, failureStatus, wasHealthy } from "./backoff.js";
import {
  checkAlive,
  DEFAULT_DRAIN_MS,
  hangUp,
  Retirements,
  type Connection,
} from "./connection.js";
import { crashMessage, dial, learnServer } from "./dial.js";
import { swapFailedMessage, swapStartedMessage, swapsWarm } from "./warm-swap.js";
import { McpPoolError } from "./errors.js";
import { IdleTimer, ReviveTimer } from "./entry-timers.js";
import { redactPoolError, redactSecrets } from "./secrets.js";
import { ToolList } from "./tool-list.js";
import {
  authSentence,
  DEFAULT_PING_TIMEOUT_MS,
  entrySecrets,
  standingAuthMessage,
  type EntryContext,
} from "./entry-context.js";
import type { CloseReason, ServerStatus } from "./types.js";

export class ServerEntry {
  #row: McpServerConfig;
  #status: ServerStatus;
  #error: string | undefined;
  #retryAt: number | undefined;
  #failures = 0;
  #connection: Connection | undefined;
  readonly #list = new ToolList();
  #removed = false;
  #stopped = false;
  #connecting: Promise<Connection> | undefined;
  readonly #idle = new IdleTimer();
  readonly #retiring = new Retirements();
  readonly #revive = new ReviveTimer();
  readonly #context: EntryContext;

  constructor(row: McpServerConfig, context: EntryContext) {
    this.#row = row;
    this.#context = context;
    this.#status = isEnabled(row) ? "idle" : "disabled";
  }

  get id(): string {
    return this.#row.id;
  }
  get row(): McpServerConfig {
    return this.#row;
  }
  get status(): ServerStatus {
    return this.#status;
  }
  get error(): string | undefined {
    return this.#error;
  }
  get retryAt(): number | undefined {
    return this.#retryAt;
  }
  get failures(): number {
    return this.#failures;
  }
  get connection(): Connection | undefined {
    return this.#connection;
  }
  /** The last list the server gave; empty after a crash. */
  get tools(): Tool[] {
    return this.#list.tools;
  }
  get fingerprint(): string | undefined {
    return this.#list.fingerprint;
  }
  /** `tools` is a last-known list, not a live one. */
  get stale(): boolean {
    return this.#list.stale;
  }
  /** Removed from the configuration: never dialled again. */
  get removed(): boolean {
    return this.#removed;
  }
  /** Stopped by a person: reconcile steps over it until a use or reconnect dials it. */
  get stopped(): boolean {
    return this.#stopped;
  }
  get connecting(): boolean {
    return this.#connecting !== undefined;
  }

  /** The live connection, dialling one if there is none and nothing forbids it. */
  ensure(options: { ignoreBackoff?: boolean } = {}): Promise<Connection> {
    if (this.#connection) return Promise.resolve(this.#connection);
    if (this.#connecting) return this.#connecting;
    const refusal = dialRefusal(this, options.ignoreBackoff === true, () =>
      standingAuthMessage(this.#context, this.id),
    );
    if (refusal) return Promise.reject(refusal);
    const connecting = this.#dial().finally(() => {
      if (this.#connecting === connecting) this.#connecting = undefined;
    });
    this.#connecting = connecting;
    return connecting;
  }

  async #dial(): Promise<Connection> {
    const context = this.#context;
    const row = this.#row;
    const started = Date.now();
    this.#status = "connecting";
    context.changed(this);
    const current = (): boolean => !this.#removed && this.#row === row;
    try {
      const { connection, tools } = await this.#open(row);
      if (!current()) {
        connection.closing = true;
        await connection.transport.close().catch(() => undefined);
        throw new McpPoolError("closed", `server "${row.id}" was reconfigured while connecting`);
      }
      learnServer(connection);
      this.#connected(connection, tools, started);
      return connection;
    } catch (cause) {
      const error = cause as McpPoolError;
      if (current() && error.code === "auth-required") {
        this.#authRequired(error.message, Date.now());
      } else if (current()) {
        this.#failed(error.message, Date.now());
        this.#connectFailed(error.message, started);
        this.#scheduleRevive();
      }
      throw error;
    }
  }

  /** Starts a child (or session) for `row`, its events bound to the connection it makes. */
  #open(row: McpServerConfig): ReturnType<typeof dial> {
    const context = this.#context;
    return dial(row, context, row.connectTimeoutMs ?? context.connectTimeoutMs, {
      listChanged: (connection) => this.#relist(connection),
      closed: (connection) => this.#closed(connection),
      authCause: (cause) => authSentence(context, this.id, cause),
      redact: (error) => redactPoolError(error, entrySecrets(context, row)),
    });
  }

  #connected(connection: Connection, tools: Tool[], started: number): void {
    const context = this.#context;
    const recovered = this.#error !== undefined;
    this.#connection = connection;
    this.#stopped = false;
    this.#status = "ready";
    this.#error = undefined;
    this.#retryAt = undefined;
    this.#revive.cancel();
    this.#setTools(tools);
    context.emit({
      type: "connect",
      serverId: this.id,
      ms: Date.now() - started,
      tools: tools.length,
      ...(recovered ? { recovered: true } : {}),
    });
    context.log.info?.(
      `mcpool: ${this.id} ${recovered ? "is back" : "connected"} with ${tools.length} tools`,
    );
    context.changed(this);
    if (context.indexTools) context.listed(this);
    this.idle();
  }

  /**
   * The server wants a sign-in. Not a failure that grows a backoff: the first backoff only,
   * so a reconcile or a call retries soon after `mcpool login` without a redial per call.
   */
  #authRequired(message: string, now: number): void {
    this.#status = "auth-required";
    this.#error = message;
    this.#retryAt = now + this.#context.crashBackoffMs;
    this.#list.forget();
    this.#context.emit({ type: "auth-required", serverId: this.id, error: message });
    this.#context.log.error?.(`mcpool: ${message}`);
    this.#context.changed(this);
  }

  /**
   * A call found the session's token refused and nothing to refresh it with: the live
   * connection retires and the server says `auth-required` until someone signs in.
   */
  authLost(): void {
    const connection = this.#connection;
    if (!connection || this.#status === "auth-required") return;
    this.#connection = undefined;
    this.busy();
    void this.#retire(connection, "reconnect");
    this.#authRequired(standingAuthMessage(this.#context, this.id), Date.now());
  }

  #failed(message: string, now: number): void {
    this.#failures += 1;
    this.#status = failureStatus(this.#failures);
    this.#error = message;
    this.#retryAt = now + backoffMs(this.#context.crashBackoffMs, this.#failures);
    // The last-known list stays offered (F1): a call finds out about the backoff itself.
    this.#list.keepAsLastKnown();
  }

  /** The transport closed. Ours to expect when we closed it; a crash otherwise. */
  #closed(connection: Connection): void {
    connection.drained?.();
    if (connection.closing || this.#connection !== connection) return;
    const message = this.redact(crashMessage(this.id, connection));
    // The leader is gone; whatever it left in its group goes with it.
    void connection.transport.close().catch(() => undefined);
    this.#lost(connection, "crash", message);
  }

  /**
   * A write to the server's stdin failed: it died under the call, before its close reached
   * us. Taken as that crash now, so a read sent again (F2) goes to the next child.
   */
  brokenPipe(connection: Connection): void {
    this.#closed(connection);
  }

  /** A call on `connection` was answered: a crash now is the crash of a healthy server (F1). */
  answered(connection: Connection): void {
    connection.answered = true;
  }

  /**
   * A call on `connection` timed out: ask the server for a ping on a small budget (F3). A
   * server that answers anything is alive and only slow; one that answers nothing is hung,
   * and is replaced.
   */
  timedOut(connection: Connection): void {
    if (connection.closing || this.#connection !== connection) return;
    const budget = this.#context.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    checkAlive(connection, budget, () => {
      if (this.#connection === connection && !connection.closing) this.#hung(connection, budget);
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
   * Either way its last-known tools stay offered, marked stale (F1).
   */
  #lost(connection: Connection, reason: "crash" | "unresponsive", message: string): void {
    this.#connection = undefined;
    this.busy();
    const now = Date.now();
    if (wasHealthy(connection, now)) {
      this.#failures = 0;
      this.#status = reason === "unresponsive" ? "unresponsive" : "error";
      this.#error = message;
      this.#retryAt = undefined;
      this.#list.keepAsLastKnown();
    } else {
      this.#failed(message, now);
    }
    if (reason === "unresponsive") {
      this.#context.emit({ type: "unresponsive", serverId: this.id, error: message });
    }
    this.#context.emit({ type: "close", serverId: this.id, reason, error: message });
    const retryAt = this.#retryAt;
    this.#context.log.error?.(
      `mcpool: ${message}${retryAt === undefined ? "" : `; next attempt at ${new Date(retryAt).toISOString()}`}`,
    );
    this.#context.changed(this);
    this.#scheduleRevive();
  }

  /**
   * Brings an eager server back without waiting for a use (F1): at once after a healthy
   * server's crash, at `retryAt` after a failure. One timer, armed only while the server
   * is down, so an idle pool never wakes for it.
   */
  #scheduleRevive(): void {
    this.#revive.cancel();
    if (this.#removed || this.#stopped || this.#context.revives?.(this) !== true) return;
    this.#revive.arm(Math.max(0, (this.#retryAt ?? 0) - Date.now()), () => {
      if (this.#connection || this.#removed || this.#stopped) return;
      if (this.#context.revives?.(this) !== true) return;
      this.#context.emit({ type: "restart", serverId: this.id });
      this.#context.log.info?.(`mcpool: ${this.id}: restarting`);
      // A failure is recorded on the entry, logged, and schedules the next attempt.
      this.ensure().catch(() => undefined);
    });
  }

  #setTools(tools: Tool[]): void {
    const changed = this.#list.replace(this.id, tools);
    if (changed) this.#context.emit(changed);
  }

  /** tools/list_changed: list again on the connect budget, one walk at a time. */
  #relist(connection: Connection): void {
    if (!this.#context.indexTools) return;
    const live = (): boolean => this.#connection === connection;
    this.#list.relist(
      connection.client,
      this.#row.connectTimeoutMs ?? this.#context.connectTimeoutMs,
      live,
      (tools) => {
        this.#setTools(tools);
        this.#context.changed(this);
        this.#context.listed(this);
      },
      (error) =>
        this.#context.log.error?.(`mcpool: ${this.id}: re-listing tools failed: ${error.message}`),
    );
  }

  /** Resolves once any tools/list_changed walk in progress has finished. */
  settled(): Promise<void> {
    return this.#list.settled();
  }

  /**
   * Close the live connection (and any in progress). `idle` and `stop` keep the list as
   * last-known; the others drop it. Waits for calls in flight to finish (within the call
   * timeout) before the transport closes.
   */
  async close(reason: CloseReason): Promise<void> {
    this.#revive.cancel();
    const pending = this.#connecting;
    if (pending) await pending.catch(() => undefined);
    this.#revive.cancel();
    this.busy();
    const connection = this.#connection;
    this.#connection = undefined;
    if (reason === "idle" || reason === "stop") {
      this.#status = isEnabled(this.#row) ? "idle" : "disabled";
      this.#error = undefined;
      this.#retryAt = undefined;
      this.#failures = 0;
      this.#list.keepAsLastKnown();
    } else if (reason !== "redial" && reason !== "reconnect") {
      this.#status = isEnabled(this.#row) && !this.#removed ? "idle" : "disabled";
      this.#list.forget();
    }
    this.#context.changed(this);
    if (connection) await this.#retire(connection, reason);
    await this.#retiring.settled();
  }

  /** A person stopped the server: closed, kept, and not dialled by a reconcile (see stopped). */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.close("stop");
  }

  /**
   * The row left the configuration (`removed`) or the pool shuts down (`shutdown`): the
   * entry is never dialled again, and its connection closes.
   */
  remove(reason: Extract<CloseReason, "removed" | "shutdown">): Promise<void> {
    this.#removed = true;
    return this.close(reason);
  }

  /** Closes the connection for a reconnect and forgets backoff and stop: the next ensure() dials. */
  async reset(): Promise<void> {
    await this.close("reconnect");
    this.resetBackoff();
    this.#stopped = false;
  }

  /** New row with the same connection fields: take it without touching the child. */
  update(row: McpServerConfig): void {
    this.#row = row;
    if (!isEnabled(row) && this.#status !== "disabled" && !this.#connection) {
      this.#status = "disabled";
    }
    if (isEnabled(row) && this.#status === "disabled") this.#status = "idle";
  }

  /**
   * The row's connection fields changed (B7). A live connection is swapped warm: it keeps
   * serving while the new row starts beside it (warm-swap.ts). With none, the next
   * ensure() dials the new row.
   */
  async replace(row: McpServerConfig): Promise<void> {
    const pending = this.#connecting;
    if (pending) await pending.catch(() => undefined);
    const live = this.#connection;
    if (live && swapsWarm(row)) return this.#swap(live, row);
    this.#revive.cancel();
    this.busy();
    const old = this.#connection;
    this.#connection = undefined;
    this.#row = row;
    this.#list.forget();
    this.resetBackoff();
    this.#status = isEnabled(row) ? "idle" : "disabled";
    this.#context.changed(this);
    if (old) void this.#retire(old, "changed");
  }

  /**
   * Starts `row` while `live` serves; once it is ready, new calls go to it and `live`
   * retires (its calls in flight finish). A start that fails leaves `live` serving and
   * says why on the entry and in the log. Resolves when the swap is done either way.
   */
  async #swap(live: Connection, row: McpServerConfig): Promise<void> {
    this.#row = row;
    this.#context.log.info?.(swapStartedMessage(this.id));
    const started = Date.now();
    const swappable = (): boolean =>
      !this.#removed && this.#row === row && this.#connection === live;
    try {
      const { connection, tools } = await this.#open(row);
      if (!swappable()) {
        await hangUp(connection);
        return;
      }
      learnServer(connection);
      this.#connection = undefined;
      this.busy();
      void this.#retire(live, "changed");
      this.resetBackoff();
      this.#connected(connection, tools, started);
    } catch (cause) {
      if (!swappable()) return;
      this.#error = this.redact(swapFailedMessage(this.id, (cause as Error).message));
      this.#connectFailed(this.#error, started);
    }
  }

  #connectFailed(message: string, started: number): void {
    const ms = Date.now() - started;
    this.#context.emit({ type: "connect-failed", serverId: this.id, ms, error: message });
    this.#context.log.error?.(`mcpool: ${message}`);
    this.#context.changed(this);
  }

  /** Waits for every retiring connection to be closed. */
  retired(): Promise<void> {
    return this.#retiring.settled();
  }

  /**
   * The remote forgot the session behind `dead` (B6): one redial, shared by every caller
   * that saw it refused. The dead client retires in the background once the calls still in
   * flight on it are done; a caller whose refusal arrives after the redial gets the new one.
   */
  redial(dead: Connection): Promise<Connection> {
    if (this.#connection === dead) {
      this.#connection = undefined;
      this.#context.log.info?.(`mcpool: ${this.id} lost its session; redialling`);
      void this.#retire(dead, "redial");
    }
    return this.ensure({ ignoreBackoff: true });
  }

  /** `text` without this row's secrets (E1): for anything built from what a server said. */
  redact(text: string): string {
    return redactSecrets(text, entrySecrets(this.#context, this.#row));
  }

  /**
   * Last-known tools from a store (the tools cache), for a server registered without
   * dialling: offered as stale until the server itself answers.
   */
  adoptCached(tools: Tool[]): void {
    if (this.#connection || this.#list.tools.length > 0) return;
    this.#list.adopt(tools);
    this.#context.changed(this);
  }

  /** A use began: whatever idle timer was armed no longer speaks for the server. */
  busy(): void {
    this.#idle.cancel();
  }

  /**
   * A use ended, or a connection opened: arm the idle timer. The reap runs on the
   * reconcile queue and only if its timer is still the current one, so a call that lands
   * between the fire and the queued close keeps the server (B1).
   */
  idle(): void {
    const ms = this.#row.idleTimeoutMs ?? this.#context.idleTimeoutMs;
    const connection = this.#connection;
    if (!ms || !connection) return;
    const held = (): boolean => connection.inflight > 0 || this.#context.held?.(this.id) === true;
    if (held()) return;
    this.#idle.arm(
      ms,
      (work) => this.#context.schedule(work),
      () => this.#connection === connection && !held(),
      () => this.close("idle"),
    );
  }

  /** Forget the backoff, so the next ensure() dials at once. */
  resetBackoff(): void {
    this.#retryAt = undefined;
    this.#failures = 0;
    if (BACKED_OFF.has(this.#status)) this.#status = "idle";
    this.#error = undefined;
  }

  /** Marks the connection as ours to close, waits for its calls (bounded), then closes it once. */
  #retire(connection: Connection, reason: CloseReason): Promise<void> {
    const bound = this.#row.callTimeoutMs ?? this.#context.callTimeoutMs ?? DEFAULT_DRAIN_MS;
    return this.#retiring.retire(connection, bound, () =>
      this.#context.emit({ type: "close", serverId: this.id, reason }),
    );
  }
}
