/**
 * Writing a row's `hiddenTools` into `mcp.json` text: the edit `mcpool hide` and
 * `mcpool unhide` make. Only that member changes (jsonc-parser edits, as `approve` writes a
 * pin), so comments and formatting elsewhere survive; the result is parsed again to prove
 * the row now hides exactly what was asked. Hiding never restarts a server.
 *
 * Browser-safe: jsonc-parser is pure JavaScript.
 */
import {
  applyEdits,
  findNodeAtLocation,
  getNodeValue,
  modify,
  parseTree,
  type Edit,
  type JSONPath,
  type Node,
} from "jsonc-parser";
import { parseMcpJson } from "./mcp-json.js";
import { memberEdit, rowPathOf } from "./mcp-json-pin.js";

/**
 * The edit that removes the row's `hiddenTools`: up to the next member when there is one,
 * which undoes exactly what memberEdit inserted; otherwise jsonc-parser's own removal.
 */
function removal(text: string, node: Node, path: JSONPath): Edit[] {
  const members = node.children ?? [];
  const index = members.findIndex((m) => m.children?.[0]?.value === "hiddenTools");
  const member = members[index];
  const next = members[index + 1];
  if (member && next)
    return [{ offset: member.offset, length: next.offset - member.offset, content: "" }];
  return modify(text, [...path, "hiddenTools"], undefined, {});
}

/**
 * `text` with `tools` added to (`hide`) or removed from server `id`'s `hiddenTools`; the
 * text unchanged when there is nothing to do. An emptied list is removed. Throws
 * ConfigSyntaxError for a file that does not parse, and an Error when it has no such server.
 */
export function setHiddenToolsInMcpJson(
  text: string,
  id: string,
  tools: readonly string[],
  hide: boolean,
): string {
  const before = parseMcpJson(text, { env: {} }).rows.find((r) => r.id === id);
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const path = tree ? rowPathOf(getNodeValue(tree), id) : undefined;
  const node = tree && path ? findNodeAtLocation(tree, path) : undefined;
  if (node?.type !== "object" || path === undefined || before === undefined) {
    throw new Error(`the config file has no server "${id}"`);
  }
  const current = before.hiddenTools ?? [];
  const wanted = hide
    ? [...current, ...tools.filter((tool) => !current.includes(tool))]
    : current.filter((tool) => !tools.includes(tool));
  if (wanted.length === current.length && wanted.every((tool, i) => tool === current[i])) {
    return text;
  }
  const next =
    wanted.length > 0
      ? applyEdits(text, [memberEdit(text, node, "hiddenTools", JSON.stringify(wanted))])
      : applyEdits(text, removal(text, node, path));
  const after = parseMcpJson(next, { env: {} }).rows.find((r) => r.id === id);
  if (JSON.stringify(after?.hiddenTools ?? []) !== JSON.stringify(wanted)) {
    throw new Error(
      `could not write the hiddenTools of "${id}" where the config file's row is read`,
    );
  }
  return next;
}
