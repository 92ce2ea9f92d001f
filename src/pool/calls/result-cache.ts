/**
 * The result cache: a local model often makes
 * the same read twice in a turn, and the second can be answered from memory.
 *
 * Opt-in, and then only for tools that declare readOnlyHint or idempotentHint on rows that
 * set trustAnnotations — a tool with side effects marked read-only would have its second
 * call swallowed, so the operator says which servers to believe. Keyed on the tool and its
 * arguments after coercion, key order aside. Never a failure, never a raw call; the whole
 * text is kept and cut on the way out, so a hit obeys the cap of the call that asked.
 * Cleared per server by a close, a tool-list change (the pool calls clear()) and by any
 * call that is not read-only reaching that server.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson } from "../core/fingerprint.js";
import { finishResult, resultText, type FinishedResult } from "./results.js";
import type { ToolAnnotations } from "../core/types.js";

/** How long an answer is kept, ms: about a turn, since it bounds what the pool cannot see. */
export const DEFAULT_RESULT_CACHE_TTL_MS = 30_000;
/** Answers kept at most, across servers; the least recently used goes first. */
export const DEFAULT_RESULT_CACHE_MAX_ENTRIES = 256;

export interface ResultCacheOptions {
  /** How long an answer is kept, ms. Default 30000. */
  ttlMs?: number;
  /** Answers kept at most. Default 256. */
  maxEntries?: number;
}

/** One call, as far as the cache needs to know it. */
export interface CacheableCall {
  serverId: string;
  toolName: string;
  annotations: ToolAnnotations | undefined;
  /** The row sets trustAnnotations. */
  trusted: boolean;
  /** The arguments after coercion. */
  args: Record<string, unknown>;
  raw?: boolean | undefined;
  /** false: ask the server, and keep the new answer. */
  cache?: boolean | undefined;
  /** The cap of this call, for a hit; 0 is none. */
  maxResultChars: number;
}

/** What the pool's invoke step answers with. */
/** What a call's invocation answers: finishResult()'s output. */
export type Invoked = FinishedResult;

interface Entry {
  serverId: string;
  text: string;
  expires: number;
}

export class ResultCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  /** Per server, bumped by every clear: an answer read before a clear is not stored after it. */
  readonly #generations = new Map<string, number>();

  constructor(options: ResultCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_RESULT_CACHE_TTL_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_RESULT_CACHE_MAX_ENTRIES;
  }

  /** Answers kept now, expired ones included until they are looked at. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Runs one call through the cache: answers a hit without `invoke`, or invokes, stores a
   * cacheable answer and clears the server's answers when the call was not read-only.
   */
  async run(
    call: CacheableCall,
    invoke: () => Promise<Invoked>,
  ): Promise<Invoked & { cached?: true }> {
    const hints = call.trusted ? call.annotations : undefined;
    const readOnly = hints?.readOnlyHint === true;
    const cacheable = !call.raw && (readOnly || hints?.idempotentHint === true);
    const key = cacheable
      ? `${call.serverId}\0${call.toolName}\0${canonicalJson(call.args)}`
      : undefined;
    if (key !== undefined && call.cache !== false) {
      const hit = this.#get(key);
      if (hit !== undefined) {
        const result: CallToolResult = { content: [{ type: "text", text: hit }] };
        const options = { serverId: call.serverId, maxChars: call.maxResultChars };
        return { ...finishResult(result, options, hit), cached: true };
      }
    }
    // What was read before a write is not what would be read after it — nor what a read
    // racing the write would see, so a write clears again once it is answered.
    if (!readOnly) this.clear(call.serverId);
    const generation = this.#generation(call.serverId);
    let out: Invoked;
    try {
      out = await invoke();
    } finally {
      if (!readOnly) this.clear(call.serverId);
    }
    if (key !== undefined && (!readOnly || generation === this.#generation(call.serverId))) {
      this.#set(key, call.serverId, out.truncated ? resultText(out.result) : out.text);
    }
    return out;
  }

  /** Forgets every answer of one server. */
  clear(serverId: string): void {
    this.#generations.set(serverId, this.#generation(serverId) + 1);
    for (const [key, entry] of this.#entries) {
      if (entry.serverId === serverId) this.#entries.delete(key);
    }
  }

  #generation(serverId: string): number {
    return this.#generations.get(serverId) ?? 0;
  }

  #get(key: string): string | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expires <= Date.now()) return undefined;
    this.#entries.set(key, entry); // most recently used last
    return entry.text;
  }

  #set(key: string, serverId: string, text: string): void {
    if (this.#maxEntries <= 0 || this.#ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { serverId, text, expires: Date.now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }
}
