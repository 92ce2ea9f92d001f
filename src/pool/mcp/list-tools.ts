/**
 * listAllTools: tools/list is paginated at the server's choice, and a tool left on page
 * two is absent from the index. The timeout bounds the whole walk, not each page (A8).
 * Each page's listTools() replaces the client's output-schema cache with that page's
 * tools, so a walk of more than one page hands it the whole list at the end.
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

export async function listAllTools(
  client: ToolLister,
  options: RequestOptions = {},
): Promise<Tool[]> {
  const deadline = options.timeout !== undefined ? Date.now() + options.timeout : undefined;
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const remaining = deadline === undefined ? undefined : Math.max(1, deadline - Date.now());
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
      ...options,
      ...(remaining === undefined ? {} : { timeout: remaining }),
    });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === "") {
      if (page > 0) (client as ToolMetadataCache).cacheToolMetadata?.(tools);
      return tools;
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
