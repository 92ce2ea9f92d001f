/**
 * One `session: "conversation"` row as the registry keeps it (SPEC B9): its budgets and
 * identity rules read from the row, the clients it counts, its endings and operations,
 * its leases and listings — and the two decisions that are pure arithmetic over those:
 * which idle clients make room for a new one (or which budget refuses), and which are due
 * to be swept. Also the entry the pool registers for such a row, which never dials.
 */
import { isConversationRow } from "../config/conversation.js";
import type { McpServerConfig } from "../config/rows.js";
import type { ConversationClient } from "./conversation-client.js";
import { ListingStore, type Listing } from "./conversation-listings.js";
import type { ConversationLimit, ConversationStats } from "./conversation-types.js";
import { McpPoolError } from "./errors.js";
import type { IdentityRules } from "./identity.js";
import { ServerEntry, type Connection } from "./server-entry.js";

/** Open clients per row when the row does not say: a child or session each, so few. */
export const DEFAULT_MAX_CLIENTS = 8;
/** Endings in progress per row: each is a DELETE (or a child's stop) that may be slow. */
export const DEFAULT_MAX_ENDING = 4;
/** Calls, listings and endings outstanding per row. */
export const DEFAULT_MAX_OPERATIONS = 64;
/** A client unused this long is ended at the next use of its row, ms (10 min). */
export const DEFAULT_CONVERSATION_IDLE_MS = 600_000;

/** A hold on one conversation's client across a turn: it is not evicted, swept or ended. */
export interface ConversationLease extends AsyncDisposable {
  readonly serverId: string;
  readonly keyHash: string;
  /** False once released, or revoked (the row went away, the pool closed). */
  readonly held: boolean;
  /** Lets the client go; idempotent. */
  release(): void;
}

export interface RowSettings {
  maxClients: number;
  maxClientsPerPrincipal: number;
  maxEnding: number;
  maxOperations: number;
  idleMs: number;
  definitionTtlMs: number;
  rules: IdentityRules;
}

export function settingsOf(row: McpServerConfig): RowSettings {
  const options = row.conversation ?? {};
  const maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
  return {
    maxClients,
    maxClientsPerPrincipal: Math.min(options.maxClientsPerPrincipal ?? maxClients, maxClients),
    maxEnding: options.maxEnding ?? DEFAULT_MAX_ENDING,
    maxOperations: options.maxOperations ?? DEFAULT_MAX_OPERATIONS,
    idleMs: options.idleMs ?? DEFAULT_CONVERSATION_IDLE_MS,
    definitionTtlMs: options.definitionTtlMs ?? 0,
    rules: {
      requirePrincipal: options.requirePrincipal ?? true,
      requireTenant: options.requireTenant ?? false,
    },
  };
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

  constructor(row: McpServerConfig) {
    this.row = row;
    this.settings = settingsOf(row);
  }

  get id(): string {
    return this.row.id;
  }

  /** Takes an edited row: its budgets, rules and share names apply from now on. */
  update(row: McpServerConfig): void {
    this.row = row;
    this.settings = settingsOf(row);
  }

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
}

export class Lease implements ConversationLease {
  readonly serverId: string;
  readonly keyHash: string;
  readonly client: ConversationClient;
  held = true;
  readonly #onRelease: (lease: Lease) => void;

  constructor(serverId: string, client: ConversationClient, onRelease: (lease: Lease) => void) {
    this.serverId = serverId;
    this.keyHash = client.keyHash;
    this.client = client;
    this.#onRelease = onRelease;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.#onRelease(this);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.release();
  }
}

/**
 * The entry the pool registers for every row. A conversation row's is never dialled as
 * shared: whatever asks for its connection without an identity (resources, prompts, pins,
 * a reconnect, a reconcile) is refused `no-identity`, and nothing is opened.
 */
export class RowEntry extends ServerEntry {
  override ensure(options?: { ignoreBackoff?: boolean }): Promise<Connection> {
    if (!isConversationRow(this.row)) return super.ensure(options);
    return Promise.reject(
      new McpPoolError(
        "no-identity",
        `server "${this.id}" keeps a client per conversation: only calls and listings that name an identity reach it`,
        { serverId: this.id },
      ),
    );
  }
}
