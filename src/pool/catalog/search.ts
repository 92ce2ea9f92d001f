/**
 * Tool search (docs/tools-on-demand.md): the catalog cut to what a turn
 * asked for, so an agent sends a shortlist of schemas instead of all of them.
 *
 * Ranking is word overlap, no embeddings and no dependency: a query word scores once, by
 * the best place it turned up — the tool's name, then its title, then its description,
 * then its server's slug and label. Names split on punctuation and camelCase, and a small
 * suffix stemmer makes read, reads and reading one word. Roughly right about which thirty
 * of a hundred and forty is the whole job.
 *
 * This file is the ranking; the pool ranks through search-index.ts, which keeps each word's
 * tools so a query scores only those, and gives the same answer searchCatalog() does.
 */

/** What a place is worth when a query word turns up there; a word scores its best one. */
export const WEIGHTS = { name: 8, title: 4, description: 2, server: 1 } as const;

/** Tools search() hands back when the caller names no limit. */
export const DEFAULT_SEARCH_LIMIT = 20;

/**
 * Words that say nothing about which tool is meant: "read a file" is about reading and
 * files. Short on purpose; a word left in costs a little noise, one taken out a match.
 */
const STOPWORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "i",
  "in",
  "into",
  "is",
  "it",
  "its",
  "me",
  "my",
  "of",
  "on",
  "or",
  "please",
  "that",
  "the",
  "this",
  "to",
  "with",
]);

function hasVowel(text: string): boolean {
  return /[aeiouy]/.test(text);
}

/** `runn` → `run`, `embedd` → `embed`; `add`, `call` and `pass` are left alone. */
function undouble(stem: string): string {
  const last = stem.at(-1);
  if (stem.length > 3 && last === stem.at(-2) && last !== undefined && !"lsz".includes(last)) {
    return /[aeiou]/.test(last) ? stem : stem.slice(0, -1);
  }
  return stem;
}

/**
 * A word reduced to a stem good enough that read/reads/reading, file/files,
 * directory/directories and write/writes/writing meet: plural and -ing/-ed endings off,
 * then a final e dropped and a final y made i. Not Porter; a shortlist does not need it.
 */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("ing") && w.length >= 6 && hasVowel(w.slice(0, -3))) {
    w = undouble(w.slice(0, -3));
  } else if (w.endsWith("ed") && w.length >= 5 && hasVowel(w.slice(0, -2))) {
    w = undouble(w.slice(0, -2));
  }
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  if (w.endsWith("y") && w.length > 3) w = `${w.slice(0, -1)}i`;
  return w;
}

/**
 * The stemmed words of a text: split on anything that is not a letter or digit and at
 * camelCase boundaries (`readTextFile`, `HTTPServer`), lowercased, stopwords dropped.
 */
export function tokenize(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u);
  const out: string[] = [];
  for (const word of words) {
    if (word === "") continue;
    const lower = word.toLowerCase();
    if (STOPWORDS.has(lower)) continue;
    out.push(stem(lower));
  }
  return out;
}

/** What rankTools reads of a tool; any object with these fields can be ranked. */
export interface RankableTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  /** The server's slug and label: the last place a word may turn up. */
  slug?: string | undefined;
  label?: string | undefined;
}

export interface RankedTool<T> {
  tool: T;
  score: number;
}

/** A tool's words, each with the weight of the best place it turned up. */
export interface Terms {
  weights: ReadonlyMap<string, number>;
  /** Words in the name, for the tie-break. */
  nameCount: number;
}

/** The texts a tool's words come from: its own, then its server's slug and label. */
export interface ToolTexts {
  name: string;
  title: string | undefined;
  description: string | undefined;
  slug: string | undefined;
  label: string | undefined;
}

interface Cached {
  texts: ToolTexts;
  terms: Terms;
}

/**
 * Each tool's words, kept per key (its qualified name) while its texts stay the same, so a
 * search over a catalog that has not changed tokenizes nothing. Bounded, and emptied
 * whole when full, which is cheaper than an LRU and wrong only for one search.
 */
export class TermCache {
  readonly #tools = new Map<string, Cached>();
  constructor(readonly maxEntries = 20_000) {}

  /**
   * The terms of one tool. `name` is ranked as the name after dropping its first `skip`
   * characters (a qualified name's `<slug>__`), so the slug counts as the server's word.
   */
  terms(key: string, texts: ToolTexts, skip = 0): Terms {
    const hit = this.#tools.get(key);
    if (
      hit !== undefined &&
      hit.texts.name === texts.name &&
      hit.texts.title === texts.title &&
      hit.texts.description === texts.description &&
      hit.texts.slug === texts.slug &&
      hit.texts.label === texts.label
    ) {
      return hit.terms;
    }
    if (this.#tools.size >= this.maxEntries) this.#tools.clear();
    const terms = termsOf(texts, skip);
    this.#tools.set(key, { texts, terms });
    return terms;
  }
}

/**
 * The words of one tool, each weighted by the best place it turned up; `name` is ranked
 * after dropping its first `skip` characters (see TermCache.terms).
 */
export function termsOf({ name, title, description, slug, label }: ToolTexts, skip = 0): Terms {
  const weights = new Map<string, number>();
  const add = (text: string | undefined, weight: number): number => {
    if (!text) return 0;
    const words = tokenize(text);
    for (const word of words) weights.set(word, weight);
    return words.length;
  };
  // Lowest first, so a word keeps the best place it turned up.
  add(slug, WEIGHTS.server);
  add(label, WEIGHTS.server);
  add(description, WEIGHTS.description);
  add(title, WEIGHTS.title);
  return { weights, nameCount: add(name.slice(skip), WEIGHTS.name) };
}

export interface Scored<T> {
  tool: T;
  score: number;
  nameShare: number;
  order: number;
}

/** A query word scores once, by the best place it turned up. */
function score<T>(
  tool: T,
  order: number,
  words: readonly string[],
  terms: Terms,
): Scored<T> | undefined {
  let total = 0;
  let inName = 0;
  for (const word of words) {
    const weight = terms.weights.get(word);
    if (weight === undefined) continue;
    total += weight;
    if (weight === WEIGHTS.name) inName += 1;
  }
  if (total === 0) return undefined;
  return {
    tool,
    score: total,
    nameShare: terms.nameCount === 0 ? 0 : inName / terms.nameCount,
    order,
  };
}

/** Best first; ties to the name most made of query words, then to the order given. */
export function byRank<T>(a: Scored<T>, b: Scored<T>): number {
  return b.score - a.score || b.nameShare - a.nameShare || a.order - b.order;
}

export function queryWords(query: string): string[] {
  return [...new Set(tokenize(query))];
}

/**
 * `tools` that share a word with `query`, best first. A query word counts once, by the best
 * place it turned up (name, title, description, slug/label); ties go to the tool whose name
 * is most made of query words (`read_file` before `read_multiple_files`), then to the order
 * given. Tools sharing no word are left out; a query with no words finds nothing. Pass one
 * TermCache across calls to tokenize each tool once.
 */
export function rankTools<T extends RankableTool>(
  query: string,
  tools: readonly T[],
  cache: TermCache = new TermCache(),
): RankedTool<T>[] {
  const words = queryWords(query);
  if (words.length === 0) return [];
  const ranked: Scored<T>[] = [];
  tools.forEach((tool, order) => {
    const key = `${tool.slug ?? ""}\0${tool.name}`;
    const { name, title, description, slug, label } = tool;
    const terms = cache.terms(key, { name, title, description, slug, label });
    const scored = score(tool, order, words, terms);
    if (scored) ranked.push(scored);
  });
  return ranked.sort(byRank).map(({ tool, score }) => ({ tool, score }));
}

/** How much of a qualified name is its `<slug>__`, ranked as the server's word, not the name's. */
export function slugSkip(qualified: string, slug: string): number {
  const prefix = `${slug}__`;
  return qualified.startsWith(prefix) ? prefix.length : 0;
}

/** The shape of one server's part of a catalog, as far as search reads it. */
export interface CatalogLike<T extends { name: string; title?: string; description?: string }> {
  id: string;
  slug: string;
  label: string;
  tools: T[];
}

/**
 * A catalog cut to the `limit` best matches for `query` (default 20), in the catalog's
 * own shape: servers ordered by their best tool, each server's tools best first. Tool
 * names are the qualified ones; the slug in front is ranked as the server's word.
 */
export function searchCatalog<
  T extends { name: string; title?: string; description?: string },
  S extends CatalogLike<T>,
>(query: string, catalog: readonly S[], options: { limit?: number; cache?: TermCache } = {}): S[] {
  const words = queryWords(query);
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  if (words.length === 0 || limit <= 0) return [];
  const cache = options.cache ?? new TermCache();
  const ranked: Scored<{ server: S; tool: T }>[] = [];
  let order = 0;
  for (const server of catalog) {
    for (const tool of server.tools) {
      const { name, title, description } = tool;
      const skip = slugSkip(name, server.slug);
      const { slug, label } = server;
      const terms = cache.terms(name, { name, title, description, slug, label }, skip);
      const scored = score({ server, tool }, order++, words, terms);
      if (scored) ranked.push(scored);
    }
  }
  const best = ranked.sort(byRank).slice(0, limit);
  const byServer = new Map<S, T[]>();
  for (const { tool } of best) {
    const tools = byServer.get(tool.server);
    if (tools) tools.push(tool.tool);
    else byServer.set(tool.server, [tool.tool]);
  }
  return [...byServer].map(([server, tools]) => ({ ...server, tools }));
}
