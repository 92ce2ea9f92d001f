/**
 * One `session: "conversation"` row as the registry keeps it, and the state
 * machine of its clients, which the row owns: a client is opened for a conversation
 * (`hold`), used and let go (`release`), dropped when it can serve no more (`drop`), ended
 * when idle, evicted, terminated or retired (`startEnding`), and counted against the row's
 * budgets all along. The budget decisions are pure arithmetic over what the row counts:
 * which idle clients make room for a new one (or which budget refuses), and which are due
 * to be swept. What every row shares (the dialler, the clock, the key hasher, events,
 * the registry's tracking of endings) comes in as RowShared.
 */
import type { McpServerConfig } from "../../config/rows.js";
import type { CallRoutes } from "../calls/routes.js";
import { ConversationClient } from "./client.js";
import { Lease, type ConversationLease } from "./lease.js";
import { ListingStore, type Listing } from "./listings.js";
import { settingsOf, type RowSettings } from "./settings.js";
import type {
  ConversationEndReason,
  ConversationEvent,
  ConversationLimit,
  ConversationStats,
  TerminateResult,
} from "./types.js";
import { McpPoolError } from "../core/errors.js";
import {
  conversationKey,
  principalKey,
  type ConversationIdentity,
  type KeyHasher,
} from "../core/identity.js";
import type { EntryContext } from "../server/context.js";
import { isResolved, type SessionEnd } from "../transport/session-end.js";
import type { EraVerdict } from "../core/era.js";
import type { CloseReason, PoolEvent } from "../core/types.js";

/** What every conversation row of a registry shares. */
export interface RowShared {
  /** The pool's entry context: every conversation client is dialled as a row is. */
  context: EntryContext;
  routes: CallRoutes;
  hasher: KeyHasher;
  /** Monotonic clock, ms. */
  now(): number;
  /** A client id unique in the registry, for listings that belong to one client. */
  nextClientId(): number;
  /** Bound on one remote ending (DELETE or child stop), ms. */
  endTimeoutMs: number;
  emit(event: PoolEvent): void;
  /** Keeps an ending in the registry's settled() until it finishes. */
  track(work: Promise<unknown>): void;
  /** Throws `closed` once the registry is closing. */
  assertOpen(): void;
  /** The era a new client of `row` dials on (era.ts). */
  eraOf(row: McpServerConfig): Promise<EraVerdict | undefined>;
}

/** One conversation row's clients, endings, operations, leases and listings. */
export class ConversationRow {
  row: McpServerConfig;
  settings: RowSettings;
  /** Open and opening clients: what the client budgets count. */
  readonly clients = new Set<ConversationClient>();
  /** The client new uses of a conversation join. */
  readonly current = new Map<string, ConversationClient>();
  readonly ending = new Set<ConversationClient>();
  readonly leases = new Set<ConversationLease>();
  readonly listings = new ListingStore();
  /** Listings in flight, by share key or conversation: joined, never sent twice. */
  readonly listing = new Map<string, Promise<Listing | undefined>>();
  operations = 0;
  unsettled = 0;
  unresolvedEndings = 0;
  readonly #shared: RowShared;

  constructor(row: McpServerConfig, shared: RowShared) {
    this.row = row;
    this.settings = settingsOf(row);
    this.#shared = shared;
  }

  get id(): string {
    return this.row.id;
  }

  /** Takes an edited row: its budgets, rules and share names apply from now on. */
  update(row: McpServerConfig): void {
    this.row = row;
    this.settings = settingsOf(row);
  }

  /** The keyHash of a conversation key: what events and reports carry. */
  keyHashOf(key: string): string {
    return this.#shared.hasher.hash(key);
  }

  // ── Clients in use ─────────────────────────────────────────────────────────────

  /**
   * A client of the conversation with one use already counted: the current one, or a new
   * one when there is none (making room first, or refusing at once). The opener's use is
   * counted before the dial, so the client is in use from its first moment.
   */
  async hold(identity: ConversationIdentity): Promise<ConversationClient> {
    this.#shared.assertOpen();
    // Every use sweeps first: idle clients end here, with no timer in between.
    this.sweep();
    const key = conversationKey(identity);
    const existing = this.current.get(key);
    if (existing?.usable) {
      existing.uses += 1;
      try {
        await existing.opened;
      } catch (error) {
        this.release(existing);
        throw error;
      }
      return existing;
    }
    if (existing !== undefined) this.drop(existing);
    const keyHash = this.keyHashOf(key);
    // Room is made (idle clients evicted) or refused at once: never a queue.
    const room = this.roomFor(principalKey(identity));
    if ("limit" in room) throw this.refuse(keyHash, room.limit);
    for (const victim of room.victims) void this.startEnding(victim, "evicted");
    const client = this.#newClient(key, keyHash, identity);
    client.uses = 1;
    this.clients.add(client);
    this.current.set(key, client);
    const started = this.#shared.now();
    client.opened = client.open().then(
      () => {
        this.report(keyHash, { kind: "opened", durationMs: this.#since(started) });
      },
      (error: unknown) => {
        this.clients.delete(client);
        if (this.current.get(key) === client) this.current.delete(key);
        client.phase = "ended";
        this.report(keyHash, { kind: "open-failed", error: (error as Error).message });
        throw error;
      },
    );
    try {
      await client.opened;
    } catch (error) {
      client.release(this.#shared.now());
      throw error;
    }
    return client;
  }

  /** Lets one use of `client` go; a client due to end ends once nobody uses it. */
  release(client: ConversationClient): void {
    client.release(this.#shared.now());
    if (client.uses > 0 || client.phase !== "open") return;
    if (client.endAfterUse !== undefined) void this.startEnding(client, client.endAfterUse);
  }

  /** A lease on a held client: its use lasts until the lease is released or revoked. */
  lease(client: ConversationClient): ConversationLease {
    client.leases += 1;
    const lease = new Lease(this.id, client, (held) => {
      this.leases.delete(held);
      held.client.leases -= 1;
      this.release(held.client);
    });
    this.leases.add(lease);
    return lease;
  }

  /** A client that cannot serve new uses (lost, expired): new uses get another; it ends. */
  drop(client: ConversationClient): void {
    if (this.current.get(client.key) === client) this.current.delete(client.key);
    if (client.phase === "ending" || client.phase === "ended") return;
    const reason: ConversationEndReason = client.expired ? "expired" : "lost";
    if (client.uses === 0) void this.startEnding(client, reason);
    else client.endAfterUse ??= reason;
  }

  /** One operation charged to the row, or `pool-full` (operations). Returns the uncharge. */
  charge(keyHash: string): () => void {
    if (this.operations >= this.settings.maxOperations) throw this.refuse(keyHash, "operations");
    this.operations += 1;
    let charged = true;
    return () => {
      if (!charged) return;
      charged = false;
      this.operations -= 1;
    };
  }

  /** The refusal for a full budget, reported as such. */
  refuse(keyHash: string, limit: ConversationLimit): McpPoolError {
    this.report(keyHash, { kind: "refused", limit });
    return this.full(limit);
  }

  // ── Endings ────────────────────────────────────────────────────────────────────

  /** Ends the idle clients unused for `idleMs`, as ending slots allow; returns how many. */
  sweep(): number {
    const due = this.sweepable(this.#shared.now());
    for (const client of due) void this.startEnding(client, "idle");
    return due.length;
  }

  /**
   * Ends a client: out of the client budgets and into the ending one (and an operation)
   * until its local close has really finished. Resolves with the remote outcome, which
   * comes before the local close; the whole ending is tracked for settled().
   */
  startEnding(client: ConversationClient, reason: ConversationEndReason): Promise<SessionEnd> {
    if (client.remote !== undefined) return client.remote;
    this.clients.delete(client);
    if (this.current.get(client.key) === client) this.current.delete(client.key);
    this.ending.add(client);
    this.operations += 1;
    client.phase = "ending";
    const started = this.#shared.now();
    const closeReason = CLOSE_REASONS[reason];
    const remote = client.endRemote(closeReason, this.#shared.endTimeoutMs);
    client.remote = remote;
    const ending = remote
      .then(async (end) => {
        await client.closeLocal(closeReason).catch(() => undefined);
        return end;
      })
      .then((end) => {
        this.ending.delete(client);
        this.operations -= 1;
        client.phase = "ended";
        if (client.deferred) this.unsettled -= 1;
        if (!isResolved(end.outcome)) this.unresolvedEndings += 1;
        this.report(client.keyHash, {
          kind: "ended",
          reason,
          outcome: end.outcome,
          resolved: isResolved(end.outcome),
          ...(end.status !== undefined ? { status: end.status } : {}),
          durationMs: this.#since(started),
        });
        return end;
      });
    client.ending = ending;
    this.#shared.track(ending);
    return remote;
  }

  /**
   * Ends one client for terminate() and answers its outcome, or `timed-out` at `deadline`
   * (reported `deferred`, then `ended` when it finishes). A client in use is never ended
   * under its holders: it ends when they let go.
   */
  async terminate(
    client: ConversationClient,
    deadline: Promise<"deadline">,
    started: number,
  ): Promise<TerminateResult> {
    let remote: Promise<SessionEnd>;
    if (client.remote !== undefined) {
      remote = client.remote;
    } else {
      if (this.current.get(client.key) === client) this.current.delete(client.key);
      if (client.uses === 0) {
        remote = this.startEnding(client, "terminated");
      } else {
        client.endAfterUse ??= "terminated";
        remote = client.whenUnused().then(() => this.startEnding(client, "terminated"));
      }
    }
    const answer = await Promise.race([remote, deadline]);
    const base = {
      serverId: this.id,
      conversationId: client.identity.conversationId,
      keyHash: client.keyHash,
      durationMs: this.#since(started),
    };
    if (answer === "deadline") {
      if (!client.deferred) {
        client.deferred = true;
        this.unsettled += 1;
        this.report(client.keyHash, { kind: "deferred", reason: "terminated" });
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

  /**
   * Every client stops taking new uses: leases are revoked, idle clients end now, clients
   * in use end when their operations settle. Listings stop being served.
   */
  retire(reason: ConversationEndReason): Promise<void> {
    this.listings.invalidate(() => true);
    this.current.clear();
    for (const lease of [...this.leases]) {
      this.report(lease.keyHash, { kind: "revoked", reason });
      lease.release();
    }
    const endings: Promise<unknown>[] = [];
    for (const client of [...this.clients]) {
      if (client.uses === 0 && client.phase === "open") {
        endings.push(this.startEnding(client, reason));
      } else {
        client.endAfterUse ??= reason;
        endings.push(client.whenUnused().then(() => client.ending));
      }
    }
    for (const client of this.ending) endings.push(client.ending ?? Promise.resolve());
    return Promise.all(endings).then(() => undefined);
  }

  report(keyHash: string, fields: Omit<ConversationEvent, "type" | "serverId" | "keyHash">): void {
    this.#shared.emit({ type: "conversation", serverId: this.id, keyHash, ...fields });
  }

  // ── Budgets ────────────────────────────────────────────────────────────────────

  /**
   * Room for one more client of `principal`: the idle clients to end for it (least
   * recently used first, the principal's own for its own budget), or the budget that
   * refuses. Ending them must fit `maxEnding`, or `ending` refuses: never a queue.
   */
  roomFor(principal: string): { victims: ConversationClient[] } | { limit: ConversationLimit } {
    const { maxClients, maxClientsPerPrincipal, maxEnding } = this.settings;
    const victims: ConversationClient[] = [];
    const oldestIdle = (mine: boolean): ConversationClient | undefined =>
      [...this.clients]
        .filter((c) => c.idle && !victims.includes(c) && (!mine || c.principal === principal))
        .sort((a, b) => a.lastUsed - b.lastUsed)[0];
    const theirs = [...this.clients].filter((c) => c.principal === principal).length;
    if (theirs >= maxClientsPerPrincipal) {
      const victim = oldestIdle(true);
      if (victim === undefined) return { limit: "principal" };
      victims.push(victim);
    }
    if (this.clients.size - victims.length >= maxClients) {
      const victim = oldestIdle(false);
      if (victim === undefined) return { limit: "pool" };
      victims.push(victim);
    }
    if (victims.length > 0 && this.ending.size + victims.length > maxEnding) {
      return { limit: "ending" };
    }
    return { victims };
  }

  /**
   * The idle clients unused for `idleMs` at `now`, oldest first, as many as the free
   * ending slots allow: the rest wait for a later sweep.
   */
  sweepable(now: number): ConversationClient[] {
    const { idleMs, maxEnding } = this.settings;
    if (!idleMs) return [];
    const due = [...this.clients]
      .filter((client) => client.idle && now - client.lastUsed >= idleMs)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    return due.slice(0, Math.max(0, maxEnding - this.ending.size));
  }

  /** The refusal for a full budget, with the budget in `detail.limit`. */
  full(limit: ConversationLimit): McpPoolError {
    const { maxClients, maxClientsPerPrincipal, maxEnding, maxOperations } = this.settings;
    const why: Record<ConversationLimit, string> = {
      pool: `all ${maxClients} of its clients are in use (maxClients)`,
      principal: `this principal's ${maxClientsPerPrincipal} clients are all in use (maxClientsPerPrincipal)`,
      ending: `making room needs an ending and ${maxEnding} are in progress (maxEnding)`,
      operations: `${maxOperations} operations are outstanding (maxOperations)`,
    };
    return new McpPoolError("pool-full", `server "${this.id}" is full: ${why[limit]}`, {
      serverId: this.id,
      limit,
    });
  }

  /** Counts only. */
  stats(): ConversationStats {
    let inUse = 0;
    let idle = 0;
    let opening = 0;
    for (const client of this.clients) {
      if (client.phase === "opening") opening += 1;
      if (client.uses > 0) inUse += 1;
      else if (client.idle) idle += 1;
    }
    return {
      clients: this.clients.size,
      inUse,
      idle,
      opening,
      ending: this.ending.size,
      operations: this.operations,
      unsettled: this.unsettled,
      unresolvedEndings: this.unresolvedEndings,
      leases: this.leases.size,
      listings: this.listings.size,
    };
  }

  #newClient(key: string, keyHash: string, identity: ConversationIdentity): ConversationClient {
    const row = this.row;
    return new ConversationClient({
      id: this.#shared.nextClientId(),
      key,
      keyHash,
      principal: principalKey(identity),
      identity,
      row: this.row,
      context: this.#shared.context,
      routes: this.#shared.routes,
      lastUsed: this.#shared.now(),
      onLost: (lost) => this.drop(lost),
      era: () => this.#shared.eraOf(row),
      onListChanged: (changed) =>
        this.listings.invalidate(
          (listing) =>
            listing === changed.listing ||
            (changed.lastShareKey !== undefined && listing.shareKey === changed.lastShareKey),
        ),
    });
  }

  #since(started: number): number {
    return Math.max(0, this.#shared.now() - started);
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
