/**
 * A name a one-server entry's host calls that the server never listed (a tool it offers
 * only to clients declaring some capability, or no tool at all): the server answers it,
 * over the connection that serves this host, as it would a host of its own. Only a name
 * nothing in the pool refuses on purpose gets here: a tool the row hides, a server whose
 * list a pin withholds, a conversation row (its tools are the caller's own session's) and
 * a disabled row keep the pool's refusal.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled } from "../../config/rows.js";
import { isConversationRow } from "../../config/conversation.js";
import { isHidden, type Catalog } from "../catalog/catalog.js";
import { McpPoolError } from "../core/errors.js";
import type { IndexedTool } from "../catalog/tool-index.js";
import type { ServerEntry } from "../server/entry.js";
import type { CallOptions } from "./options.js";

/** What an unlisted name is checked against: the caller's view of the pool. */
export interface UnlistedView {
  catalog: Catalog;
  entries(): readonly ServerEntry[];
}

/**
 * The tool an unlisted call goes to, or `refusal` thrown again: the pool's own answer stands
 * unless the call names one server and the server's own name for the tool (`unlisted`).
 */
export async function unlistedTool(
  refusal: unknown,
  qualified: string,
  opts: CallOptions,
  view: UnlistedView,
): Promise<IndexedTool> {
  const name = opts.unlisted;
  const only = opts.servers?.length === 1 ? opts.servers[0] : undefined;
  const unknown =
    refusal instanceof McpPoolError &&
    (refusal.code === "unknown-tool" || refusal.code === "out-of-scope");
  if (name === undefined || only === undefined || !unknown) throw refusal;
  const entry = view.entries().find((candidate) => candidate.id === only);
  if (entry === undefined || !isEnabled(entry.row) || isConversationRow(entry.row)) throw refusal;
  if (isHidden(entry.row, name)) throw refusal;
  const index = view.catalog.index();
  if (index.pinMismatch.has(entry.id)) throw refusal;
  // A listed tool of that name refused for another reason (hidden) is not sent either.
  if (index.ordered.some((tool) => tool.entry.id === entry.id && tool.tool.name === name)) {
    throw refusal;
  }
  // Busy until the call's end (the pipeline's idle()), as a listed tool's entry is.
  entry.busy();
  try {
    await entry.ensure();
  } catch (error) {
    entry.idle();
    throw error;
  }
  const tool: Tool = { name, inputSchema: { type: "object" } };
  return {
    qualified,
    entry,
    tool,
    definition: {
      type: "function",
      function: { name: qualified, description: "", parameters: tool.inputSchema },
    },
    tokens: 0,
  };
}
