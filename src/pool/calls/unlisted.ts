/**
 * A name a one-server entry's host calls that the server never listed (a tool it offers
 * only to clients declaring some capability, or no tool at all): the server answers it,
 * over the connection that serves this host, as it would a host of its own. The bridges send
 * `unlisted` when no listed tool answers to the host's name; the pipeline does not look for
 * one. A name the pool keeps from hosts on purpose is refused as ever: a tool the row hides,
 * any name on a pinned row (a pin means only the approved tools run, and an unlisted name is
 * none of them), a conversation row (its tools are the caller's own session's) and a disabled
 * row.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled } from "../../config/rows.js";
import { isConversationRow } from "../../config/conversation.js";
import { isHidden, unknownTool, type Catalog } from "../catalog/catalog.js";
import type { IndexedTool } from "../catalog/tool-index.js";
import type { ServerEntry } from "../server/entry.js";
import type { CallOptions } from "./options.js";

/** What an unlisted name is checked against: the caller's view of the pool. */
export interface UnlistedView {
  catalog: Catalog;
  entries(): readonly ServerEntry[];
}

/**
 * The tool a call with `unlisted` goes to: the one server it names, as that name. Refused as
 * an unknown tool when the call names no single server or the name is one the pool keeps
 * from hosts on purpose. The catalog is not asked: the host's name is the server's own, and
 * a qualified name of the pool it happens to spell is no tool of this host's.
 */
export async function unlistedTool(
  qualified: string,
  name: string,
  opts: CallOptions,
  view: UnlistedView,
): Promise<IndexedTool> {
  const refusal = unknownTool(qualified);
  const only = opts.servers?.length === 1 ? opts.servers[0] : undefined;
  const entry = view.entries().find((candidate) => candidate.id === only);
  if (entry === undefined || !isEnabled(entry.row) || isConversationRow(entry.row)) throw refusal;
  if (isHidden(entry.row, name)) throw refusal;
  // Only approved tools run on a pinned row, whether its list matches the pin or not.
  if (entry.row.pin !== undefined || view.catalog.index().pinMismatch.has(entry.id)) throw refusal;
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
