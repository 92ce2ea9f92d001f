/**
 * Per-conversation servers (docs/configuration.md, "Per-conversation servers"): the registry the pool
 * holds. A row with `session: "conversation"` is registered by the pool but never dialled
 * as shared (RowEntry below); every identity `{tenant?, principal?, conversationId}` a
 * caller names gets a client of its own.
 *
 * This is the registry's shell. The code that serves those rows — clients, budgets,
 * listings, calls and endings (conversations/rows.ts and the modules it uses) — loads with
 * the first conversation row, not with the pool. Until then the shell answers
 * as a registry without rows, and loads nothing; once loaded, it hands every question on.
 */
import { isConversationRow } from "../../config/conversation.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import type { CallRoutes } from "../calls/routes.js";
import type { ConversationTool } from "./calls.js";
import type { ConversationLease } from "./lease.js";
import type { ConversationRows } from "./rows.js";
import type {
  ConversationServerStats,
  ConversationStats,
  ConversationTools,
  ShareNames,
  TerminateResult,
} from "./types.js";
import type { Connection } from "../server/connection.js";
import type { EntryContext } from "../server/context.js";
import { McpPoolError } from "../core/errors.js";
import {
  checkSelector,
  type ConversationIdentity,
  type ConversationSelector,
} from "../core/identity.js";
import type { Invoked } from "../calls/result-cache.js";
import { ServerEntry } from "../server/entry.js";
import type { AdoptedConversation, Handable, OpenedConversation } from "../server/handoff.js";
import type { CallOptions } from "../calls/options.js";
import type { CallSignal, PoolEvent, PoolLog, ToolDescription } from "../core/types.js";
import { isHidden } from "../catalog/catalog.js";
import { describeTool } from "../catalog/describe.js";

export type { ConversationTool } from "./calls.js";
export type { ConversationLease } from "./lease.js";

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

/** Which of a conversation's tools a listing asks for: rows in scope, qualified names. */
export interface ListingScope {
  servers?: readonly string[] | undefined;
  names?: readonly string[] | undefined;
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

export class ConversationRegistry {
  readonly #init: ConversationRegistryInit;
  /** The rows of the last sync(), which the body serves once it is loaded. */
  #rows: readonly McpServerConfig[] = [];
  /** The ids of the conversation rows among them. */
  #served: ReadonlySet<string> = new Set();
  /** The registry's body (conversations/rows.ts), once loaded. */
  #body: ConversationRows | undefined;
  #loading: Promise<ConversationRows> | undefined;
  #closed = false;

  constructor(init: ConversationRegistryInit) {
    this.#init = init;
  }

  /** Whether `serverId` is a conversation row the registry serves. */
  has(serverId: string): boolean {
    return this.#served.has(serverId);
  }

  // ── Rows ─────────────────────────────────────────────────────────────────────────

  /**
   * Takes the pool's rows after a reconcile (conversations/rows.ts says what each edit
   * does). The first conversation row loads the body: the answer then resolves once the
   * body serves the rows; undefined when there is nothing to wait for.
   */
  sync(rows: readonly McpServerConfig[]): Promise<void> | undefined {
    this.#rows = rows;
    this.#served = new Set(
      rows.filter((row) => isConversationRow(row) && isEnabled(row)).map((row) => row.id),
    );
    if (this.#body) return void this.#body.sync(rows);
    if (this.#loading === undefined && (this.#served.size === 0 || this.#closed)) return undefined;
    return this.#load().then(() => undefined);
  }

  /** stop()/reconnect() of a row: its clients end as they fall idle; the row stays. */
  async end(serverId: string): Promise<void> {
    await (await this.#ready())?.end(serverId);
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
    const body = await this.#ready();
    if (body) return body.acquire(serverId, identity, options);
    this.#assertOpen();
    throw notConversationRow(serverId);
  }

  // ── Listings and calls ───────────────────────────────────────────────────────────

  /**
   * The conversation's tools on every conversation row in scope, with the binding of each
   * listing. A row whose listing is refused (a budget, a failed open) is left out and named
   * in `refused`; a missing or refused identity refuses the whole listing (`no-identity`).
   */
  async tools(identity: unknown, options: ListingScope = {}): Promise<ConversationTools> {
    const body = await this.#ready();
    if (body) return body.tools(identity, options);
    this.#assertOpen();
    return { tools: [], bindings: {}, refused: [] };
  }

  /** Every listing of the tenant (the principal's own, when named) stops being served. */
  permissionsChanged(selector: { tenant?: string; principal?: string } = {}): void {
    // Without the body there is no listing to stop.
    this.#body?.permissionsChanged(selector);
  }

  /** Every listing of the rows in scope (all when absent) stops being served. */
  toolsChanged(servers?: readonly string[]): void {
    this.#body?.toolsChanged(servers);
  }

  /**
   * The conversation tool a qualified name answers to, for the pool's call(); undefined
   * when no conversation row in scope could have made the name.
   */
  async resolve(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    opts: CallOptions,
  ): Promise<ConversationTool | undefined> {
    return (await this.#ready())?.resolve(qualified, scope, opts);
  }

  /**
   * What a definition has no room for, of the conversation tool a qualified name answers to
   * (as describe() is for the shared tools); undefined when no conversation row in scope
   * lists it for this conversation.
   */
  async describe(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    opts: CallOptions,
  ): Promise<ToolDescription | undefined> {
    const found = await this.resolve(qualified, scope, opts);
    if (found === undefined) return undefined;
    const row = found.conversation.served.row;
    return describeTool(found.tool, {
      ...found,
      serverId: row.id,
      hidden: isHidden(row, found.tool.name),
    });
  }

  /** Sends a resolved call on the conversation's own client (never cached, never retried). */
  invoke(
    indexed: ConversationTool,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<Invoked> {
    // Only the body resolves a conversation tool: it is loaded.
    if (this.#body) return this.#body.invoke(indexed, args, opts);
    return Promise.reject(notConversationRow(indexed.entry.id));
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
    const body = await this.#ready();
    if (body) return body.terminate(selector, options);
    this.#assertOpen();
    checkSelector(selector);
    return [];
  }

  /** Ends every idle client unused for its row's `idleMs`; returns how many endings began. */
  sweep(): number {
    return this.#body?.sweep() ?? 0;
  }

  /** Resolves once every ending in progress (local close included) has finished. */
  async settled(): Promise<void> {
    await (await this.#ready())?.settled();
  }

  // ── Hand-over to another daemon (server/handoff.ts) ──────────────────────────────

  /** Each conversation's open child, for another daemon to take over. */
  handable(): Handable[] {
    return this.#body?.handable() ?? [];
  }

  /** Takes up the conversations' children a previous daemon handed over (rows.ts). */
  async adopt(children: readonly AdoptedConversation[]): Promise<OpenedConversation[]> {
    if (children.length === 0) return [];
    return (this.#body ?? (await this.#load())).adopt(children);
  }

  // ── What the registry holds ──────────────────────────────────────────────────────

  /** Counts for one conversation row; undefined for any other row. */
  statsOf(serverId: string): ConversationStats | undefined {
    return this.#body?.statsOf(serverId);
  }

  /** Counts per conversation row in scope (all when absent), in configuration order. */
  stats(servers?: readonly string[]): ConversationServerStats[] {
    return this.#body?.stats(servers) ?? [];
  }

  /**
   * Ends every client (leases revoked, remote sessions ended) and waits for every ending.
   * Calls in flight settle first; an acquire still opening is refused (`closed`).
   */
  async close(): Promise<void> {
    this.#closed = true;
    await (await this.#ready())?.close();
  }

  // ── Internals ────────────────────────────────────────────────────────────────────

  /** The body, loaded once, serving the rows of the latest sync(). */
  #load(): Promise<ConversationRows> {
    return (this.#loading ??= import("./rows.js").then(({ ConversationRows }) => {
      const body = new ConversationRows(this.#init);
      body.sync(this.#rows);
      return (this.#body = body);
    }));
  }

  /** The body, waiting for it while it loads; undefined while no conversation row asked for it. */
  #ready(): ConversationRows | Promise<ConversationRows> | undefined {
    return this.#body ?? this.#loading;
  }

  #assertOpen(): void {
    if (this.#closed) throw closedError();
  }
}

/** The refusal of a conversation method on a row that is not a conversation row. */
export function notConversationRow(serverId: string): McpPoolError {
  return new McpPoolError(
    "unknown-server",
    `"${serverId}" is not a per-conversation server (session: "conversation")`,
    { serverId },
  );
}

export function closedError(): McpPoolError {
  return new McpPoolError("closed", "the pool is closed");
}
