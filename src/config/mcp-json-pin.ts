/**
 * Writing a row's `pin` into `mcp.json` text: the edit `mcpool approve` makes.
 * Only the pin's own value is replaced, or one member inserted, so comments, key order,
 * trailing commas and indentation survive byte for byte elsewhere. The row is found where
 * parseMcpJson reads it — `mcpServers`, `servers`, one bare body with a `name`, or a bare
 * name-keyed map — and the result is parsed again to prove the row now carries the pin.
 *
 * Browser-safe: jsonc-parser is pure JavaScript.
 */
import {
  applyEdits,
  findNodeAtLocation,
  getNodeValue,
  parseTree,
  type Edit,
  type JSONPath,
  type Node,
} from "jsonc-parser";
import { parseMcpJson } from "./mcp-json.js";

type Body = Record<string, unknown>;

function isObject(value: unknown): value is Body {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** As parseMcpJson decides that the whole file is one server's body. */
function looksLikeBody(value: Body): boolean {
  return ["command", "url", "httpUrl", "type", "transport"].some(
    (key) => key in value && !isObject(value[key]),
  );
}

/** Keys of a bare map that are not servers, as parseMcpJson skips them. */
const NOT_SERVERS = new Set(["mcpool", "$schema", "inputs"]);

/** Where the body of server `id` sits in the parsed file, or undefined when it has none. */
export function rowPathOf(root: unknown, id: string): JSONPath | undefined {
  if (!isObject(root)) return undefined;
  if (isObject(root.mcpServers)) {
    return isObject(root.mcpServers[id]) ? ["mcpServers", id] : undefined;
  }
  if (isObject(root.servers)) return isObject(root.servers[id]) ? ["servers", id] : undefined;
  if (looksLikeBody(root)) return root.name === id ? [] : undefined;
  return !NOT_SERVERS.has(id) && isObject(root[id]) ? [id] : undefined;
}

/**
 * The edit that gives the body at `node` the member `key` (its value as JSON text): its old
 * value replaced, or a new first member in the indentation of the member it goes before.
 * Inserted by hand rather than by `modify` with formatting, which re-lays out neighbouring
 * lines (an inline array breaks). `mcpool hide` writes `hiddenTools` with it too.
 */
export function memberEdit(text: string, node: Node, key: string, value: string): Edit {
  const existing = findNodeAtLocation(node, [key]);
  if (existing) return { offset: existing.offset, length: existing.length, content: value };
  const member = `${JSON.stringify(key)}: ${value}`;
  const first = node.children?.[0];
  if (!first) return { offset: node.offset + 1, length: 0, content: member };
  const lineStart = text.lastIndexOf("\n", first.offset - 1) + 1;
  const indent = text.slice(lineStart, first.offset);
  if (lineStart > node.offset && /^[ \t]*$/.test(indent)) {
    const eol = text.includes("\r\n") ? "\r\n" : "\n";
    return { offset: first.offset, length: 0, content: `${member},${eol}${indent}` };
  }
  // The first member shares its line with the brace (or a comment): stay on that line.
  return { offset: first.offset, length: 0, content: `${member}, ` };
}

/**
 * `text` with server `id`'s `pin` set to `fingerprint`. Throws ConfigSyntaxError (with its
 * line and column) for a file that does not parse, and an Error when the file holds no
 * such server or the edit did not land where parseMcpJson would read it.
 */
export function setPinInMcpJson(text: string, id: string, fingerprint: string): string {
  // Throws ConfigSyntaxError first: a broken file is not edited.
  parseMcpJson(text, { env: {} });
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const path = tree ? rowPathOf(getNodeValue(tree), id) : undefined;
  const node = tree && path ? findNodeAtLocation(tree, path) : undefined;
  if (node?.type !== "object") throw new Error(`the config file has no server "${id}"`);
  const next = applyEdits(text, [memberEdit(text, node, "pin", JSON.stringify(fingerprint))]);
  const row = parseMcpJson(next, { env: {} }).rows.find((r) => r.id === id);
  if (row?.pin !== fingerprint) {
    throw new Error(`could not write the pin of "${id}" where the config file's row is read`);
  }
  return next;
}
