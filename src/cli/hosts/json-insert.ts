/**
 * Adding a property to a JSON-with-comments text without touching anything the user wrote
 * (`mcpool import` into mcpool's own `mcp.json`): only the new text is formatted, in the
 * file's own indentation and line ends — on the same line, for a file written on one line.
 */
import { findNodeAtLocation, parseTree } from "jsonc-parser";
import type { JsonPath } from "./configs.js";
import { addProperty, layoutOf } from "./json-layout.js";

/** Thrown for a target that cannot be merged into; the message says why. */
export class ImportError extends Error {
  override readonly name = "ImportError";
}

/** Indentation and line ends as the file already has them, so inserted text looks native. */
export interface Style {
  unit: string;
  eol: string;
}

export function styleOf(text: string): Style {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    unit: indent.startsWith("\t") ? "\t" : indent,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

/** The whitespace a line starts with, for the line holding `offset`. */
function indentAt(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/**
 * `text` with `"key": value` added as the last property of the object at `path` (made
 * first if it is missing). Only the new text is formatted — in the file's own indentation —
 * and nothing the user wrote is touched but for the comma the previous property needs.
 * (jsonc-parser's modify() with formatting options also reformats the previous property.)
 */
export function insertProperty(
  text: string,
  path: JsonPath,
  key: string,
  value: unknown,
  style: Style,
): string {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const container = tree && (path.length === 0 ? tree : findNodeAtLocation(tree, path));
  if (container?.type !== "object") {
    if (path.length === 0) throw new ImportError("the file does not hold a JSON object");
    const made = insertProperty(text, path.slice(0, -1), String(path.at(-1)), {}, style);
    return insertProperty(made, path, key, value, style);
  }
  // A file written on one line stays on one line.
  if (!text.trimEnd().includes("\n")) {
    return addProperty(text, container, key, value, layoutOf(text));
  }
  const entry = (indent: string): string =>
    `${JSON.stringify(key)}: ${JSON.stringify(value, null, style.unit).replaceAll("\n", style.eol + indent)}`;
  const last = container.children?.at(-1);
  if (last !== undefined) {
    const indent = indentAt(text, last.offset);
    const at = last.offset + last.length;
    let lineEnd = text.indexOf("\n", at);
    if (lineEnd === -1) lineEnd = text.length;
    if (text[lineEnd - 1] === "\r") lineEnd -= 1;
    // `"x": 1, // why` stays one line: the new entry goes on the next, the comma where it was.
    const tail = /^[ \t]*(,?)[ \t]*(?:\/\/.*)?$/.exec(text.slice(at, lineEnd));
    if (tail !== null) {
      const comma = tail[1] === "," ? "" : ",";
      return `${text.slice(0, at)}${comma}${text.slice(at, lineEnd)}${style.eol}${indent}${entry(indent)}${text.slice(lineEnd)}`;
    }
    // Something else follows on the line (`}`, a block comment): insert right there.
    const comma = /^\s*,/.exec(text.slice(at));
    const after = comma ? at + comma[0].length : at;
    return `${text.slice(0, after)}${comma ? "" : ","}${style.eol}${indent}${entry(indent)}${text.slice(after)}`;
  }
  const outer = indentAt(text, container.offset);
  const inner = outer + style.unit;
  const at = container.offset + 1;
  return `${text.slice(0, at)}${style.eol}${inner}${entry(inner)}${style.eol}${outer}${text.slice(at)}`;
}
