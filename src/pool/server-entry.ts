/**
 * One configured server: its row, its live connection (if any), its last-known tools and
 * what went wrong. The entry owns dialling, crash detection, backoff and retirement of a
 * connection; the pool owns naming, scope and calls.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, type McpServerConfig } from "../config/rows.js";
import { McpPoolError } from "./errors.js";
import { toolsFingerprint } from "./fingerprint.js";
import { listAllTools } from "./list-tools.js";
import { authRequiredMessage, isAuthRequired } from "./oauth.js";
import { redactPoolError, redactSecrets, secretValues } from "./secrets.js";
import { processOf, type CreateTransport, type TransportContext } from "./transport.js";
import {
  progressBeforeResponses,
  type CreateMessageResult,
  type ElicitParams,
  type ElicitResult,
  type SampleParams,
} from "./routing.js";
import type { CloseReason, PoolEvent, PoolLog, ServerNotification, ServerStatus } from "./types.js";

/**
 * A connection that answered a call, or stayed up this long, was healthy (F1): its crash
 * is redialled at once and starts a new count, however often that happened before.
 */
export const HEALTHY_AFTER_MS = 30_000;
/**
 * How long a server that let a call time out gets to answer a `ping` (F3) before it is
 * taken for hung and replaced. A slow tool does not stop a live server from answering one.
 */
export const DEFAULT_PING_TIMEOUT_MS = 5_000;
/** Failures in a row after which status says `crash-loop` instead of `error`. */
export const CRASH_LOOP_AFTER = 3;
/** Ceiling of the exponential backoff, ms. */
export const MAX_BACKOFF_MS = 5 * 60_000;

export interface EntryContext {
  clientInfo: { name: string; version: string };
  /** The OAuth tokens last handed to this server's connections, for redaction (E1). */
  oauthSecrets?(serverId: string): readonly string[];
  /**
   * The sentence of an auth-required refusal (E5) when `cause` means the server wants a
   * sign-in, or, without a cause, for the refusal the server stands at; undefined when the
   * cause means something else. Default: isAuthRequired() and authRequiredMessage().
   */
  authRequired?(serverId: string, cause?: unknown): string | undefined;
  capabilities: ClientCapabilities;
  createTransport: CreateTransport;
  transportContext: TransportContext;
  /** Pool-wide connect budget, ms; the row's outranks it. Undefined: the SDK's 60 s per request. */
  connectTimeoutMs: number | undefined;
  /** Pool-wide call timeout, ms; used to bound how long a retiring connection may drain. */
  callTimeoutMs: number | undefined;
  crashBackoffMs: number;
  log: PoolLog;
  emit(event: PoolEvent): void;
  notify(serverId: string, notification: ServerNotification): void;
  /** The entry's tools or status moved: reindex. */
  changed(entry: ServerEntry): void;
  /** Pool-wide idle timeout, ms; the row's outranks it, and 0 or undefined never reaps. */
  idleTimeoutMs: number | undefined;
  /** false: connect without listing tools (B5), for a consumer proxying the protocol. */
  indexTools: boolean;
  /** Runs work on the reconcile queue, so a reap never interleaves with a reconcile. */
  schedule(work: () => Promise<void>): Promise<void>;
  /** The server gave a list: the pool decides whether its tools cache needs it. */
  listed(entry: ServerEntry): void;
  /** Answers the server's elicitation/create (C14); installed when `capabilities` declare it. */
  elicit?(serverId: string, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult>;
  /** Answers the server's sampling/createMessage (C14); installed when `capabilities` declare it. */
  sample?(
    serverId: string,
    params: SampleParams,
    signal: AbortSignal,
  ): Promise<CreateMessageResult>;
  /** Whether something other than a call holds the server (resource subscriptions): no idle reap. */
  held?(serverId: string): boolean;
  /** ms a suspect server gets to answer a ping (F3). Default {@link DEFAULT_PING_TIMEOUT_MS}. */
  pingTimeoutMs?: number;
  /**
   * Whether a server that went down comes back without waiting for a use (F1): eager,
   * enabled rows of an open pool. Lazy rows come back on their next use.
   */
  revives?(entry: ServerEntry): boolean;
}

export interface Connection {
  client: Client;
  transport: Transport;
  pid: number | undefined;
  startedAt: number;
  instructions: string | undefined;
  capabilities: Record<string, unknown> | undefined;
  /** Calls in flight on this connection; a retiring connection waits for zero. */
  inflight: number;
  /** Set when we are closing it, so its close is not mistaken for a crash. */
  closing: boolean;
  /** It answered a request: a crash now is the crash of a healthy server (F1). */
  answered: boolean;
  /** A call timed out and a ping went unanswered: we are replacing it (F3). */
  unresponsive: boolean;
  /** The ping in progress after a call timed out, if any: one at a time. */
  pinging?: Promise<void>;
  drained?: () => void;
}

export class ServerEntry {
  row: McpServerConfig;
  status: ServerStatus;
  error: string | undefined;
  retryAt: number | undefined;
  failures = 0;
  connection: Connection | undefined;
  /** The last list the server gave; empty after a crash. */
  tools: Tool[] = [];
  fingerprint: string | undefined;
  /** `tools` is a last-known list, not a live one. */
  stale = false;
  /** Removed from the configuration: never dialled again. */
  removed = false;
  /** Stopped by a person: reconcile steps over it until a use or reconnect dials it. */
  stopped = false;

  #connecting: Promise<Connection> | undefined;
  /** The idle timer armed after the last use; a reap checks it is still this one. */
  #idleTimer: NodeJS.Timeout | undefined;
  #retiring = new Set<Promise<void>>();
  #relisting: Promise<void> | undefined;
  #relistAgain = false;
  /** The one-shot timer that brings a downed eager server back (F1); never a poll. */
  #reviveTimer: NodeJS.Timeout | undefined;
  readonly #context: EntryContext;

  constructor(row: McpServerConfig, context: EntryContext) {
    this.row = row;
    this.#context = context;
    this.status = isEnabled(row) ? "idle" : "disabled";
  }

  get id(): string {
    return this.row.id;
  }

  /** The live connection, dialling one if there is none and nothing forbids it. */
  ensure(options: { ignoreBackoff?: boolean } = {}): Promise<Connection> {
    if (this.connection) return Promise.resolve(this.connection);
    if (this.#connecting) return this.#connecting;
    if (this.removed) {
      return Promise.reject(
        new McpPoolError("unknown-server", `unknown server "${this.id}"`, { serverId: this.id }),
      );
    }
    if (!isEnabled(this.row)) {
      return Promise.reject(
        new McpPoolError("disabled", `server "${this.id}" is disabled`, { serverId: this.id }),
      );
    }
    if (!options.ignoreBackoff && this.retryAt !== undefined && this.retryAt > Date.now()) {
      // Only a sign-in helps a server that asked for one: say that, not "failed recently".
      if (this.status === "auth-required") {
        return Promise.reject(
          new McpPoolError("auth-required", this.#authMessage(), {
            serverId: this.id,
            retryAt: this.retryAt,
          }),
        );
      }
      return Promise.reject(
        new McpPoolError(
          "backoff",
          `server "${this.id}" failed recently and will not be dialled before ${new Date(this.retryAt).toISOString()}: ${this.error ?? "unknown error"}`,
          { serverId: this.id, retryAt: this.retryAt },
        ),
      );
    }
    const connecting = this.#dial().finally(() => {
      if (this.#connecting === connecting) this.#connecting = undefined;
    });
    this.#connecting = connecting;
    return connecting;
  }

  get connecting(): boolean {
    return this.#connecting !== undefined;
  }

  async #dial(): Promise<Connection> {
    const context = this.#context;
    const row = this.row;
    const started = Date.now();
    this.status = "connecting";
    context.changed(this);
    const budget = row.connectTimeoutMs ?? context.connectTimeoutMs;
    let transport: Transport | undefined;
    let connection: Connection | undefined;
    try {
      transport = await context.createTransport(row, context.transportContext);
      const client = new Client(context.clientInfo, { capabilities: context.capabilities });
      connection = {
        client,
        transport,
        pid: undefined,
        startedAt: started,
        instructions: undefined,
        capabilities: undefined,
        inflight: 0,
        closing: false,
        answered: false,
        unresponsive: false,
      };
      const current = connection;
      client.fallbackNotificationHandler = async (notification) => {
        context.notify(row.id, notification as ServerNotification);
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
        context.notify(row.id, notification as ServerNotification);
        this.#relist(current);
      });
      const elicit = context.elicit;
      if (elicit && context.capabilities.elicitation) {
        client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
          elicit(row.id, request.params, extra.signal),
        );
      }
      const sample = context.sample;
      if (sample && context.capabilities.sampling) {
        client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
          sample(row.id, request.params, extra.signal),
        );
      }
      client.onclose = () => this.#closed(current);
      const deadline = budget === undefined ? undefined : started + budget;
      await client.connect(transport, budget === undefined ? {} : { timeout: budget });
      progressBeforeResponses(transport);
      const remaining = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
      const tools = context.indexTools
        ? await listAllTools(client, remaining === undefined ? {} : { timeout: remaining })
        : [];
      if (this.removed || this.row !== row)
        throw new McpPoolError("closed", `server "${row.id}" was reconfigured while connecting`);
      connection.pid = processOf(transport)?.pid;
      connection.startedAt = Date.now();
      connection.instructions = client.getInstructions();
      connection.capabilities = client.getServerCapabilities() as
        Record<string, unknown> | undefined;
      const recovered = this.error !== undefined;
      this.connection = connection;
      this.stopped = false;
      this.status = "ready";
      this.error = undefined;
      this.retryAt = undefined;
      this.#cancelRevive();
      this.#setTools(tools);
      context.emit({
        type: "connect",
        serverId: row.id,
        ms: Date.now() - started,
        tools: tools.length,
        ...(recovered ? { recovered: true } : {}),
      });
      context.log.info?.(
        `mcpool: ${row.id} ${recovered ? "is back" : "connected"} with ${tools.length} tools`,
      );
      context.changed(this);
      if (context.indexTools) context.listed(this);
      this.idle();
      return connection;
    } catch (cause) {
      if (connection) connection.closing = true;
      const stderr = transport ? processOf(transport)?.stderr.text() : undefined;
      const exit = transport ? processOf(transport)?.exit : undefined;
      await transport?.close().catch(() => undefined);
      const error = redactPoolError(
        connectError(row.id, cause, budget, stderr, exit, this.#authCause(cause)),
        this.#secrets(row),
      );
      if (!this.removed && this.row === row && error.code === "auth-required") {
        this.#authRequired(error.message, Date.now());
      } else if (!this.removed && this.row === row) {
        this.#failed(error.message, Date.now());
        context.emit({
          type: "connect-failed",
          serverId: row.id,
          ms: Date.now() - started,
          error: error.message,
        });
        context.log.error?.(`mcpool: ${error.message}`);
        context.changed(this);
        this.#scheduleRevive();
      }
      throw error;
    }
  }

  /**
   * The server wants a sign-in. Not a failure that grows a backoff: the first backoff only,
   * so a reconcile or a call retries soon after `mcpool login` without a redial per call.
   */
  #authRequired(message: string, now: number): void {
    this.status = "auth-required";
    this.error = message;
    this.retryAt = now + this.#context.crashBackoffMs;
    this.tools = [];
    this.fingerprint = undefined;
    this.stale = false;
    this.#context.emit({ type: "auth-required", serverId: this.id, error: message });
    this.#context.log.error?.(`mcpool: ${message}`);
    this.#context.changed(this);
  }

  /**
   * A call found the session's token refused and nothing to refresh it with: the live
   * connection retires and the server says `auth-required` until someone signs in.
   */
  authLost(): void {
    const connection = this.connection;
    if (!connection || this.status === "auth-required") return;
    this.connection = undefined;
    this.busy();
    void this.#retire(connection, "reconnect");
    this.#authRequired(this.#authMessage(), Date.now());
  }

  /** The sentence of the refusal the server stands at (see EntryContext.authRequired). */
  #authMessage(): string {
    return this.#context.authRequired?.(this.id) ?? authRequiredMessage(this.id);
  }

  /** The auth-required sentence when `cause` means a sign-in is wanted; else undefined. */
  #authCause(cause: unknown): string | undefined {
    const hook = this.#context.authRequired;
    if (hook) return hook(this.id, cause);
    return isAuthRequired(cause) ? authRequiredMessage(this.id) : undefined;
  }

  #failed(message: string, now: number): void {
    this.failures += 1;
    const backoff = Math.min(
      this.#context.crashBackoffMs * 2 ** (this.failures - 1),
      MAX_BACKOFF_MS,
    );
    this.status = this.failures >= CRASH_LOOP_AFTER ? "crash-loop" : "error";
    this.error = message;
    this.retryAt = now + backoff;
    // The last-known list stays offered (F1): a call finds out about the backoff itself.
    this.stale = this.tools.length > 0;
  }

  /** The transport closed. Ours to expect when we closed it; a crash otherwise. */
  #closed(connection: Connection): void {
    connection.drained?.();
    if (connection.closing || this.connection !== connection) return;
    const child = processOf(connection.transport);
    const exit = child?.exit;
    const how = exit ? describeExit(exit) : "closed the connection";
    const stderr = child?.stderr.text();
    const message = this.redact(
      `server "${this.id}" ${how} unexpectedly${stderr ? `; stderr:\n${stderr}` : ""}`,
    );
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

  /**
   * A call on `connection` timed out: ask the server for a ping on a small budget (F3). A
   * server that answers anything is alive and only slow; one that answers nothing is hung,
   * and is replaced.
   */
  timedOut(connection: Connection): void {
    if (connection.pinging || connection.closing || this.connection !== connection) return;
    const budget = this.#context.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    connection.pinging = connection.client
      .ping({ timeout: budget })
      .then(
        () => undefined,
        (error: unknown) => {
          const silent = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
          if (silent && this.connection === connection && !connection.closing) {
            this.#hung(connection, budget);
          }
        },
      )
      .finally(() => (connection.pinging = undefined));
  }

  #hung(connection: Connection, budget: number): void {
    connection.unresponsive = true;
    connection.closing = true;
    const message = `server "${this.id}" stopped answering: a call timed out and a ping got no answer within ${budget} ms; replacing it`;
    // Not drained: nothing will come back on it. Its calls fail with `timeout` as it closes,
    // and the stop ladder reaches SIGKILL, which a stopped process cannot ignore.
    void (async () => {
      await connection.client.close().catch(() => undefined);
      await connection.transport.close().catch(() => undefined);
    })();
    this.#lost(connection, "unresponsive", this.redact(message));
  }

  /**
   * The live connection is gone without us closing it: a crash, or a hang we cut short.
   * A server that had been healthy is redialled at once and its count starts again; one
   * that died soon after starting backs off, and says `crash-loop` when it keeps doing so.
   * Either way its last-known tools stay offered, marked stale (F1).
   */
  #lost(connection: Connection, reason: "crash" | "unresponsive", message: string): void {
    this.connection = undefined;
    this.busy();
    const now = Date.now();
    const healthy = connection.answered || now - connection.startedAt >= HEALTHY_AFTER_MS;
    if (healthy) {
      this.failures = 0;
      this.status = reason === "unresponsive" ? "unresponsive" : "error";
      this.error = message;
      this.retryAt = undefined;
      this.stale = this.tools.length > 0;
    } else {
      this.#failed(message, now);
    }
    if (reason === "unresponsive") {
      this.#context.emit({ type: "unresponsive", serverId: this.id, error: message });
    }
    this.#context.emit({ type: "close", serverId: this.id, reason, error: message });
    this.#context.log.error?.(
      `mcpool: ${message}${this.retryAt === undefined ? "" : `; next attempt at ${new Date(this.retryAt).toISOString()}`}`,
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
    this.#cancelRevive();
    if (this.removed || this.stopped || this.#context.revives?.(this) !== true) return;
    const delay = Math.max(0, (this.retryAt ?? 0) - Date.now());
    const timer = setTimeout(() => {
      if (this.#reviveTimer !== timer) return;
      this.#reviveTimer = undefined;
      if (this.connection || this.removed || this.stopped) return;
      if (this.#context.revives?.(this) !== true) return;
      this.#context.emit({ type: "restart", serverId: this.id });
      this.#context.log.info?.(`mcpool: ${this.id}: restarting`);
      // A failure is recorded on the entry, logged, and schedules the next attempt.
      this.ensure().catch(() => undefined);
    }, delay);
    timer.unref();
    this.#reviveTimer = timer;
  }

  #cancelRevive(): void {
    if (this.#reviveTimer) clearTimeout(this.#reviveTimer);
    this.#reviveTimer = undefined;
  }

  #setTools(tools: Tool[]): void {
    const before = this.fingerprint;
    const hadList = before !== undefined;
    const previous = this.tools;
    this.tools = tools;
    this.stale = false;
    this.fingerprint = toolsFingerprint(tools);
    if (hadList && before !== this.fingerprint) {
      const was = new Set(previous.map((t) => t.name));
      const now = new Set(tools.map((t) => t.name));
      this.#context.emit({
        type: "tools-changed",
        serverId: this.id,
        before,
        after: this.fingerprint,
        tools: tools.length,
        added: tools.filter((t) => !was.has(t.name)).map((t) => t.name),
        removed: previous.filter((t) => !now.has(t.name)).map((t) => t.name),
      });
    }
  }

  /** tools/list_changed: list again on the connect budget, one walk at a time. */
  #relist(connection: Connection): void {
    if (!this.#context.indexTools) return;
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    const budget = this.row.connectTimeoutMs ?? this.#context.connectTimeoutMs;
    this.#relisting = (async () => {
      do {
        this.#relistAgain = false;
        try {
          const tools = await listAllTools(
            connection.client,
            budget === undefined ? {} : { timeout: budget },
          );
          if (this.connection !== connection) return;
          this.#setTools(tools);
          this.#context.changed(this);
          this.#context.listed(this);
        } catch (error) {
          // A walk that fails leaves the list as it was.
          this.#context.log.error?.(
            `mcpool: ${this.id}: re-listing tools failed: ${(error as Error).message}`,
          );
        }
      } while (this.#relistAgain && this.connection === connection);
    })().finally(() => (this.#relisting = undefined));
  }

  /** Resolves once any tools/list_changed walk in progress has finished. */
  async settled(): Promise<void> {
    while (this.#relisting) await this.#relisting;
  }

  /**
   * Close the live connection (and any in progress). `idle` and `stop` keep the list as
   * last-known; the others drop it. Waits for calls in flight to finish (within the call
   * timeout) before the transport closes.
   */
  async close(reason: CloseReason): Promise<void> {
    this.#cancelRevive();
    const pending = this.#connecting;
    if (pending) await pending.catch(() => undefined);
    this.#cancelRevive();
    this.busy();
    const connection = this.connection;
    this.connection = undefined;
    if (reason === "idle" || reason === "stop") {
      this.status = isEnabled(this.row) ? "idle" : "disabled";
      this.error = undefined;
      this.retryAt = undefined;
      this.failures = 0;
      this.stale = this.tools.length > 0;
    } else if (reason !== "redial" && reason !== "reconnect") {
      this.status = isEnabled(this.row) && !this.removed ? "idle" : "disabled";
      this.tools = [];
      this.fingerprint = undefined;
      this.stale = false;
    }
    this.#context.changed(this);
    if (connection) await this.#retire(connection, reason);
    await Promise.all(this.#retiring);
  }

  /** New row with the same connection fields: take it without touching the child. */
  update(row: McpServerConfig): void {
    this.row = row;
    if (!isEnabled(row) && this.status !== "disabled" && !this.connection) this.status = "disabled";
    if (isEnabled(row) && this.status === "disabled") this.status = "idle";
  }

  /**
   * The row's connection fields changed (B7): the old connection drains its calls and
   * closes in the background while the next ensure() dials the new row.
   */
  async replace(row: McpServerConfig): Promise<void> {
    const pending = this.#connecting;
    if (pending) await pending.catch(() => undefined);
    this.#cancelRevive();
    this.busy();
    const old = this.connection;
    this.connection = undefined;
    this.row = row;
    this.tools = [];
    this.fingerprint = undefined;
    this.stale = false;
    this.resetBackoff();
    this.status = isEnabled(row) ? "idle" : "disabled";
    this.#context.changed(this);
    if (old) void this.#retire(old, "changed");
  }

  /** Waits for every retiring connection to be closed. */
  async retired(): Promise<void> {
    await Promise.all(this.#retiring);
  }

  /**
   * The remote forgot the session behind `dead` (B6): one redial, shared by every caller
   * that saw it refused. The dead client retires in the background once the calls still in
   * flight on it are done; a caller whose refusal arrives after the redial gets the new one.
   */
  redial(dead: Connection): Promise<Connection> {
    if (this.connection === dead) {
      this.connection = undefined;
      this.#context.log.info?.(`mcpool: ${this.id} lost its session; redialling`);
      void this.#retire(dead, "redial");
    }
    return this.ensure({ ignoreBackoff: true });
  }

  /** `text` without this row's secrets (E1): for anything built from what a server said. */
  redact(text: string): string {
    return redactSecrets(text, this.#secrets(this.row));
  }

  #secrets(row: McpServerConfig): string[] {
    const secrets = secretValues(row, this.#context.transportContext.env ?? process.env);
    // The OAuth tokens its connections were given: a remote may quote them back too.
    const tokens = this.#context.oauthSecrets?.(row.id) ?? [];
    return tokens.length === 0 ? secrets : [...tokens, ...secrets];
  }

  /**
   * Last-known tools from a store (the tools cache), for a server registered without
   * dialling: offered as stale until the server itself answers.
   */
  adoptCached(tools: Tool[]): void {
    if (this.connection || this.tools.length > 0) return;
    this.tools = tools;
    this.fingerprint = toolsFingerprint(tools);
    this.stale = tools.length > 0;
    this.#context.changed(this);
  }

  /** A use began: whatever idle timer was armed no longer speaks for the server. */
  busy(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /**
   * A use ended, or a connection opened: arm the idle timer. The reap runs on the
   * reconcile queue and only if its timer is still the current one, so a call that lands
   * between the fire and the queued close keeps the server (B1).
   */
  idle(): void {
    const ms = this.row.idleTimeoutMs ?? this.#context.idleTimeoutMs;
    const connection = this.connection;
    if (!ms || !connection) return;
    const held = (): boolean => connection.inflight > 0 || this.#context.held?.(this.id) === true;
    if (held()) return;
    this.busy();
    const timer = setTimeout(() => {
      void this.#context.schedule(async () => {
        if (this.#idleTimer !== timer || this.connection !== connection || held()) return;
        this.#idleTimer = undefined;
        await this.close("idle");
      });
    }, ms);
    timer.unref();
    this.#idleTimer = timer;
  }

  /** Forget the backoff, so the next ensure() dials at once. */
  resetBackoff(): void {
    this.retryAt = undefined;
    this.failures = 0;
    if (
      this.status === "error" ||
      this.status === "crash-loop" ||
      this.status === "auth-required" ||
      this.status === "unresponsive"
    )
      this.status = "idle";
    this.error = undefined;
  }

  /** Marks the connection as ours to close, waits for its calls, then closes it. */
  #retire(connection: Connection, reason: CloseReason): Promise<void> {
    connection.closing = true;
    const retiring = (async () => {
      if (connection.inflight > 0) {
        const bound = this.row.callTimeoutMs ?? this.#context.callTimeoutMs ?? 60_000;
        await new Promise<void>((resolve) => {
          connection.drained = resolve;
          setTimeout(resolve, bound).unref();
        });
      }
      await connection.client.close().catch(() => undefined);
      await connection.transport.close().catch(() => undefined);
      this.#context.emit({ type: "close", serverId: this.id, reason });
    })();
    this.#retiring.add(retiring);
    return retiring.finally(() => this.#retiring.delete(retiring));
  }
}

function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  if (exit.code !== null) return `exited with code ${exit.code}`;
  return "exited";
}

function connectError(
  id: string,
  cause: unknown,
  budget: number | undefined,
  stderr: string | undefined,
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  authMessage: string | undefined,
): McpPoolError {
  if (cause instanceof McpPoolError) return cause;
  if (authMessage !== undefined) {
    return new McpPoolError("auth-required", authMessage, { serverId: id }, { cause });
  }
  const detail = { serverId: id, ...(stderr ? { stderr } : {}) };
  const tail = stderr ? `; stderr:\n${stderr}` : "";
  if (cause instanceof McpError && cause.code === ErrorCode.RequestTimeout) {
    return new McpPoolError(
      "timeout",
      `server "${id}" did not finish connecting within ${budget ?? 60_000} ms${tail}`,
      { ...detail, timeoutMs: budget ?? 60_000 },
      { cause },
    );
  }
  const reason =
    exit && (exit.code !== null || exit.signal) ? describeExit(exit) : (cause as Error).message;
  return new McpPoolError(
    "connect-failed",
    `could not connect to server "${id}": ${reason}${tail}`,
    detail,
    {
      cause,
    },
  );
}
