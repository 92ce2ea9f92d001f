/**
 * listAllTools: tools/list is paginated at the server's choice, and a tool left on page
 * two is absent from the index. The timeout bounds the whole walk, not each page (A8).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** A server that pages further than this is not paging, it is looping. */
export const MAX_TOOL_PAGES = 1000;

/**
 * The SDK Client's per-tool metadata cache (output-schema validators, task support). Its
 * listTools() replaces the cache with each page's tools, so after a walk it would know only
 * the last page's; the walk hands it the whole list once it has it. Private in the SDK's
 * types, hence this view; absent in an SDK without the cache, when there is nothing to fix.
 */
interface ToolMetadataCache {
  cacheToolMetadata?(tools: Tool[]): void;
}

export async function listAllTools(client: Client, options: RequestOptions = {}): Promise<Tool[]> {
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
      if (page > 0) (client as unknown as ToolMetadataCache).cacheToolMetadata?.(tools);
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
