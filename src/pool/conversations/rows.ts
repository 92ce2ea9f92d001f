/**
 * Per-conversation servers (docs/configuration.md, "Per-conversation servers"). A row with
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
 *
 * Where it lives: each row owns its clients' state machine and budgets (conversations/row.ts);
 * listings and calls are conversations/calls.ts; this module keeps the rows in step with
 * the pool's, answers terminate() by its deadline, and waits for every ending (settled()).
 * It is the registry's body, loaded with the first conversation row: the pool holds the
 * shell (conversations/registry.ts), which answers alone while no row is served.
 */
import { isConversationRow } from "../../config/conversation.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import { sameConnection } from "../../config/same-connection.js";
import { ConversationCalls, type ConversationTool } from "./calls.js";
import type { ConversationLease } from "./lease.js";
import { ConversationRow, type RowShared } from "./row.js";
import { RowEras } from "./era.js";
import type {
  ConversationServerStats,
  ConversationStats,
  ConversationTools,
  TerminateResult,
} from "./types.js";
import {
  closedError,
  DEFAULT_END_TIMEOUT_MS,
  DEFAULT_TERMINATE_TIMEOUT_MS,
  notConversationRow,
  type ConversationPoolOptions,
  type ConversationRegistryInit,
  type ListingScope,
} from "./registry.js";
import { McpPoolError } from "../core/errors.js";
import {
  checkIdentity,
  checkSelector,
  identityOfKey,
  KeyHasher,
  selects,
  type ConversationSelector,
} from "../core/identity.js";
import type { Invoked } from "../calls/result-cache.js";
import type { CallOptions } from "../calls/options.js";
import type { CallSignal } from "../core/types.js";
import type { AdoptedConversation, Handable, OpenedConversation } from "../server/handoff.js";

/** The conversation rows a pool serves (conversations/registry.ts holds this once loaded). */
export class ConversationRows {
  readonly #options: ConversationPoolOptions;
  readonly #servers = new Map<string, ConversationRow>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #now: () => number;
  readonly #shared: RowShared;
  readonly #calls: ConversationCalls;
  #closed = false;

  constructor(init: ConversationRegistryInit) {
    this.#options = init.options ?? {};
    const now = this.#options.now ?? (() => performance.now());
    this.#now = now;
    let nextClientId = 1;
    const eras = new RowEras({ context: init.context, entryOf: init.entryOf });
    this.#shared = {
      context: init.context,
      routes: init.routes,
      hasher: new KeyHasher(),
      now,
      nextClientId: () => nextClientId++,
      endTimeoutMs: this.#options.endTimeoutMs ?? DEFAULT_END_TIMEOUT_MS,
      emit: (event) => init.emit(event),
      track: (work) => this.#track(work),
      assertOpen: () => this.#assertOpen(),
      eraOf: (row) => eras.of(row),
    };
    this.#calls = new ConversationCalls(
      {
        rows: (servers) => this.#scope(servers),
        isCurrent: (row) => this.#servers.get(row.id) === row,
        now,
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
        void served.retire("removed");
      } else if (!sameConnection(served.row, row)) {
        served.update(row);
        void served.retire("changed");
      } else {
        served.update(row);
      }
    }
    for (const [id, row] of next)
      if (!this.#servers.has(id)) this.#servers.set(id, new ConversationRow(row, this.#shared));
  }

  /** stop()/reconnect() of a row: its clients end as they fall idle; the row stays. */
  end(serverId: string): Promise<void> {
    const served = this.#servers.get(serverId);
    if (served === undefined) return Promise.resolve();
    return served.retire("stopped");
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
    options: { signal?: CallSignal } = {},
  ): Promise<ConversationLease> {
    this.#assertOpen();
    const served = this.#served(serverId);
    const checked = checkIdentity(identity, served.settings.rules, serverId);
    const client = await served.hold(checked);
    if (this.#closed || options.signal?.aborted) {
      served.release(client);
      throw options.signal?.aborted ? options.signal.reason : closedError();
    }
    return served.lease(client);
  }

  // ── Listings and calls (conversations/calls.ts) ───────────────────────────────────

  /**
   * The conversation's tools on every conversation row in scope, with the binding of each
   * listing. A row whose listing is refused (a budget, a failed open) is left out and named
   * in `refused`; a missing or refused identity refuses the whole listing (`no-identity`).
   */
  tools(identity: unknown, options: ListingScope = {}): Promise<ConversationTools> {
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
      served.sweep();
      // Its tools were listed for a conversation that is over.
      served.listings.invalidate(
        (listing) =>
          listing.conversation !== undefined &&
          selects(wanted, identityOfKey(listing.conversation)),
      );
      for (const client of [...served.clients, ...served.ending]) {
        if (!selects(wanted, client.identity)) continue;
        answers.push(served.terminate(client, deadline, started));
      }
    }
    try {
      return await Promise.all(answers);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends every idle client unused for its row's `idleMs`; returns how many endings began. */
  sweep(): number {
    let ended = 0;
    for (const served of this.#servers.values()) ended += served.sweep();
    return ended;
  }

  /** Resolves once every ending in progress (local close included) has finished. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  // ── Hand-over to another daemon (server/handoff.ts) ──────────────────────────────

  /** Each conversation's open child, with its conversation's key. */
  handable(): Handable[] {
    return [...this.#servers.values()].flatMap((served) =>
      [...served.clients]
        .filter((client) => client.phase === "open" && !client.lost && client.connection)
        .map((client) => ({ entry: client.entry, conversation: { key: client.key } })),
    );
  }

  /**
   * Takes up children a previous daemon handed over: each conversation's client is opened
   * now, as its next use would open it, and its dial takes the handed child (by row and
   * conversation key); then it waits idle for that use. A row that is gone is left.
   * Resolves with each child that opened, with its pid (absent: it failed, or its row is
   * gone). One conversation may have children on several rows: each is its own.
   */
  async adopt(children: readonly AdoptedConversation[]): Promise<OpenedConversation[]> {
    const opened: OpenedConversation[] = [];
    await Promise.allSettled(
      children.map(async ({ serverId, key }) => {
        const served = this.#servers.get(serverId);
        if (served === undefined) return;
        const client = await served.hold(identityOfKey(key));
        const pid = client.connection?.pid;
        served.release(client);
        if (pid !== undefined) opened.push({ serverId, key, pid });
      }),
    );
    return opened;
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
      const retiring = [...this.#servers.values()].map((served) => served.retire("shutdown"));
      this.#track(Promise.all(retiring));
    }
    await this.settled();
  }

  // ── Internals ────────────────────────────────────────────────────────────────────

  #served(serverId: string): ConversationRow {
    const served = this.#servers.get(serverId);
    if (served === undefined) throw notConversationRow(serverId);
    return served;
  }

  #scope(servers: readonly string[] | undefined): ConversationRow[] {
    const all = [...this.#servers.values()];
    if (servers === undefined) return all;
    const wanted = new Set(servers);
    return all.filter((served) => wanted.has(served.row.id));
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
