/**
 * The catalog: what the pool offers, read from the tool index without connecting
 * anything; fresh() lists again what a server's cache hint says ran out. state(), tools(),
 * catalog(), search(), alwaysLoaded(), describe(), and the lookup call() resolves a name with.
 * Scope and hiding are applied here, once; the index is rebuilt on the next read after a server's
 * list or row changed.
 */
import { labelOf, slugOf, type McpServerConfig } from "../../config/rows.js";
import { describeTool } from "./describe.js";
import { McpPoolError } from "../core/errors.js";
import type { PinGate } from "./pin-gate.js";
import { DEFAULT_SEARCH_LIMIT } from "./search.js";
import { SearchIndex } from "./search-index.js";
import type { ServerEntry } from "../server/entry.js";
import { serverState, type ServerStateExtras } from "./server-state.js";
import { buildToolIndex, type IndexedTool, type ToolIndex } from "./tool-index.js";
import type { PoolLog, ServerState, ToolDefinition, ToolDescription } from "../core/types.js";

export interface CatalogServer {
  id: string;
  slug: string;
  label: string;
  stale?: boolean;
  tools: {
    name: string;
    description?: string;
    title?: string;
    annotations?: Record<string, unknown>;
    tokens: number;
  }[];
}

export interface CatalogInit {
  /** The entries in configuration order. */
  entries(): readonly ServerEntry[];
  pins: PinGate;
  log: PoolLog;
  maxDescriptionChars: number | undefined;
  /** false: the pool indexes no tools, so no pin is checked. */
  indexTools: boolean;
  /** tools() warns past this many tokens; 0 never. */
  toolsTokenWarning: number;
  /** What state() adds for a server besides its entry and the index. */
  extras(id: string): Omit<ServerStateExtras, "secrets" | "pinDiff">;
}

/** unknown-tool and out-of-scope share their message: a run must not learn what it may not reach. */
export function unknownTool(
  qualified: string,
  code: "unknown-tool" | "out-of-scope" = "unknown-tool",
): McpPoolError {
  return new McpPoolError(code, `no server offers the tool "${qualified}"`);
}

export class Catalog {
  readonly #init: CatalogInit;
  #index: ToolIndex | undefined;
  readonly #reportedClashes = new Set<string>();
  #warnedTokens = 0;
  readonly #search = new SearchIndex();

  constructor(init: CatalogInit) {
    this.#init = init;
  }

  /** A server's list or row changed: the next read rebuilds the index. */
  invalidate(): void {
    this.#index = undefined;
    this.#search.invalidate();
  }

  index(): ToolIndex {
    this.#index ??= buildToolIndex(this.#init.entries(), {
      maxDescriptionChars: this.#init.maxDescriptionChars,
      checkPins: this.#init.indexTools,
      onClash: (key, message) => {
        if (this.#reportedClashes.has(key)) return;
        this.#reportedClashes.add(key);
        this.#init.log.error?.(`mcpool: ${message}`);
      },
    });
    return this.#index;
  }

  /**
   * Lists again every live list in scope whose cache hint ran out, so the read
   * that follows is fresh; resolves at once, having sent nothing, when none has.
   */
  async fresh(servers?: readonly string[]): Promise<void> {
    const scope = servers ? new Set(servers) : undefined;
    const listings = this.#init
      .entries()
      .filter((entry) => !scope || scope.has(entry.id))
      .map((entry) => entry.fresh())
      .filter((listing) => listing !== undefined);
    if (listings.length > 0) await Promise.all(listings);
  }

  state(options: { secrets?: boolean } = {}): ServerState[] {
    const index = this.index();
    return this.#init.entries().map((entry) =>
      serverState(entry, index, {
        ...this.#init.extras(entry.id),
        secrets: options.secrets === true,
        pinDiff: index.pinMismatch.has(entry.id) ? this.#init.pins.diff(entry) : undefined,
      }),
    );
  }

  tools(
    options: { names?: readonly string[]; servers?: readonly string[] } = {},
  ): ToolDefinition[] {
    const names = options.names ? new Set(options.names) : undefined;
    const scope = options.servers ? new Set(options.servers) : undefined;
    const out: ToolDefinition[] = [];
    let tokens = 0;
    for (const indexed of this.index().ordered) {
      if (names && !names.has(indexed.qualified)) continue;
      if (!visible(indexed, scope, false)) continue;
      out.push(indexed.definition);
      tokens += indexed.tokens;
    }
    const warnAt = this.#init.toolsTokenWarning;
    if (warnAt > 0 && tokens > warnAt && tokens > this.#warnedTokens) {
      this.#warnedTokens = tokens;
      this.#init.log.info?.(
        `mcpool: tools() is handing out ${out.length} definitions, about ${tokens} tokens (over toolsTokenWarning ${warnAt}); a small context window may be truncated without a word`,
      );
    }
    return out;
  }

  catalog(servers?: readonly string[]): CatalogServer[] {
    const scope = servers ? new Set(servers) : undefined;
    const byServer = new Map<string, CatalogServer>();
    for (const indexed of this.index().ordered) {
      if (!visible(indexed, scope, false)) continue;
      const { entry } = indexed;
      let server = byServer.get(entry.id);
      if (!server) {
        server = catalogServer(entry, []);
        byServer.set(entry.id, server);
      }
      server.tools.push(catalogTool(indexed));
    }
    return [...byServer.values()];
  }

  /** catalog() cut to the best matches, read from the search index (search-index.ts). */
  search(
    query: string,
    options: { servers?: readonly string[]; limit?: number } = {},
  ): CatalogServer[] {
    const scope = options.servers ? new Set(options.servers) : undefined;
    const hits = this.#search.search(this.index(), query, {
      limit: options.limit ?? DEFAULT_SEARCH_LIMIT,
      visible: (indexed) => visible(indexed, scope, false),
    });
    return hits.map(({ entry, tools }) => catalogServer(entry, tools.map(catalogTool)));
  }

  alwaysLoaded(servers?: readonly string[]): string[] {
    const scope = servers ? new Set(servers) : undefined;
    return this.index()
      .ordered.filter(
        (indexed) =>
          visible(indexed, scope, false) &&
          (indexed.entry.row.alwaysLoad ?? []).includes(indexed.tool.name),
      )
      .map((indexed) => indexed.qualified);
  }

  describe(
    qualified: string,
    options: { servers?: readonly string[]; hidden?: boolean } = {},
  ): ToolDescription | undefined {
    const indexed = this.index().byName.get(qualified);
    const scope = options.servers ? new Set(options.servers) : undefined;
    if (!indexed || !visible(indexed, scope, options.hidden === true)) return undefined;
    const hidden = isHidden(indexed.entry.row, indexed.tool.name);
    return describeTool(indexed.tool, { ...indexed, serverId: indexed.entry.id, hidden });
  }

  /**
   * The tool `qualified` names for a call in `scope`, or undefined when none answers to it
   * (yet). Refuses a tool out of scope (`out-of-scope`), a hidden one unless `hidden`
   * (`unknown-tool`) and one a withheld server lists (`pin-mismatch`).
   */
  lookup(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    hidden: boolean,
  ): IndexedTool | undefined {
    const index = this.index();
    const indexed = index.byName.get(qualified);
    if (!indexed) {
      this.#init.pins.refuseWithheld(index, qualified, scope, hidden);
      return undefined;
    }
    if (scope && !scope.has(indexed.entry.id)) throw unknownTool(qualified, "out-of-scope");
    if (!visible(indexed, undefined, hidden)) throw unknownTool(qualified);
    return indexed;
  }
}

/** A server as catalog() shows it, holding `tools`. */
function catalogServer(entry: ServerEntry, tools: CatalogServer["tools"]): CatalogServer {
  const server: CatalogServer = {
    id: entry.id,
    slug: slugOf(entry.row),
    label: labelOf(entry.row),
    tools,
  };
  if (entry.stale) server.stale = true;
  return server;
}

/** A tool as catalog() shows it: no schema, annotations copied. */
function catalogTool(indexed: IndexedTool): CatalogServer["tools"][number] {
  const { tool } = indexed;
  return {
    name: indexed.qualified,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
    tokens: indexed.tokens,
  };
}

/** Whether the row keeps `toolName` from hosts (`hiddenTools`). */
export function isHidden(row: McpServerConfig, toolName: string): boolean {
  return (row.hiddenTools ?? []).includes(toolName);
}

function visible(
  indexed: IndexedTool,
  scope: ReadonlySet<string> | undefined,
  hidden: boolean,
): boolean {
  if (scope && !scope.has(indexed.entry.id)) return false;
  return hidden || !isHidden(indexed.entry.row, indexed.tool.name);
}
