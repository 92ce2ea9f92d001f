/**
 * The reconciler: the pool's servers as rows say they should be. It owns the entries in
 * configuration order and the reconcile queue; a reconcile computes a plan from (previous
 * rows, next rows) with planReconcile() and applies it, one run at a time, then dials the
 * eager servers that are due. stop(), reconnect() and shutdown
 * run on the same queue, so nothing interleaves with a reconcile.
 */
import { isConversationRow } from "../../config/conversation.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import { eachInTurns, mapInTurns } from "./batches.js";
import { RowEntry, type ConversationRegistry } from "../conversations/registry.js";
import { checkRowDurations } from "../calls/duration-checks.js";
import { McpPoolError } from "../core/errors.js";
import { planReconcile, type ReconcilePlan } from "./plan.js";
import { ReconcileQueue } from "./queue.js";
import type { EntryContext } from "../server/context.js";
import type { ServerEntry } from "../server/entry.js";
import {
  connectionHash,
  type CachedTools,
  type ProfileMemo,
  type ToolsCacheStore,
} from "../catalog/tools-cache.js";
import type { PoolLog } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

/** Bound on how long an early listing or call waits for the first reconcile, ms. */
export const READY_WAIT_MS = 10_000;

/** Children started at once by a reconcile, so forty `npx` servers do not trample each other. */
export const DEFAULT_MAX_CONCURRENT_STARTS = 8;

/** What the reconciler reads of the pool's options (McpPoolOptions documents each). */
export interface ReconcilerOptions {
  load?: () => readonly McpServerConfig[] | Promise<readonly McpServerConfig[]>;
  maxConcurrentStarts?: number;
  syncDebounceMs?: number;
  lazy?: boolean;
  indexTools?: boolean;
  toolsCache?: ToolsCacheStore;
  learnLazyTools?: boolean;
  rowsFrom?: string;
}

export interface ReconcilerInit {
  options: ReconcilerOptions;
  context: EntryContext;
  conversations: ConversationRegistry;
  log: PoolLog;
  /** The set of entries or their order changed: the index is stale. */
  changed(): void;
  /**
   * A reconcile's rows are in place, each lazy row with its cached era: the ids it added,
   * removed, and changed (restarted or written otherwise). Not called when it changed none.
   */
  rowsChanged(change: { added: string[]; removed: string[]; changed: string[] }): void;
  /** A row was taken without a restart: its pin may say otherwise now. */
  updated(entry: ServerEntry): void;
  /** What host profiles taught about a row, kept beside its list. */
  profiles?: {
    learn(entry: ServerEntry, memo: ProfileMemo): void;
    memo(id: string): ProfileMemo | undefined;
  };
}

/** A list, the era verdict and the profile memo beside it, as one key: any changing is saved again. */
function savedKey(entry: ServerEntry, memo: ProfileMemo | undefined): string {
  const verdict = entry.verdict;
  const era = verdict ? `${verdict.era}@${verdict.at}` : "";
  const scope = entry.cacheScope ?? "";
  return `${entry.fingerprint ?? ""}|${era}|${memo ? JSON.stringify(memo) : ""}|${scope}`;
}

export class Reconciler {
  readonly #init: ReconcilerInit;
  readonly #queue: ReconcileQueue;
  readonly #entries = new Map<string, ServerEntry>();
  #order: readonly ServerEntry[] = [];
  #rows: readonly McpServerConfig[] | undefined;
  /** What the tools cache holds per server (savedKey), so an unchanged list is not saved again. */
  readonly #savedFingerprints = new Map<string, string | undefined>();
  #closed = false;
  /** A hand-over went through: the servers are another daemon's, this pool reconciles none. */
  #handedOver = false;
  /** A hand-over holds the queue now: what is asked for meanwhile waits for it, and says so. */
  #handingOver = false;
  /** The first reconcile, settled or not: what an early call or listing waits for. */
  #firstSync: Promise<void> | undefined;
  #firstSyncDone = false;

  constructor(init: ReconcilerInit) {
    this.#init = init;
    const debounceMs = init.options.syncDebounceMs;
    this.#queue = new ReconcileQueue({
      ...(debounceMs !== undefined ? { debounceMs } : {}),
      onError: (error) => init.log.error?.(`mcpool: reconcile failed: ${(error as Error).message}`),
      onFire: () => this.#waitsForHandOver(),
    });
  }

  /** A reconcile asked for while a hand-over holds the queue: the log says why it waits. */
  #waitsForHandOver(): void {
    if (!this.#handingOver) return;
    this.#init.log.info?.(
      "mcpool: a reconcile (an edit of the configuration, a reload, a restart or stop of one server) asked for during the hand-over waits for it to end: it runs here if the hand-over fails; if it goes through, the new daemon reads the configuration itself",
    );
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The entries in configuration order. */
  entries(): readonly ServerEntry[] {
    return this.#order;
  }

  find(id: string): ServerEntry | undefined {
    return this.#entries.get(id);
  }

  /** The entry of `id`; throws `unknown-server`. */
  entry(id: string): ServerEntry {
    const entry = this.#entries.get(id);
    if (!entry)
      throw new McpPoolError("unknown-server", `unknown server "${id}"`, { serverId: id });
    return entry;
  }

  /** Whether a server that went down comes back by itself: eager, enabled, still ours. */
  revives(entry: ServerEntry): boolean {
    return (
      !this.#closed &&
      isEnabled(entry.row) &&
      !this.#isLazy(entry.row) &&
      !isConversationRow(entry.row) &&
      this.#entries.get(entry.id) === entry
    );
  }

  sync(configs?: readonly McpServerConfig[]): Promise<void> {
    return this.#first(this.run(() => this.#reconcile(configs)));
  }

  syncSoon(): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    return this.#first(this.#queue.soon(() => this.#reconcile(undefined)));
  }

  /** Whether the first reconcile is still running. */
  starting(): boolean {
    return this.#firstSync !== undefined && !this.#firstSyncDone;
  }

  ready(timeoutMs = READY_WAIT_MS): Promise<void> {
    const first = this.#firstSync;
    if (first === undefined || this.#firstSyncDone) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    return Promise.race([first, bound]).finally(() => clearTimeout(timer));
  }

  flush(): Promise<void> {
    return this.#queue.flush();
  }

  /** Runs `work` on the reconcile queue; a closed pool rejects rather than throws. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(closedError());
    this.#waitsForHandOver();
    // Asked for while a hand-over held the queue and went through: the servers are not ours.
    return this.#queue.run(() => (this.#handedOver ? Promise.reject(handedError()) : work()));
  }

  /**
   * Runs a hand-over to another daemon as one turn of the queue: a reconcile, stop or
   * reconnect asked meanwhile waits for it. If `work` resolves, the servers went: before the
   * queue goes on, this pool stops reconciling (what waited does nothing; the other daemon
   * read the configuration itself). If it rejects, what waited runs next.
   */
  handingOver<T>(work: () => Promise<T>): Promise<T> {
    return this.run(async () => {
      this.#handingOver = true;
      try {
        const result = await work();
        this.#handedOver = true;
        return result;
      } finally {
        this.#handingOver = false;
      }
    });
  }

  /** Runs `work` on the queue even once closed: the entries' own reaps. */
  schedule(work: () => Promise<void>): Promise<void> {
    return this.#queue.run(work);
  }

  async stop(id: string): Promise<void> {
    // A reconcile may be waiting on this server's start: it is ended first, so the stop's turn
    // of the queue comes now, not at the connect timeout.
    await this.#entries.get(id)?.endStart();
    return this.run(async () => {
      const entry = this.entry(id);
      await Promise.all([entry.stop(), this.#init.conversations.end(id)]);
    });
  }

  reconnect(id: string): Promise<void> {
    return this.run(async () => {
      if (this.#rows === undefined && !this.#init.options.load) {
        throw new McpPoolError(
          "no-configs",
          `reconnect("${id}") has no rows to reconcile against; call sync(rows) first`,
        );
      }
      const entry = this.entry(id);
      await Promise.all([entry.reset(), this.#init.conversations.end(id)]);
      if (isEnabled(entry.row) && !isConversationRow(entry.row)) await entry.ensure();
    });
  }

  /** Closes every server and forgets them; refuses everything afterwards. */
  async shutdown(): Promise<void> {
    this.#queue.cancel();
    this.#closed = true;
    await this.#init.conversations.close();
    // A reconcile may be waiting on a server that never answers: its start is ended first,
    // so the shutdown's turn of the queue comes within the drain, not at the connect timeout.
    await Promise.all([...this.#entries.values()].map((entry) => entry.endStart()));
    await this.#queue.run(async () => {
      const entries = [...this.#entries.values()];
      await Promise.all(
        entries.map(async (entry) => {
          await entry.remove("shutdown");
          await entry.retired();
        }),
      );
      this.#entries.clear();
      this.#order = [];
      this.#init.changed();
    });
  }

  #first(run: Promise<void>): Promise<void> {
    this.#firstSync ??= run.then(
      () => void (this.#firstSyncDone = true),
      () => void (this.#firstSyncDone = true),
    );
    return run;
  }

  async #reconcile(configs: readonly McpServerConfig[] | undefined): Promise<void> {
    if (this.#closed || this.#handedOver) return;
    const rows = configs ?? (await this.#loadRows());
    checkRowDurations(rows);
    this.#rows = rows;
    const previous = new Map([...this.#entries].map(([id, entry]) => [id, entry.row]));
    const plan = planReconcile(previous, rows);
    // Built before anything changes, in turns: the pool stays consistent while it answers.
    const context = this.#init.context;
    const added = await mapInTurns(plan.add, (row) => new RowEntry(row, context));
    const closing: Promise<void>[] = [];
    for (const id of plan.remove) {
      const entry = this.#entries.get(id)!;
      this.#entries.delete(id);
      closing.push(this.#remove(entry));
    }
    for (const row of plan.restart) closing.push(this.#entries.get(row.id)!.replace(row));
    for (const row of plan.update) {
      const entry = this.#entries.get(row.id)!;
      entry.update(row);
      this.#init.updated(entry);
      if ((!isEnabled(row) || isConversationRow(row)) && entry.connection)
        closing.push(entry.close("changed"));
    }
    for (const entry of added) this.#entries.set(entry.id, entry);
    this.#order = plan.order.map((id) => this.#entries.get(id)!);
    this.#init.changed();
    // The first conversation row loads the registry's body (conversations/registry.ts).
    await this.#init.conversations.sync(rows);
    await Promise.all(closing);

    const now = Date.now();
    // A lazy row is registered, not dialled: its last-known list comes from the tools cache.
    // With a store, every row takes the era its server was found to speak from it.
    const cached = this.#init.options.toolsCache !== undefined;
    /** Lazy rows the cache knows nothing of: learned once the eager rows have started. */
    const unknown: ServerEntry[] = [];
    await eachInTurns(
      added.filter((entry) => isEnabled(entry.row) && (cached || this.#isLazy(entry.row))),
      async (entry) => {
        if (!(await this.#loadCachedTools(entry)) && this.#isLazy(entry.row)) unknown.push(entry);
      },
    );
    this.#told(plan, previous);
    const due = this.#order.filter(
      (entry) =>
        isEnabled(entry.row) &&
        !this.#isLazy(entry.row) &&
        !entry.stopped &&
        !entry.connection &&
        !entry.connecting &&
        (entry.retryAt === undefined || entry.retryAt <= now),
    );
    const limit = this.#init.options.maxConcurrentStarts ?? DEFAULT_MAX_CONCURRENT_STARTS;
    await startAll(due, limit);
    const { learnLazyTools, indexTools } = this.#init.options;
    if (learnLazyTools === true && indexTools !== false && unknown.length > 0) {
      // Not awaited: a reconcile (and whoever waits for the first) is not held by it.
      void this.#learn(unknown, limit);
    }
  }

  /** The rows a reconcile added, removed or changed, told once they are in place. */
  #told(plan: ReconcilePlan, previous: ReadonlyMap<string, McpServerConfig>): void {
    const written = (row: McpServerConfig): boolean =>
      JSON.stringify(previous.get(row.id)) !== JSON.stringify(row);
    const change = {
      added: plan.add.map((row) => row.id),
      removed: [...plan.remove],
      changed: [...plan.restart, ...plan.update.filter(written)].map((row) => row.id),
    };
    if (Object.values(change).some((ids) => ids.length > 0)) this.#init.rowsChanged(change);
  }

  /**
   * Each lazy row's tools, learned once: started, listed (listing saves the list to the
   * tools cache), and stopped again unless something began to use it meanwhile. A row
   * removed, started or listed meanwhile is left as it is; one that fails to start shows
   * its error as any row does, and is not tried again until the config names it anew.
   */
  async #learn(entries: readonly ServerEntry[], limit: number): Promise<void> {
    const learnable = (entry: ServerEntry): boolean =>
      !this.#closed &&
      this.#entries.get(entry.id) === entry &&
      isEnabled(entry.row) &&
      !entry.stopped &&
      !entry.connection &&
      !entry.connecting &&
      entry.tools.length === 0;
    await startAll(entries, limit, async (entry) => {
      if (!learnable(entry)) return;
      const connection = await entry.ensure().catch(() => undefined);
      if (connection === undefined || this.#closed) return;
      if (connection.inflight === 0 && entry.connection === connection) await entry.close("idle");
    });
  }

  #isLazy(row: McpServerConfig): boolean {
    return row.lazy ?? this.#init.options.lazy ?? false;
  }

  /** Takes what the tools cache holds for `entry`'s connection; false when it holds nothing. */
  async #loadCachedTools(entry: ServerEntry): Promise<boolean> {
    const store = this.#init.options.toolsCache;
    if (!store || this.#init.options.indexTools === false) return false;
    try {
      const cached = await store.load(entry.id);
      if (cached && cached.connection === connectionHash(entry.row)) {
        if (cached.era) entry.adoptVerdict(cached.era);
        if (cached.profiles) this.#init.profiles?.learn(entry, cached.profiles);
        if (!this.#isLazy(entry.row) || cached.private === true) return true;
        entry.adoptCached(cached.tools);
        this.#savedFingerprints.set(entry.id, savedKey(entry, cached.profiles));
        return true;
      }
    } catch (error) {
      serverLog(this.#init.log, entry.id).error(
        `reading the tools cache failed: ${(error as Error).message}`,
      );
    }
    return false;
  }

  /** Hands a list the store does not hold yet to the tools cache; never awaited. */
  saveTools(entry: ServerEntry): void {
    const store = this.#init.options.toolsCache;
    const memo = this.#init.profiles?.memo(entry.id);
    const key = savedKey(entry, memo);
    if (!store || this.#savedFingerprints.get(entry.id) === key) return;
    this.#savedFingerprints.set(entry.id, key);
    // A private list is for the caller it was listed for: not kept for anyone.
    const secret = entry.cacheScope === "private";
    const cached: CachedTools = {
      connection: connectionHash(entry.row),
      tools: secret ? [] : entry.tools,
      ...(secret ? { private: true } : {}),
      ...(entry.verdict ? { era: entry.verdict } : {}),
      ...(memo ? { profiles: memo } : {}),
    };
    Promise.resolve()
      .then(() => store.save(entry.id, cached))
      .catch((error: unknown) => {
        this.#savedFingerprints.delete(entry.id);
        serverLog(this.#init.log, entry.id).error(
          `saving the tools cache failed: ${(error as Error).message}`,
        );
      });
  }

  /** A row left the configuration: its server stops, and the log says so, with what ran. */
  async #remove(entry: ServerEntry): Promise<void> {
    const pid = entry.connection?.pid;
    const running = entry.connection !== undefined || entry.connecting;
    await entry.remove("removed");
    const from = this.#init.options.rowsFrom ?? "the configuration";
    serverLog(this.#init.context.log, entry.id).info(
      running
        ? `stopped${pid === undefined ? "" : ` (pid ${pid})`}: removed from ${from}`
        : `removed from ${from} (it was not running)`,
    );
  }

  async #loadRows(): Promise<readonly McpServerConfig[]> {
    if (!this.#init.options.load) {
      throw new McpPoolError(
        "no-configs",
        "sync() was given no rows and the pool has no load() to read them from",
      );
    }
    return this.#init.options.load();
  }
}

function closedError(): McpPoolError {
  return new McpPoolError("closed", "the pool is closed");
}

function handedError(): McpPoolError {
  return new McpPoolError("closed", "the pool's servers were handed over to a new daemon");
}

async function startAll(
  entries: readonly ServerEntry[],
  limit: number,
  start: (entry: ServerEntry) => Promise<unknown> = (entry) => entry.ensure(),
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < entries.length) {
      const entry = entries[next++]!;
      // A failure is recorded on the entry and reported; it does not fail the reconcile.
      await start(entry).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, entries.length) }, worker));
}
