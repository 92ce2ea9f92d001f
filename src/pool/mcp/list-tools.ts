/**
 * listAllTools: tools/list is paginated at the server's choice, and a tool left on page
 * two is absent from the index. The timeout bounds the whole walk, not each page.
 * Each page's listTools() replaces the client's output-schema cache with that page's
 * tools, so a walk of more than one page hands it the whole list at the end.
 *
 * A 2026-07-28 listing carries cache hints (SEP-2549: `ttlMs`, how long it stays fresh;
 * `cacheScope`, whether it is the same for every caller): a walk's hint is its pages'
 * combined, the shortest lifetime and the narrowest scope (listTools).
 */
import type { ListToolsResult, Tool } from "@modelcontextprotocol/sdk/types.js";

import type { RequestOptions } from "./client.js";

/** A client that lists tools: the pool's McpClient, or an SDK Client. */
export interface ToolLister {
  listTools(params?: { cursor?: string }, options?: RequestOptions): Promise<ListToolsResult>;
}

/** Both keep an output-schema cache; the SDK's is private in its types. */
interface ToolMetadataCache {
  cacheToolMetadata?(tools: Tool[]): void;
}

/** A server that pages further than this is not paging, it is looping. */
export const MAX_TOOL_PAGES = 1000;

/** `public`: the same for every caller; `private`: for the caller it was listed for only. */
export type CacheScope = "public" | "private";

/**
 * What a listing said of its own freshness (SEP-2549). A field the server left out (a
 * legacy server leaves both) is absent, and so is a `ttlMs` that is no non-negative number.
 */
export interface CacheHint {
  ttlMs?: number;
  scope?: CacheScope;
}

/** The cache hint a listing result carries. */
export function cacheHintOf(result: unknown): CacheHint {
  const { ttlMs, cacheScope } = (result ?? {}) as { ttlMs?: unknown; cacheScope?: unknown };
  const hint: CacheHint = {};
  if (typeof ttlMs === "number" && Number.isFinite(ttlMs) && ttlMs >= 0) hint.ttlMs = ttlMs;
  if (cacheScope === "public" || cacheScope === "private") hint.scope = cacheScope;
  return hint;
}

/**
 * Two pages' hints as one list's: a page with no lifetime promises none for the list, the
 * shortest lifetime wins, and one private page makes the whole list private.
 */
function combined(list: CacheHint, page: CacheHint): CacheHint {
  const hint: CacheHint = {};
  if (list.ttlMs !== undefined && page.ttlMs !== undefined) {
    hint.ttlMs = Math.min(list.ttlMs, page.ttlMs);
  }
  const scopes = [list.scope, page.scope];
  if (scopes.includes("private")) hint.scope = "private";
  else if (scopes.includes("public")) hint.scope = "public";
  return hint;
}

/** Every page of a server's tool list, and the cache hint of the whole. */
export async function listTools(
  client: ToolLister,
  options: RequestOptions = {},
): Promise<{ tools: Tool[]; hint: CacheHint }> {
  const deadline = options.timeout !== undefined ? Date.now() + options.timeout : undefined;
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let hint: CacheHint | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const remaining = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
      ...options,
      ...(remaining === undefined ? {} : { timeout: remaining }),
    });
    tools.push(...result.tools);
    hint = hint === undefined ? cacheHintOf(result) : combined(hint, cacheHintOf(result));
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === "") {
      if (page > 0) (client as ToolMetadataCache).cacheToolMetadata?.(tools);
      return { tools, hint };
    }
    if (seen.has(cursor)) {
      throw new Error(
        `tools/list returned the cursor "${cursor}" twice; the server is not advancing`,
      );
    }
    seen.add(cursor);
  }
  throw new Error(`tools/list did not finish within ${MAX_TOOL_PAGES} pages`);
}

/** Every page of a server's tool list. */
export async function listAllTools(
  client: ToolLister,
  options: RequestOptions = {},
): Promise<Tool[]> {
  return (await listTools(client, options)).tools;
}
