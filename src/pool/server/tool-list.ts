/**
 * A server's tool list as the pool knows it: the last list it gave, its fingerprint, and
 * whether it is last-known (stale) rather than live. Re-listing after
 * tools/list_changed runs one walk at a time; a change asked for during a walk is walked
 * again once it ends, and a server that keeps changing is re-listed after a growing
 * backoff.
 *
 * A 2026-07-28 list says how long it stays fresh and for whom: one with a
 * positive `ttlMs` is listed again by the first use after it ran out (refresh), never by a
 * timer, so an idle pool stays idle; one without (a legacy server's, or `ttlMs: 0`, which
 * promises nothing) is good until the server says it changed, as before. Its scope stays
 * with it, for host-profiles.ts and the tools cache: a `private` list is its caller's alone.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

import { toolsFingerprint } from "../core/fingerprint.js";
import { listTools, type CacheHint, type CacheScope } from "../mcp/list-tools.js";
import type { McpClient } from "../mcp/client.js";
import type { PoolEvent } from "../core/types.js";

export type ToolsChanged = Extract<PoolEvent, { type: "tools-changed" }>;

/**
 * Walks in a row, each asked for by a list_changed that came during the one before, after
 * which the log says the server keeps changing its list: ten is past any server
 * that registers its tools in a few batches at start.
 */
export const RELIST_LOOP_AFTER = 10;

/**
 * A request this long after the last walk ended starts a new burst: a server that adds a
 * tool now and then is listed at once each time, never backed off.
 */
export const RELIST_QUIET_MS = 1_000;
/** The first backoff past {@link RELIST_LOOP_AFTER}, doubled each walk up to the cap. */
export const RELIST_BACKOFF_BASE_MS = 100;
/**
 * The longest wait between walks of a server that keeps changing: its list is at most this
 * much out of date, and a loop costs one listing per wait instead of hundreds a second.
 */
export const RELIST_BACKOFF_MAX_MS = 5_000;

/** The wait before the next walk of a burst that has made `walks` walks. */
export function relistBackoffMs(walks: number): number {
  if (walks < RELIST_LOOP_AFTER) return 0;
  return Math.min(RELIST_BACKOFF_MAX_MS, RELIST_BACKOFF_BASE_MS * 2 ** (walks - RELIST_LOOP_AFTER));
}

interface RelistRequest {
  client: McpClient;
  options: { timeout?: number };
  live: () => boolean;
  apply: (tools: Tool[], hint: CacheHint) => void;
  failed: (error: Error) => void;
  looping?: (text: string) => void;
}

/** An unref'd wait: a backoff never keeps the process alive. */
function unrefDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export class ToolList {
  /** The last list the server gave; empty after a crash. */
  tools: Tool[] = [];
  fingerprint: string | undefined;
  /** `tools` is a last-known list, not a live one. */
  stale = false;
  /** The scope the server gave the list (SEP-2549); undefined: it gave none. */
  scope: CacheScope | undefined;
  /** When the list stops being fresh (Date.now() ms); undefined: when the server says so. */
  expiresAt: number | undefined;
  /** The `ttlMs` the server gave the list (0 included); undefined: it gave none. */
  ttlMs: number | undefined;
  /** The walk in progress. */
  #walking: Promise<void> | undefined;
  /** A run of walks is going (walking or waiting out a backoff). */
  #running = false;
  /** The latest request not walked yet. */
  #next: RelistRequest | undefined;
  /** Walks in the current burst, and when the last one ended (performance.now()). */
  #burst = 0;
  #lastWalkEnd = -Infinity;

  /**
   * A live list: replaces the last one. Returns the tools-changed event when a list was
   * known before and this one hashes differently.
   */
  replace(serverId: string, tools: Tool[], hint: CacheHint = {}): ToolsChanged | undefined {
    const before = this.fingerprint;
    const previous = this.tools;
    this.tools = tools;
    this.scope = hint.scope;
    // `ttlMs: 0` says the list may be stale at once: it promises nothing, as no hint does.
    this.expiresAt = hint.ttlMs ? Date.now() + hint.ttlMs : undefined;
    this.ttlMs = hint.ttlMs;
    this.stale = false;
    this.fingerprint = toolsFingerprint(tools);
    if (before === undefined || before === this.fingerprint) return undefined;
    const was = new Set(previous.map((t) => t.name));
    const now = new Set(tools.map((t) => t.name));
    return {
      type: "tools-changed",
      serverId,
      before,
      after: this.fingerprint,
      tools: tools.length,
      added: tools.filter((t) => !was.has(t.name)).map((t) => t.name),
      removed: previous.filter((t) => !now.has(t.name)).map((t) => t.name),
    };
  }

  /** A list from a store, for a server not dialled: offered as stale. */
  adopt(tools: Tool[]): void {
    this.tools = tools;
    this.scope = undefined;
    this.expiresAt = undefined;
    this.ttlMs = undefined;
    this.fingerprint = toolsFingerprint(tools);
    this.stale = tools.length > 0;
  }

  /** The server is down or idle: what it listed stays offered, marked stale. */
  keepAsLastKnown(): void {
    this.stale = this.tools.length > 0;
  }

  /** The list no longer speaks for the server (removed, reconfigured, signed out). */
  forget(): void {
    this.tools = [];
    this.fingerprint = undefined;
    this.stale = false;
    this.scope = undefined;
    this.expiresAt = undefined;
    this.ttlMs = undefined;
  }

  /** The server's cache hint has run out on this list. */
  expired(now = Date.now()): boolean {
    return this.expiresAt !== undefined && now >= this.expiresAt;
  }

  /**
   * An expired list's next use: lists again unless a walk is already going, and
   * resolves once the walk in progress is done, so every use that comes meanwhile shares
   * that one walk. Takes relist()'s arguments.
   */
  refresh(...args: Parameters<ToolList["relist"]>): Promise<void> {
    if (!this.#running) {
      // A use, not a tools/list_changed: no burst of changes for the list-change backoff to count.
      this.#burst = 0;
      this.relist(...args);
    }
    return this.settled();
  }

  /**
   * tools/list_changed: walks every page of `client`'s list within `budgetMs`, now or once
   * more after the walk in progress, never two at a time, while `live()` holds; requests
   * that come during a walk or a backoff are one walk, made for the latest of them. A list
   * that arrives for a live connection goes to `apply`; a walk that fails leaves the list as
   * it was and is told to `failed`. A server that keeps changing its list (a request within
   * {@link RELIST_QUIET_MS} of the last walk, {@link RELIST_LOOP_AFTER} walks in a row) is
   * told to `looping` once per burst and is re-listed after a growing backoff from then on.
   */
  relist(
    client: McpClient,
    budgetMs: number | undefined,
    live: () => boolean,
    apply: (tools: Tool[], hint: CacheHint) => void,
    failed: (error: Error) => void,
    looping?: (text: string) => void,
  ): void {
    if (!this.#running && performance.now() - this.#lastWalkEnd > RELIST_QUIET_MS) this.#burst = 0;
    const options = budgetMs === undefined ? {} : { timeout: budgetMs };
    this.#next = { client, options, live, apply, failed, ...(looping ? { looping } : {}) };
    if (this.#running) return;
    this.#running = true;
    void this.#run();
  }

  async #run(): Promise<void> {
    try {
      while (this.#next) {
        const wait = relistBackoffMs(this.#burst);
        if (wait > 0) await unrefDelay(wait);
        const next = this.#next;
        this.#next = undefined;
        // A notice can come before its connection is the live one, so a walk asked for at
        // once is made and only its apply waits on live(); one held back is dropped with a
        // connection that went meanwhile.
        if (!next || (wait > 0 && !next.live())) continue;
        if (++this.#burst === RELIST_LOOP_AFTER) {
          next.looping?.(
            `sent tools/list_changed during each of ${RELIST_LOOP_AFTER} listings in a row; re-listing at most once every ${RELIST_BACKOFF_MAX_MS / 1000} s while it goes on`,
          );
        }
        const walk = (async () => {
          try {
            const { tools, hint } = await listTools(next.client, next.options);
            if (next.live()) next.apply(tools, hint);
          } catch (error) {
            next.failed(error as Error);
          }
        })();
        this.#walking = walk;
        await walk;
        this.#walking = undefined;
        this.#lastWalkEnd = performance.now();
      }
    } finally {
      // In the same turn as the last check: a change told after it starts a run of its own.
      this.#running = false;
    }
  }

  /**
   * Resolves once any walk in progress has finished, and the walks that follow it at once;
   * a walk held by the backoff is not waited for, so a server that never stops changing
   * cannot hold up a listing.
   */
  async settled(): Promise<void> {
    while (this.#walking) await this.#walking;
  }
}
