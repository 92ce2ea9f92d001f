/**
 * The search index: for each word, the tools it turns up in and what the best
 * place it turns up there is worth, so a query scores only the tools that share a word with
 * it instead of walking the whole catalog.
 *
 * Kept per server. The catalog builds a new tool index after any server's list or row
 * changed; the next search walks it once and re-tokenizes only the servers whose qualified
 * names, titles, descriptions, slug or label differ from what their words were built from.
 * Scope and hiding are read at query time, as catalog() reads them. It ranks exactly as
 * searchCatalog() over catalog() does: the same words, weights, tie-breaks and order.
 */
import { labelOf, slugOf } from "../../config/rows.js";
import { byRank, queryWords, slugSkip, termsOf, WEIGHTS, type Scored } from "./search.js";
import type { ServerEntry } from "../server/entry.js";
import type { IndexedTool, ToolIndex } from "./tool-index.js";

/** A word in one of a server's tools: which tool (by its place in the server's run), and its weight. */
interface Posting {
  at: number;
  weight: number;
}

/** What a server's words were built from, one per tool; the words are kept while all of it is equal. */
interface ToolText {
  qualified: string;
  title: string | undefined;
  description: string | undefined;
}

/** One server's words, built from its tools' texts and its slug and label. */
interface ServerWords {
  slug: string;
  label: string;
  texts: readonly ToolText[];
  postings: ReadonlyMap<string, readonly Posting[]>;
  /** Words in each tool's name, for the tie-break. */
  nameCounts: readonly number[];
}

/** One server's run of the tool index's `ordered`: its tools, where they start, and their words. */
interface Run {
  entry: ServerEntry;
  tools: readonly IndexedTool[];
  start: number;
  words: ServerWords;
}

/** One server's tools among the best matches, best first. */
export interface SearchHit {
  entry: ServerEntry;
  tools: IndexedTool[];
}

export interface IndexSearchOptions {
  /** How many tools at most, over all servers. */
  limit: number;
  /** Whether a tool may be offered to this search (scope and hiding). */
  visible(indexed: IndexedTool): boolean;
}

export class SearchIndex {
  /** The tool index the runs were read from; another one means the catalog changed. */
  #version: ToolIndex | undefined;
  #runs: readonly Run[] = [];
  /** By server id; outlives a version, so an unchanged server's words are reused. */
  #words = new Map<string, ServerWords>();
  /** Per-tool sums for the run being scored; zeroed again after each run. */
  #totals = new Uint32Array(0);
  #inName = new Uint32Array(0);
  #built = 0;

  /** How many servers' words have been built so far: what a catalog change cost. */
  get built(): number {
    return this.#built;
  }

  /** The catalog changed: drop the runs (and the old tool index they hold), keep the words. */
  invalidate(): void {
    this.#version = undefined;
    this.#runs = [];
  }

  /**
   * The `limit` best visible tools of `index` for `query`, grouped by server: servers in the
   * order of their best tool, each server's tools best first. searchCatalog()'s ranking.
   */
  search(index: ToolIndex, query: string, options: IndexSearchOptions): SearchHit[] {
    const words = queryWords(query);
    if (words.length === 0 || options.limit <= 0) return [];
    this.#sync(index);
    const ranked: Scored<IndexedTool>[] = [];
    for (const run of this.#runs) this.#score(run, words, options, ranked);
    const byServer = new Map<ServerEntry, IndexedTool[]>();
    for (const { tool } of ranked.sort(byRank).slice(0, options.limit)) {
      const tools = byServer.get(tool.entry);
      if (tools) tools.push(tool);
      else byServer.set(tool.entry, [tool]);
    }
    return [...byServer].map(([entry, tools]) => ({ entry, tools }));
  }

  /** Adds the run's visible tools that share a word with the query to `ranked`. */
  #score(
    run: Run,
    words: readonly string[],
    options: IndexSearchOptions,
    ranked: Scored<IndexedTool>[],
  ): void {
    const totals = this.#totals;
    const inName = this.#inName;
    const touched: number[] = [];
    for (const word of words) {
      const postings = run.words.postings.get(word);
      if (postings === undefined) continue;
      for (const { at, weight } of postings) {
        if (totals[at] === 0) touched.push(at);
        totals[at] += weight;
        if (weight === WEIGHTS.name) inName[at] += 1;
      }
    }
    for (const at of touched) {
      const tool = run.tools[at]!;
      const nameCount = run.words.nameCounts[at]!;
      if (options.visible(tool)) {
        ranked.push({
          tool,
          score: totals[at]!,
          nameShare: nameCount === 0 ? 0 : inName[at]! / nameCount,
          order: run.start + at,
        });
      }
      totals[at] = 0;
      inName[at] = 0;
    }
  }

  /** Reads `index` into runs once per version, building words only for servers that changed. */
  #sync(index: ToolIndex): void {
    if (index === this.#version) return;
    const { ordered } = index;
    const runs: Run[] = [];
    const kept = new Map<string, ServerWords>();
    let longest = 0;
    for (let start = 0; start < ordered.length;) {
      const entry = ordered[start]!.entry;
      let end = start + 1;
      while (end < ordered.length && ordered[end]!.entry === entry) end += 1;
      const tools = ordered.slice(start, end);
      const previous = this.#words.get(entry.id);
      const words =
        previous !== undefined && sameTexts(previous, entry, tools)
          ? previous
          : this.#build(entry, tools);
      kept.set(entry.id, words);
      runs.push({ entry, tools, start, words });
      longest = Math.max(longest, tools.length);
      start = end;
    }
    this.#version = index;
    this.#runs = runs;
    this.#words = kept;
    if (this.#totals.length < longest) {
      this.#totals = new Uint32Array(longest);
      this.#inName = new Uint32Array(longest);
    }
  }

  #build(entry: ServerEntry, tools: readonly IndexedTool[]): ServerWords {
    this.#built += 1;
    const slug = slugOf(entry.row);
    const label = labelOf(entry.row);
    const postings = new Map<string, Posting[]>();
    const nameCounts: number[] = [];
    const texts = tools.map(({ qualified, tool: { title, description } }, at) => {
      const skip = slugSkip(qualified, slug);
      const terms = termsOf({ name: qualified, title, description, slug, label }, skip);
      nameCounts.push(terms.nameCount);
      for (const [word, weight] of terms.weights) {
        const list = postings.get(word);
        if (list) list.push({ at, weight });
        else postings.set(word, [{ at, weight }]);
      }
      return { qualified, title, description };
    });
    return { slug, label, texts, postings, nameCounts };
  }
}

/** Whether `words` were built from exactly these tools' texts and this row's slug and label. */
function sameTexts(words: ServerWords, entry: ServerEntry, tools: readonly IndexedTool[]): boolean {
  if (words.texts.length !== tools.length) return false;
  if (words.slug !== slugOf(entry.row) || words.label !== labelOf(entry.row)) return false;
  return tools.every(({ qualified, tool }, at) => {
    const text = words.texts[at]!;
    return (
      text.qualified === qualified &&
      text.title === tool.title &&
      text.description === tool.description
    );
  });
}
