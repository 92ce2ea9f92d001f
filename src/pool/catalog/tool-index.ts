/**
 * The tool index: qualified name → (server, tool), in a stable order (configuration
 * order, then each server's own), with clashes resolved by the rows.
 * Rebuilt whole whenever a server's list or row changes; lookups are by whole string.
 * It is the one place that decides which tools are offered: a server whose list does not
 * match its row's pin is withheld here, so everything built on the index inherits it.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { labelOf, slugOf } from "../../config/rows.js";
import { qualifiedNames } from "./naming.js";
import { pinWithholds } from "./pinning.js";
import { truncateText } from "../core/truncate.js";
import type { ServerEntry } from "../server/entry.js";
import type { ToolDefinition } from "../core/types.js";

export interface IndexedTool {
  qualified: string;
  entry: ServerEntry;
  tool: Tool;
  /** What tools() hands out: built once per index, frozen. */
  definition: ToolDefinition;
  /** Estimated cost of sending the definition, at four characters a token. */
  tokens: number;
}

export interface ToolIndex {
  byName: ReadonlyMap<string, IndexedTool>;
  ordered: readonly IndexedTool[];
  /** Servers whose whole namespace lost a clash, with the id that won it. */
  lostTo: ReadonlyMap<string, string>;
  /** Ids of the servers whose list does not match their pin: none of their tools is offered. */
  pinMismatch: ReadonlySet<string>;
  /** The tools those servers list, by the name they would have, so a call can say why not. */
  withheld: ReadonlyMap<string, { entry: ServerEntry; tool: Tool }>;
}

export interface IndexOptions {
  maxDescriptionChars?: number | undefined;
  /** Called for every clash; the caller decides whether it has been reported before. */
  onClash(key: string, message: string): void;
  /** false: pins are not enforced (a pool that lists no tools has nothing to compare). Default true. */
  checkPins?: boolean;
}

export function buildToolIndex(entries: readonly ServerEntry[], options: IndexOptions): ToolIndex {
  const claims = new Map<string, string[]>();
  const named: { entry: ServerEntry; tools: { qualified: string; tool: Tool }[] }[] = [];
  const pinMismatch = new Set<string>();
  const withheld = new Map<string, { entry: ServerEntry; tool: Tool }>();
  for (const entry of entries) {
    // Withheld before clashes are settled: an unapproved list must not win a namespace.
    if (options.checkPins !== false && pinWithholds(entry.row, entry.fingerprint)) {
      pinMismatch.add(entry.id);
      const names = toolNamesOf(entry);
      entry.tools.forEach((tool, at) => {
        const qualified = names[at];
        if (qualified !== undefined && !withheld.has(qualified))
          withheld.set(qualified, { entry, tool });
      });
      continue;
    }
    if (entry.tools.length === 0) continue;
    const names = toolNamesOf(entry);
    const tools: { qualified: string; tool: Tool }[] = [];
    for (const [at, tool] of entry.tools.entries()) {
      const qualified = names[at];
      if (qualified === undefined) {
        options.onClash(
          `${entry.id}\0${tool.name}`,
          `server "${entry.id}" offers "${tool.name}" under a name another of its tools already has; "${tool.name}" is left out`,
        );
        continue;
      }
      tools.push({ qualified, tool });
      const owners = claims.get(qualified);
      if (owners) owners.push(entry.id);
      else claims.set(qualified, [entry.id]);
    }
    named.push({ entry, tools });
  }

  // A namespace goes to the lowest id among the servers wanting it; the rest are left
  // out entirely, so the winner does not depend on which child happened to be up.
  const lostTo = new Map<string, string>();
  for (const [qualified, owners] of claims) {
    if (owners.length < 2) continue;
    const winner = [...owners].sort()[0]!;
    for (const loser of owners) {
      if (loser === winner || lostTo.has(loser)) continue;
      lostTo.set(loser, winner);
      options.onClash(
        `${loser}\0${winner}`,
        `servers "${winner}" and "${loser}" both want the tool name ${qualified}; "${winner}" keeps the namespace and "${loser}"'s tools are left out`,
      );
    }
  }

  const byName = new Map<string, IndexedTool>();
  const ordered: IndexedTool[] = [];
  for (const { entry, tools } of named) {
    if (lostTo.has(entry.id)) continue;
    const label = labelOf(entry.row);
    for (const { qualified, tool } of tools) {
      const definition = freezeDefinition({
        type: "function",
        function: {
          name: qualified,
          description: capDescription(
            `[${label}] ${tool.description ?? tool.title ?? tool.name}`,
            options.maxDescriptionChars,
          ),
          parameters: tool.inputSchema as Record<string, unknown>,
        },
      });
      const indexed: IndexedTool = {
        qualified,
        entry,
        tool,
        definition,
        tokens: Math.ceil(JSON.stringify(definition).length / 4),
      };
      byName.set(qualified, indexed);
      ordered.push(indexed);
    }
  }
  return { byName, ordered, lostTo, pinMismatch, withheld };
}

/** The qualified name of each of the entry's tools, in its order (naming.ts). */
export function toolNamesOf(entry: Pick<ServerEntry, "row" | "tools">): (string | undefined)[] {
  return qualifiedNames(
    slugOf(entry.row),
    entry.tools.map((tool) => tool.name),
  );
}

/** Shallow: `parameters` is the server's own schema, passed through untouched. */
function freezeDefinition(definition: ToolDefinition): ToolDefinition {
  Object.freeze(definition.function);
  return Object.freeze(definition);
}

function capDescription(text: string, max: number | undefined): string {
  if (!max || text.length <= max) return text;
  // truncateText's marker is extra to its budget; shrink the budget until all of it fits.
  let budget = max;
  let cut = truncateText(text, budget);
  while (cut.length > max && budget > 0) {
    budget -= cut.length - max;
    cut = truncateText(text, Math.max(budget, 0));
  }
  return cut.length > max ? text.slice(0, max) : cut;
}
