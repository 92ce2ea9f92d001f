/**
 * Per-conversation servers (SPEC B9; seed 003 is the specification). A row with
 * `session: "conversation"` is registered by the pool but never dialled as shared: every
 * identity `{tenant?, principal?, conversationId}` a caller names gets a client of its own
 * (HTTP: its own MCP session; stdio: its own child), built by the pool's one dialler.
 *
 * The contract, per row:
 * - Budgets refuse at once, never queue: open clients (`maxClients`, and
 *   `maxClientsPerPrincipal`), endings (`maxEnding`) and operations (`maxOperations`); a
 *   refusal is `pool-full` with `detail.limit` naming the budget. An operation stays charged
 *   until its work settles; an ending until its local close really finishes.
 * - A client in use — a lease, an operation, or just opened for the caller that opened it —
 *   is never evicted, swept or ended. Idle clients are evicted to make room, and swept
 *   after `idleMs` at the next use of the row or at sweep(): no timer runs in between.
 * - terminate() ends remote sessions and answers each outcome within its deadline, even
 *   when a local close hangs.
 * - Tool lists are per client unless share names are declared; a call is checked against
 *   its listing before anything is sent (`stale-tools`, `binding-changed`).
 * - Identities are never logged or put in events: reports carry `keyHash`.
 */
import { isConversationRow } from "../config/conversation.js";
import { isEnabled, type McpServerConfig } from "../config/rows.js";
import { sameConnection } from "../config/same-connection.js";
import type { CallRoutes } from "./call-routes.js";
import { ConversationCalls, type ConversationTool } from "./conversation-calls.js";
import { ConversationClient } from "./conversation-client.js";
import { ConversationRow, Lease, type ConversationLease } from "./conversation-row.js";
import type {
  ConversationEndReason,
  ConversationEvent,
  ConversationLimit,
  ConversationServerStats,
  ConversationStats,
  ConversationTools,
  ShareNames,
  TerminateResult,
} from "./conversation-types.js";
import { McpPoolError } from "./errors.js";
import {
  checkIdentity,
  checkSelector,
  conversationKey,
  identityOfKey,
  KeyHasher,
  principalKey,
  selects,
  type ConversationIdentity,
  type ConversationSelector,
} from "./identity.js";
import type { Invoked } from "./result-cache.js";
import type { EntryContext, ServerEntry } from "./server-entry.js";
import { isResolved, type SessionEnd } from "./session-end.js";
import type { CallOptions, CloseReason, PoolEvent, PoolLog } from "./types.js";

export { isConversationTool, type ConversationTool } from "./conversation-calls.js";
export {
  DEFAULT_CONVERSATION_IDLE_MS,
  DEFAULT_MAX_CLIENTS,
  DEFAULT_MAX_ENDING,
  DEFAULT_MAX_OPERATIONS,
  RowEntry,
  type ConversationLease,
} from "./conversation-row.js";

/** How long terminate() waits for the remote outcomes before it answers, ms. */
export const DEFAULT_TERMINATE_TIMEOUT_MS = 10_000;
/** Bound on one remote ending (the DELETE, or a child's stop), ms. */
export const DEFAULT_END_TIMEOUT_MS = 10_000;

export interface ConversationPoolOptions {
  /**
   * The share names of a conversation, asked at every listing and every call: keep it
   * synchronous and cheap. Returning undefined lists per client. Default: the row's
   * `conversation.share`. A version in the authorization name makes a change take effect
   * for conversations that already have a client.
   */
  share?: (serverId: string, identity: Readonly<ConversationIdentity>) => ShareNames | undefined;
  /** How long terminate() waits for remote outcomes before answering `timed-out`, ms. Default 10 000. */
  terminateTimeoutMs?: number;
  /** Bound on one remote ending (DELETE or child stop), ms. Default 10 000. */
  endTimeoutMs?: number;
  /** Monotonic clock for `idleMs` and `definitionTtlMs`, ms. Default `performance.now`. */
  now?: () => number;
}

export interface ConversationRegistryInit {
  /** The pool's entry context: every conversation client is dialled as a row is. */
  context: EntryContext;
  options?: ConversationPoolOptions | undefined;
  log: PoolLog;
  emit(event: PoolEvent): void;
  /** The pool's registered (never dialled) entry of a row, which listed tools point at. */
  entryOf(serverId: string): ServerEntry | undefined;
  /** The pool's routes back to its callers, which a conversation's clients answer from. */
  routes: CallRoutes;
  maxResultChars: number | undefined;
  maxDescriptionChars: number | undefined;
}

export class ConversationRegistry {
  readonly #init: ConversationRegistryInit;
  readonly #options: ConversationPoolOptions;
  readonly #servers = new Map<string, ConversationRow>();
  readonly #hasher = new KeyHasher();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #now: () => number;
  readonly #calls: ConversationCalls;
  #nextClientId = 1;
  #closed = false;

  constructor(init: ConversationRegistryInit) {
    this.#init = init;
    this.#options = init.options ?? {};
    this.#now = this.#options.now ?? (() => performance.now());
    this.#calls = new ConversationCalls(
      {
        rows: (servers) => this.#scope(servers),
        isCurrent: (row) => this.#servers.get(row.id) === row,
        hold: (row, identity) => this.#hold(row, identity),
        release: (row, client) => this.#release(row, client),
        charge: (row, keyHash) => this.#charge(row, keyHash),
        drop: (row, client) => this.#drop(row, client),
        hash: (key) => this.#hasher.hash(key),
        now: () => this.#now(),
        assertOpen: () => this.#assertOpen(),
      },
      {
        share: this.#options.share,
        entryOf: init.entryOf,
        log: init.log,
        maxResultChars: init.maxResultChars,
        maxDescriptionChars: init.maxDescriptionChars,
        callTimeoutMs: init.context.callTimeoutMs,
        connectTimeoutMs: init.context.connectTimeoutMs,
      },
    );
  }

  /** Whether `serverId` is a conversation row the registry serves. */
  has(serverId: string): boolean {
    return this.#servers.has(serverId);
  }

  // ── Rows ─────────────────────────────────────────────────────────────────────────

  /**
   * Takes the pool's rows after a reconcile. A conversation row that left, or stopped being
   * one, ends its clients ("removed"); one whose connection changed ends them as they fall
   * idle ("changed") while new uses open clients on the new row; any other edit (budgets,
   * share names) applies at once. Endings run in the background (settled() waits).
   */
  sync(rows: readonly McpServerConfig[]): void {
    const next = new Map(
      rows.filter((row) => isConversationRow(row) && isEnabled(row)).map((row) => [row.id, row]),
    );
    for (const [id, served] of this.#servers) {
      const row = next.get(id);
      if (row === undefined) {
        this.#servers.delete(id);
        void this.#retire(served, "removed");
      } else if (!sameConnection(served.row, row)) {
        served.update(row);
        void this.#retire(served, "changed");
      } else {
        served.update(row);
      }
    }
    for (const [id, row] of next)
      if (!this.#servers.has(id)) this.#servers.set(id, new ConversationRow(row));
  }

  /** stop()/reconnect() of a row: its clients end as they fall idle; the row stays. */
  end(serverId: string): Promise<void> {
    const served = this.#servers.get(serverId);
    if (served === undefined) return Promise.resolve();
    return this.#retire(served, "stopped");
  }

  // ── Leases ───────────────────────────────────────────────────────────────────────

  /**
   * Holds the conversation's client on `serverId` — opening it when it has none — until
   * the lease is released. Refused at once when a budget is full; refused (`closed`) and
   * holding nothing when the pool closes first.
   */
  async acquire(
    serverId: string,
    identity: unknown,
    options: { signal?: AbortSignal } = {},
  ): Promise<ConversationLease> {
    this.#assertOpen();
    const served = this.#served(serverId);
    const checked = checkIdentity(identity, served.settings.rules, serverId);
    const client = await this.#hold(served, checked);
    if (this.#closed || options.signal?.aborted) {
      this.#release(served, client);
      throw options.signal?.aborted ? options.signal.reason : closedError();
    }
    client.leases += 1;
    const lease = new Lease(serverId, client, (held) => {
      served.leases.delete(held);
      held.client.leases -= 1;
      this.#release(served, held.client);
    });
    served.leases.add(lease);
    return lease;
  }

  // ── Listings ─────────────────────────────────────────────────────────────────────

  // ── Calls ────────────────────────────────────────────────────────────────────────

  // ── Listings and calls (conversation-calls.ts) ───────────────────────────────────

  /**
   * The conversation's tools on every conversation row in scope, with the binding of each
   * listing. A row whose listing is refused (a budget, a failed open) is left out and named
   * in `refused`; a missing or refused identity refuses the whole listing (`no-identity`).
   */
  tools(
    identity: unknown,
    options: {
      servers?: readonly string[] | undefined;
      names?: readonly string[] | undefined;
    } = {},
  ): Promise<ConversationTools> {
    return this.#calls.tools(identity, options);
  }

  /** Every listing of the tenant (the principal's own, when named) stops being served. */
  permissionsChanged(selector: { tenant?: string; principal?: string } = {}): void {
    this.#calls.permissionsChanged(selector);
  }

  /** Every listing of the rows in scope (all when absent) stops being served. */
  toolsChanged(servers?: readonly string[]): void {
    this.#calls.toolsChanged(servers);
  }

  /**
   * The conversation tool a qualified name answers to, for the pool's call(); undefined
   * when no conversation row in scope could have made the name.
   */
  resolve(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    opts: CallOptions,
  ): Promise<ConversationTool | undefined> {
    return this.#calls.resolve(qualified, scope, opts);
  }

  /** Sends a resolved call on the conversation's own client (never cached, never retried). */
  invoke(
    indexed: ConversationTool,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<Invoked> {
    return this.#calls.invoke(indexed, args, opts);
  }

  // ── Ending ───────────────────────────────────────────────────────────────────────

  /**
   * Ends the remote sessions of the conversations `selector` names (a principal, or one
   * conversation of it) and reports each outcome. A client in use ends once its holders let
   * go; whatever has no outcome by `timeoutMs` (elapsed time) is answered `timed-out` and
   * reported (`deferred`, then `ended`) when it finishes.
   */
  async terminate(
    selector: ConversationSelector,
    options: { servers?: readonly string[] | undefined; timeoutMs?: number | undefined } = {},
  ): Promise<TerminateResult[]> {
    this.#assertOpen();
    const wanted = checkSelector(selector);
    const scoped = this.#scope(options.servers);
    for (const served of scoped) {
      const { rules } = served.settings;
      if (
        (rules.requirePrincipal && !wanted.principal) ||
        (rules.requireTenant && !wanted.tenant)
      ) {
        throw new McpPoolError(
          "no-identity",
          `server "${served.row.id}" ends conversations by ${rules.requireTenant ? "tenant and " : ""}principal: name them`,
          { serverId: served.row.id },
        );
      }
    }
    const timeoutMs =
      options.timeoutMs ?? this.#options.terminateTimeoutMs ?? DEFAULT_TERMINATE_TIMEOUT_MS;
    const started = this.#now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((resolve) => {
      timer = setTimeout(() => resolve("deadline"), timeoutMs);
      timer.unref();
    });
    const answers: Promise<TerminateResult>[] = [];
    for (const served of scoped) {
      this.#sweep(served);
      // Its tools were listed for a conversation that is over.
      served.listings.invalidate(
        (listing) =>
          listing.conversation !== undefined &&
          selects(wanted, identityOfKey(listing.conversation)),
      );
      for (const client of [...served.clients, ...served.ending]) {
        if (!selects(wanted, client.identity)) continue;
        answers.push(this.#terminateOne(served, client, deadline, started));
      }
    }
    try {
      return await Promise.all(answers);
    } finally {
      clearTimeout(timer);
    }
  }

  async #terminateOne(
    served: ConversationRow,
    client: ConversationClient,
    deadline: Promise<"deadline">,
    started: number,
  ): Promise<TerminateResult> {
    let remote: Promise<SessionEnd>;
    if (client.remote !== undefined) {
      remote = client.remote;
    } else {
      if (served.current.get(client.key) === client) served.current.delete(client.key);
      if (client.uses === 0) {
        remote = this.#startEnding(served, client, "terminated");
      } else {
        // In use: never ended under its holders; it ends when they let go.
        client.endAfterUse ??= "terminated";
        remote = client.whenUnused().then(() => this.#startEnding(served, client, "terminated"));
      }
    }
    const answer = await Promise.race([remote, deadline]);
    const base = {
      serverId: served.row.id,
      conversationId: client.identity.conversationId,
      keyHash: client.keyHash,
      durationMs: Math.max(0, this.#now() - started),
    };
    if (answer === "deadline") {
      if (!client.deferred) {
        client.deferred = true;
        served.unsettled += 1;
        this.#report(served, client.keyHash, { kind: "deferred", reason: "terminated" });
      }
      return { ...base, outcome: "timed-out", resolved: false };
    }
    return {
      ...base,
      outcome: answer.outcome,
      resolved: isResolved(answer.outcome),
      ...(answer.status !== undefined ? { status: answer.status } : {}),
    };
  }

  /** Ends every idle client unused for its row's `idleMs`; returns how many endings began. */
  sweep(): number {
    let ended = 0;
    for (const served of this.#servers.values()) ended += this.#sweep(served);
    return ended;
  }

  /** Resolves once every ending in progress (local close included) has finished. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  // ── What the registry holds ──────────────────────────────────────────────────────

  /** Counts for one conversation row; undefined for any other row. */
  statsOf(serverId: string): ConversationStats | undefined {
    return this.#servers.get(serverId)?.stats();
  }

  /** Counts per conversation row in scope (all when absent), in configuration order. */
  stats(servers?: readonly string[]): ConversationServerStats[] {
    return this.#scope(servers).map((served) => ({
      serverId: served.row.id,
      ...this.statsOf(served.row.id)!,
    }));
  }

  /**
   * Ends every client (leases revoked, remote sessions ended) and waits for every ending.
   * Calls in flight settle first; an acquire still opening is refused (`closed`).
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      const retiring = [...this.#servers.values()].map((served) =>
        this.#retire(served, "shutdown"),
      );
      this.#track(Promise.all(retiring));
    }
    await this.settled();
  }

  // ── Internals ────────────────────────────────────────────────────────────────────

  #served(serverId: string): ConversationRow {
    const served = this.#servers.get(serverId);
    if (served === undefined) {
      throw new McpPoolError(
        "unknown-server",
        `"${serverId}" is not a per-conversation server (session: "conversation")`,
        { serverId },
      );
    }
    return served;
  }

  #scope(servers: readonly string[] | undefined): ConversationRow[] {
    const all = [...this.#servers.values()];
    if (servers === undefined) return all;
    const wanted = new Set(servers);
    return all.filter((served) => wanted.has(served.row.id));
  }

  /**
   * A client of the conversation with one use already counted: the current one, or a new
   * one when there is none (making room first, or refusing at once). The opener's use is
   * counted before the dial, so the client is in use from its first moment.
   */
  async #hold(
    served: ConversationRow,
    identity: ConversationIdentity,
  ): Promise<ConversationClient> {
    this.#assertOpen();
    // Every use sweeps first: idle clients end here, with no timer in between.
    this.#sweep(served);
    const key = conversationKey(identity);
    const existing = served.current.get(key);
    if (existing?.usable) {
      existing.uses += 1;
      try {
        await existing.opened;
      } catch (error) {
        this.#release(served, existing);
        throw error;
      }
      return existing;
    }
    if (existing !== undefined) this.#drop(served, existing);
    const keyHash = this.#hasher.hash(key);
    // Room is made (idle clients evicted) or refused at once: never a queue.
    const room = served.roomFor(principalKey(identity));
    if ("limit" in room) throw this.#full(served, keyHash, room.limit);
    for (const victim of room.victims) void this.#startEnding(served, victim, "evicted");
    const client = new ConversationClient({
      id: this.#nextClientId++,
      key,
      keyHash,
      principal: principalKey(identity),
      identity,
      row: served.row,
      context: this.#init.context,
      lastUsed: this.#now(),
      routes: this.#init.routes,
      onLost: (lost) => this.#drop(served, lost),
      onListChanged: (changed) =>
        served.listings.invalidate(
          (listing) =>
            listing === changed.listing ||
            (changed.lastShareKey !== undefined && listing.shareKey === changed.lastShareKey),
        ),
    });
    client.uses = 1;
    served.clients.add(client);
    served.current.set(key, client);
    const started = this.#now();
    client.opened = client.open().then(
      () => {
        this.#report(served, keyHash, {
          kind: "opened",
          durationMs: Math.max(0, this.#now() - started),
        });
      },
      (error: unknown) => {
        served.clients.delete(client);
        if (served.current.get(key) === client) served.current.delete(key);
        client.phase = "ended";
        this.#report(served, keyHash, { kind: "open-failed", error: (error as Error).message });
        throw error;
      },
    );
    try {
      await client.opened;
    } catch (error) {
      client.release(this.#now());
      throw error;
    }
    return client;
  }

  /** A client that cannot serve new uses (lost, expired): new uses get another; it ends. */
  #drop(served: ConversationRow, client: ConversationClient): void {
    if (served.current.get(client.key) === client) served.current.delete(client.key);
    if (client.phase === "ending" || client.phase === "ended") return;
    const reason: ConversationEndReason = client.expired ? "expired" : "lost";
    if (client.uses === 0) void this.#startEnding(served, client, reason);
    else client.endAfterUse ??= reason;
  }

  /** One operation charged to the row, or `pool-full` (operations). Returns the uncharge. */
  #charge(served: ConversationRow, keyHash: string): () => void {
    if (served.operations >= served.settings.maxOperations) {
      throw this.#full(served, keyHash, "operations");
    }
    served.operations += 1;
    let charged = true;
    return () => {
      if (!charged) return;
      charged = false;
      served.operations -= 1;
    };
  }

  #full(served: ConversationRow, keyHash: string, limit: ConversationLimit): McpPoolError {
    this.#report(served, keyHash, { kind: "refused", limit });
    return served.full(limit);
  }

  #release(served: ConversationRow, client: ConversationClient): void {
    client.release(this.#now());
    if (client.uses > 0 || client.phase !== "open") return;
    if (client.endAfterUse !== undefined)
      void this.#startEnding(served, client, client.endAfterUse);
  }
  /** Ends the row's idle clients unused for `idleMs`, as ending slots allow. */
  #sweep(served: ConversationRow): number {
    const due = served.sweepable(this.#now());
    for (const client of due) void this.#startEnding(served, client, "idle");
    return due.length;
  }

  /**
   * Ends a client: out of the client budgets and into the ending one (and an operation)
   * until its local close has really finished. Resolves with the remote outcome, which
   * comes before the local close; the whole ending is tracked for settled().
   */
  #startEnding(
    served: ConversationRow,
    client: ConversationClient,
    reason: ConversationEndReason,
  ): Promise<SessionEnd> {
    if (client.remote !== undefined) return client.remote;
    served.clients.delete(client);
    if (served.current.get(client.key) === client) served.current.delete(client.key);
    served.ending.add(client);
    served.operations += 1;
    client.phase = "ending";
    const started = this.#now();
    const closeReason = CLOSE_REASONS[reason];
    const endTimeoutMs = this.#options.endTimeoutMs ?? DEFAULT_END_TIMEOUT_MS;
    const remote = client.endRemote(closeReason, endTimeoutMs);
    client.remote = remote;
    const ending = remote
      .then(async (end) => {
        await client.closeLocal(closeReason).catch(() => undefined);
        return end;
      })
      .then((end) => {
        served.ending.delete(client);
        served.operations -= 1;
        client.phase = "ended";
        if (client.deferred) served.unsettled -= 1;
        if (!isResolved(end.outcome)) served.unresolvedEndings += 1;
        this.#report(served, client.keyHash, {
          kind: "ended",
          reason,
          outcome: end.outcome,
          resolved: isResolved(end.outcome),
          ...(end.status !== undefined ? { status: end.status } : {}),
          durationMs: Math.max(0, this.#now() - started),
        });
        return end;
      });
    client.ending = ending;
    this.#track(ending);
    return remote;
  }

  /**
   * Every client of a row stops taking new uses: leases are revoked, idle clients end now,
   * clients in use end when their operations settle. Listings stop being served.
   */
  #retire(served: ConversationRow, reason: ConversationEndReason): Promise<void> {
    served.listings.invalidate(() => true);
    served.current.clear();
    for (const lease of [...served.leases]) {
      this.#report(served, lease.keyHash, { kind: "revoked", reason });
      lease.release();
    }
    const endings: Promise<unknown>[] = [];
    for (const client of [...served.clients]) {
      if (client.uses === 0 && client.phase === "open") {
        endings.push(this.#startEnding(served, client, reason));
      } else {
        client.endAfterUse ??= reason;
        endings.push(client.whenUnused().then(() => client.ending));
      }
    }
    for (const client of served.ending) endings.push(client.ending ?? Promise.resolve());
    return Promise.all(endings).then(() => undefined);
  }

  #report(
    served: ConversationRow,
    keyHash: string,
    fields: Omit<ConversationEvent, "type" | "serverId" | "keyHash">,
  ): void {
    this.#init.emit({ type: "conversation", serverId: served.row.id, keyHash, ...fields });
  }

  #track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError();
  }
}

/** The close reason a conversation client's ServerEntry closes with. */
const CLOSE_REASONS: Record<ConversationEndReason, CloseReason> = {
  terminated: "stop",
  idle: "idle",
  evicted: "idle",
  lost: "redial",
  expired: "redial",
  removed: "removed",
  changed: "changed",
  stopped: "stop",
  shutdown: "shutdown",
};

function closedError(): McpPoolError {
  return new McpPoolError("closed", "the pool is closed");
}
