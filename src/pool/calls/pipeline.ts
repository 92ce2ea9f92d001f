/**
 * The call pipeline: every tools/call the pool sends goes down this one path —
 *
 *   resolve → gate → coerce → route/cache → send → finish
 *
 * resolve a qualified name (waking a server that could offer it; on a one-server call, a
 * name the server never listed goes to it as it is: unlisted.ts), the gates the
 * catalog applies (scope, hiding, pins), coerce the arguments, register the
 * caller's elicitation/sampling handlers and consult the result cache, send on
 * the server's connection (redialling a lost session once; resending a trusted read
 * cut off by a crash once), and finish the result (flatten, cut; results.ts). A
 * failure is mapped once, by upstream-error.ts.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, slugOf } from "../../config/rows.js";
import type { Catalog } from "../catalog/catalog.js";
import { unknownTool } from "../catalog/catalog.js";
import { callArguments } from "./coercion.js";
import type { Connection } from "../server/connection.js";
import {
  isConversationTool,
  ownHandlers,
  routeOf,
  type CallRoutes,
  type ConversationBound,
} from "./routes.js";
import { checkCallTimeout } from "./duration-checks.js";
import { McpPoolError } from "../core/errors.js";
import { qualifiedName } from "../catalog/naming.js";
import type { PoolAuth } from "../auth/pool-auth.js";
import type { ResultCache, Invoked } from "./result-cache.js";
import { ErrorCode, isMcpError } from "../core/mcp-error.js";
import { finishResult, forwardable, resultBudget } from "./results.js";
import type { ServerEntry } from "../server/entry.js";
import { hold, holding, release, withSession } from "../server/session.js";
import { isBrokenPipe } from "../transport/stdio-transport.js";
import type { IndexedTool } from "../catalog/tool-index.js";
import { upstreamError } from "./upstream-error.js";
import { upstreamCaller, upstreamParams, type CallOptions } from "./options.js";
import type { CallSignal, PoolEvent } from "../core/types.js";
import type { HostProfile } from "mcpool-protocol";
import { isProfileEntry } from "../server/profile-entry.js";
import { unlistedTool } from "./unlisted.js";
import type { PoolTasks, TaskOwner } from "./tasks.js";
import type { RequestOptions } from "../mcp/protocol.js";
import { runAsTask, runsAsTask } from "../mcp/task-call.js";

/**
 * Where the pipeline hands a call whose tool no shared server lists: the conversation
 * registry, which lists tools on the caller's own client and calls them there.
 */
export interface ConversationCalls {
  resolve(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    opts: CallOptions,
  ): Promise<(IndexedTool & ConversationBound) | undefined>;
  invoke(
    indexed: IndexedTool & ConversationBound,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<Invoked>;
}

/**
 * Where a call that names a host profile resolves: the pool's catalog and entries
 * with each row's child for that profile in place of the row's own entry.
 */
export interface ProfileViews {
  view(profile: HostProfile): { catalog: Catalog; entries(): readonly ServerEntry[] };
}

/** Where a call's event goes (the pool's PoolEvents): built only when someone listens. */
export interface CallEvents {
  readonly listened: boolean;
  emit(event: PoolEvent): void;
}

export interface CallPipelineInit {
  catalog: Catalog;
  /** The entries in configuration order. */
  entries(): readonly ServerEntry[];
  conversations: ConversationCalls;
  profiles: ProfileViews;
  /** Where a server's elicitations and sampling find the caller in flight. */
  routes: CallRoutes;
  cache: ResultCache | undefined;
  /** The tasks task-augmented calls create, by id: where their requests go, whose they are. */
  tasks: PoolTasks;
  auth: PoolAuth;
  events: CallEvents;
  /** Throws `closed` once the pool is closed. */
  assertOpen(): void;
  /** Whether the first reconcile is still running, and the wait for it. */
  starting(): boolean;
  ready(): Promise<void>;
  /** Pool-wide defaults the row and the call outrank. */
  coerceArguments: boolean | undefined;
  maxResultChars: number | undefined;
  callTimeoutMs: number | undefined;
}

/** A call's event. */
type CallEvent = Extract<PoolEvent, { type: "call" }>;

/** Whether `qualified` could be one of `entry`'s tools: it starts with the row's slug. */
function couldName(entry: ServerEntry, qualified: string): boolean {
  return qualified.startsWith(qualifiedName(slugOf(entry.row), ""));
}

export class CallPipeline {
  readonly #init: CallPipelineInit;

  constructor(init: CallPipelineInit) {
    this.#init = init;
  }

  async call(
    qualified: string,
    input: unknown,
    opts: CallOptions,
  ): Promise<string | CallToolResult> {
    const { events, routes } = this.#init;
    const started = performance.now();
    let indexed: IndexedTool | undefined;
    let unroute: (() => void) | undefined;
    try {
      this.#init.assertOpen();
      checkCallTimeout(opts.timeoutMs);
      const resolved =
        opts.unlisted === undefined
          ? this.#resolve(qualified, opts)
          : unlistedTool(qualified, opts.unlisted, opts, this.#view(opts));
      // A connected server's fresh tool comes at once: a warm call waits on no promise here.
      indexed = resolved instanceof Promise ? await resolved : resolved;
      // From here until the call settles, the server's elicitations may be this caller's.
      const own = hostOnly(indexed, opts);
      unroute = routes.register(routeOf(indexed), own);
      const finished = await this.#prepared(indexed, input, own);
      const { result, truncated, cached } = finished;
      if (events.listened) {
        const event: CallEvent = {
          type: "call",
          qualified,
          serverId: indexed.entry.id,
          toolName: indexed.tool.name,
          ms: performance.now() - started,
          ok: true,
          chars: opts.raw ? 0 : finished.chars,
          truncated,
        };
        // A raw call's text is made only when a listener reads its size. Made a getter here,
        // not in the literal: a literal with one is built by the runtime, every call.
        if (opts.raw) Object.defineProperty(event, "chars", { get: () => finished.chars });
        // Set only when true, as before, without an object spread in for each.
        if (opts.hidden) event.hidden = true;
        if (opts.raw) event.raw = true;
        if (cached) event.cached = true;
        events.emit(event);
      }
      return opts.raw ? result : finished.text;
    } catch (error) {
      if (events.listened) {
        events.emit({
          type: "call",
          qualified,
          ...(indexed ? { serverId: indexed.entry.id, toolName: indexed.tool.name } : {}),
          ms: performance.now() - started,
          ok: false,
          ...(error instanceof McpPoolError ? { code: error.code } : {}),
          error: (error as Error).message,
        });
      }
      throw error;
    } finally {
      unroute?.();
      // The use is over: the idle clock starts again.
      indexed?.entry.idle();
    }
  }

  /** The catalog and entries a call resolves in: its host profile's, or the pool's own. */
  #view(opts: CallOptions): { catalog: Catalog; entries(): readonly ServerEntry[] } {
    return opts.profile ? this.#init.profiles.view(opts.profile) : this.#init;
  }

  /**
   * The tool a qualified name answers to, for this scope: at once when its server is
   * connected and its list fresh, else once the list is read again or a server that could
   * offer it is woken (#woken, which says what `waitedFrom` and `replaced` are).
   */
  #resolve(
    qualified: string,
    opts: CallOptions,
    waitedFrom?: number,
    replaced = false,
  ): IndexedTool | Promise<IndexedTool> {
    const scope = opts.servers ? new Set(opts.servers) : undefined;
    const hidden = opts.hidden === true;
    const { catalog } = this.#view(opts);
    const found = catalog.lookup(qualified, scope, hidden);
    // Synchronously, before anything awaits: an idle reap already queued must see the use.
    found?.entry.busy();
    if (found && found.entry.connection) {
      // A list whose cache hint ran out is listed again first: the tool may be gone.
      const listing = found.entry.fresh();
      if (listing === undefined) return found;
      return listing.then(() => {
        const again = catalog.lookup(qualified, scope, hidden);
        if (again) return again;
        throw unknownTool(qualified);
      });
    }
    return this.#woken(qualified, opts, found, waitedFrom, replaced);
  }

  /**
   * The tool of a server not connected: `found`, a last-known (stale) tool, once its server is
   * back; else whatever a listing or a woken server offers under the name.
   * `waitedFrom`: when this caller began waiting for the pool to start (epoch ms); a server
   * whose dial failed since then failed while the caller waited on it, and the caller is
   * told that failure itself, not that the server "failed recently". `replaced`: this is the
   * one retry after a candidate was replaced in the view (below).
   */
  async #woken(
    qualified: string,
    opts: CallOptions,
    found: IndexedTool | undefined,
    waitedFrom?: number,
    replaced = false,
  ): Promise<IndexedTool> {
    const scope = opts.servers ? new Set(opts.servers) : undefined;
    const hidden = opts.hidden === true;
    const { catalog, entries } = this.#view(opts);
    if (!found && this.#init.starting()) {
      // The pool is still starting: the name may be one a server has yet to list.
      const since = Date.now();
      await this.#init.ready();
      return this.#resolve(qualified, opts, waitedFrom ?? since, replaced);
    }
    if (found) {
      // A last-known (stale) tool: its server comes back first, and may offer other tools.
      await found.entry.ensure();
      const again = catalog.lookup(qualified, scope, hidden);
      if (again) return again;
      throw unknownTool(qualified);
    }
    // A live list whose cache hint ran out may offer the name now.
    const listings = entries()
      .filter((entry) => (!scope || scope.has(entry.id)) && couldName(entry, qualified))
      .map((entry) => entry.fresh())
      .filter((listing) => listing !== undefined);
    if (listings.length > 0) {
      await Promise.all(listings);
      const listed = catalog.lookup(qualified, scope, hidden);
      if (listed) return this.#resolve(qualified, opts, waitedFrom, replaced);
    }
    // A conversation row's tools are listed on the caller's own client.
    const conversational = await this.#init.conversations.resolve(qualified, scope, opts);
    if (conversational) return conversational;
    // Nothing answers to the name: wake the servers in scope whose slug could have made it.
    const candidates = entries().filter(
      (entry) =>
        (!scope || scope.has(entry.id)) &&
        !entry.connection &&
        isEnabled(entry.row) &&
        couldName(entry, qualified),
    );
    const failures: unknown[] = [];
    for (const entry of candidates) {
      const failed = waitedFrom === undefined ? undefined : entry.failureSince(waitedFrom);
      if (failed !== undefined) {
        failures.push(failed);
        continue;
      }
      try {
        await entry.ensure();
      } catch (error) {
        failures.push(error);
      }
    }
    const woken = catalog.lookup(qualified, scope, hidden);
    if (woken) return woken;
    // A child the server refused for its era (a legacy host's, on a server found to speak
    // only 2026-07-28) was given up for what serves that host now (the row's connection,
    // bridged): the call is resolved there, once, as the host's next call would be.
    const current = entries();
    if (!replaced && candidates.some((entry) => !current.includes(entry))) {
      return this.#resolve(qualified, opts, waitedFrom, true);
    }
    if (candidates.length === 1 && failures.length === 1) throw failures[0];
    throw unknownTool(qualified);
  }

  /** After the gates: coercion, then the result cache. */
  #prepared(
    indexed: IndexedTool,
    input: unknown,
    opts: CallOptions,
  ): Promise<Invoked & { cached?: true }> {
    const { entry, tool } = indexed;
    const row = entry.row;
    const coerce = opts.coerce ?? row.coerceArguments ?? this.#init.coerceArguments ?? true;
    const args = callArguments(indexed.qualified, input, tool.inputSchema, coerce);
    // Never cached: a conversation's answers are its session's.
    if (isConversationTool(indexed)) return this.#init.conversations.invoke(indexed, args, opts);
    const cache = this.#init.cache;
    // A profile's child answers for its host's roots: never from another host's answers;
    // a task is its host's own.
    if (!cache || isProfileEntry(entry) || opts.task !== undefined)
      return this.#invoke(indexed, args, opts);
    return cache.run(
      {
        serverId: entry.id,
        toolName: tool.name,
        annotations: tool.annotations,
        trusted: row.trustAnnotations === true,
        args,
        raw: opts.raw,
        cache: opts.cache,
        maxResultChars: resultBudget(
          opts.maxResultChars,
          row.maxResultChars,
          this.#init.maxResultChars,
        ),
      },
      () => this.#invoke(indexed, args, opts),
    );
  }

  async #invoke(indexed: IndexedTool, input: unknown, opts: CallOptions): Promise<Invoked> {
    const { entry, tool } = indexed;
    const row = entry.row;
    const timeoutMs = opts.timeoutMs ?? row.callTimeoutMs ?? this.#init.callTimeoutMs;
    const args = (typeof input === "object" && input !== null ? input : {}) as Record<
      string,
      unknown
    >;
    const send = (connection: Connection): Promise<CallToolResult> =>
      this.#send(entry, connection, tool, args, timeoutMs, opts);
    let result: CallToolResult;
    try {
      // A remote that forgot our session is redialled once and sent the call again.
      result = await withSession(entry, send);
    } catch (error) {
      const retryable =
        error instanceof McpPoolError &&
        error.code === "server-crashed" &&
        row.trustAnnotations === true &&
        (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true);
      if (!retryable) throw error;
      // A read cut off by a crash is safe to send again, once, to the restarted server.
      result = await send(await entry.ensure({ ignoreBackoff: true }));
    }
    const maxChars = resultBudget(
      opts.maxResultChars,
      row.maxResultChars,
      this.#init.maxResultChars,
    );
    return finishResult(result, { serverId: entry.id, maxChars, raw: opts.raw });
  }

  async #send(
    entry: ServerEntry,
    connection: Connection,
    tool: IndexedTool["tool"],
    args: Record<string, unknown>,
    timeoutMs: number | undefined,
    opts: CallOptions,
  ): Promise<CallToolResult> {
    const { signal, onProgress } = opts;
    const name = tool.name;
    try {
      if (opts.task !== undefined) {
        const request = {
          timeout: timeoutMs,
          signal,
          answer: this.#init.routes.answerer(entry.id, opts),
          ...upstreamCaller(opts),
        };
        const params = upstreamParams(name, args, opts.meta, opts.task);
        return await this.#sendTask(entry, connection, params, request, opts.taskOwner);
      }
      // onprogress makes the client send a progressToken of its own; resetTimeoutOnProgress
      // stays false, so a chatty server cannot hold a call past its timeout.
      const request: RequestOptions = { timeout: timeoutMs, signal, onprogress: onProgress };
      // A call's input answerer and caller are read by a modern connection only: a legacy
      // one is spared making them on every call.
      if (connection.client.era !== "legacy") {
        request.answer = this.#init.routes.answerer(entry.id, opts);
        const { caller } = upstreamCaller(opts);
        if (caller !== undefined) request.caller = caller;
      }
      const params = upstreamParams(name, args, opts.meta);
      const { client } = connection;
      let result: CallToolResult;
      // Held as holding() holds, in this function's own try: no async step of its own a call.
      hold(connection);
      try {
        // A caller that takes no task, of a tool that requires one: the pool runs the task.
        result = await (opts.awaitTask === true && runsAsTask(tool, client)
          ? runAsTask(client, params, { timeout: timeoutMs, signal, onprogress: onProgress })
          : client.callTool(params, request));
      } finally {
        release(connection);
      }
      entry.answered(connection);
      this.#init.auth.satisfied(entry.id, "call");
      return forwardable(result);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (isMcpError(error, ErrorCode.RequestTimeout)) {
        // Slow, or hung? A ping on a small budget tells, and a hung server is replaced.
        entry.timedOut(connection);
      }
      if (isBrokenPipe(error)) entry.brokenPipe(connection);
      const refusal = this.#init.auth.refusal(entry.id, error);
      // A refusal the SDK gave up on (a step-up it could not make) retires the connection.
      if (refusal !== undefined) entry.authLost();
      throw upstreamError(error, {
        serverId: entry.id,
        what: `call to "${name}"`,
        toolCall: true,
        timeoutMs,
        unresponsive: connection.unresponsive,
        authRefusal: refusal,
        cutOff: () => cutOff(entry, connection, name),
        unreachable: (message) => entry.redact(message),
      });
    }
  }

  /**
   * A task-augmented call: the server's CreateTaskResult as it came (no output schema
   * applies to it), its task recorded on `connection` as the caller's.
   */
  async #sendTask(
    entry: ServerEntry,
    connection: Connection,
    params: ReturnType<typeof upstreamParams>,
    request: RequestOptions,
    owner: TaskOwner | undefined,
  ): Promise<CallToolResult> {
    // A status the server sends before its answer waits for the answer to name its owner.
    const answered = this.#init.tasks.asking(entry);
    // The caller's abort (it withdrew the call, or went) is not sent upstream: the server may
    // make the task all the same, and once its answer names it, the task is released
    // (cancelled where the server offers it), as a host's task is when the host goes.
    const { signal, ...upstream } = request;
    const created = holding(connection, () =>
      connection.client.request<CallToolResult>({ method: "tools/call", params }, upstream),
    ).then((result) => {
      entry.answered(connection);
      this.#init.tasks.created(entry, connection, result, owner ?? { key: "" }, signal);
      return result;
    });
    void created.catch(() => undefined).finally(answered);
    return untilAborted(created, signal);
  }
}

/** `promise`, or a rejection with `signal`'s reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: CallSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The call's own handlers, and for a host profile a refusal of what the host does not
 * answer: on the row's own connection (its listing is the pool's), or in a modern
 * server's `input_required` round, the server hears what it would hear from that host
 * direct (-32601 "Method not found", an SDK client's answer to a request it has no
 * handler for), never an answer made up for it. (A legacy child of the profile declared
 * nothing the host lacks: its server cannot ask.)
 */
function hostOnly(indexed: IndexedTool, opts: CallOptions): CallOptions {
  return isConversationTool(indexed) ? opts : ownHandlers(opts);
}

/** A connection closed under a call: ours (a reconnect, a retirement past its drain bound) or a crash. */
function cutOff(entry: ServerEntry, connection: Connection, name: string): McpPoolError {
  const serverId = entry.id;
  if (connection.closing) {
    return new McpPoolError(
      "connection-lost",
      `the connection to server "${serverId}" was closed during the call to "${name}"`,
      { serverId },
    );
  }
  return new McpPoolError(
    "server-crashed",
    `server "${serverId}" went down during the call to "${name}"; the tool may have run`,
    { serverId },
  );
}
