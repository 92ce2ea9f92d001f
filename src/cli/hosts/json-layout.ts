/**
 * A JSON host's entry rewritten in the file's own layout: a file written on one
 * line stays on one line, an entry written on one line stays on one line, an array written on
 * one line (`"args": ["-y", "pkg"]`) stays on one line and one written an item a line stays
 * so, and `": "` / `", "` spacing is the file's. jsonc-parser's modify() formats every value
 * it writes across lines, which is how a one-line Gemini file became pretty-printed and
 * OpenCode's one-line `command` arrays grew to one item a line. Only the keys that change are
 * touched, so comments and the other keys keep their text; the result is parsed back and must
 * hold exactly the entry asked for, or nothing is written.
 */
import { findNodeAtLocation, getNodeValue, parseTree, type Node } from "jsonc-parser";
import type { JsonPath } from "./configs.js";

/** How a file writes JSON: its indentation unit, line end, and spacing. */
export interface JsonLayout {
  unit: string;
  eol: string;
  /** `"a": 1` rather than `"a":1`. */
  spaced: boolean;
  /** `["a", "b"]` and `1, "b"` rather than `["a","b"]` and `1,"b"`: apart from the colon's. */
  commaSpaced: boolean;
  /** `{ "a": 1 }` rather than `{"a": 1}`, for an object on one line. */
  padded: boolean;
}

export function layoutOf(text: string): JsonLayout {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  const inline = /\{([ \t]*)"[^\n{}]*\}/.exec(text);
  const spaced = colonSpacing(text) ?? true;
  return {
    unit: indent.startsWith("\t") ? "\t" : indent,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
    spaced,
    commaSpaced: commaSpacing(text) ?? spaced,
    padded: inline === null ? true : inline[1] !== "",
  };
}

/** Whether `snippet` writes `"a": 1` (true) or `"a":1` (false); undefined: it has no colon. */
function colonSpacing(snippet: string): boolean | undefined {
  const colon = /"[ \t]*:([ \t]*)\S/.exec(snippet);
  return colon === null ? undefined : colon[1] !== "";
}

/** Whether `snippet` writes `1, 2` (true) or `1,2` (false) on a line; undefined: it has no such comma. */
function commaSpacing(snippet: string): boolean | undefined {
  const comma = /(?:["\]}\d]|true|false|null),([ \t]*)[^\s/]/.exec(snippet);
  return comma === null ? undefined : comma[1] !== "";
}

/** `layout` with the spacing `snippet` (an entry's or a value's own text) shows, where it shows any. */
function spacingOf(snippet: string, layout: JsonLayout): JsonLayout {
  const spaced = colonSpacing(snippet) ?? layout.spaced;
  return { ...layout, spaced, commaSpaced: commaSpacing(snippet) ?? layout.commaSpaced };
}

/** `value` on one line, in the file's spacing. */
function inline(value: unknown, layout: JsonLayout): string {
  const comma = layout.commaSpaced ? ", " : ",";
  if (Array.isArray(value)) return `[${value.map((v) => inline(v, layout)).join(comma)}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const colon = layout.spaced ? ": " : ":";
    const body = entries.map(([k, v]) => `${JSON.stringify(k)}${colon}${inline(v, layout)}`);
    const pad = layout.padded ? " " : "";
    return `{${pad}${body.join(comma)}${pad}}`;
  }
  return JSON.stringify(value);
}

/** `value` across lines, each line after the first at `indent` and the file's unit. */
function expanded(value: unknown, indent: string, layout: JsonLayout): string {
  const text = JSON.stringify(value, null, layout.unit);
  const spaced = layout.spaced ? text : text.replaceAll(/^(\s*"(?:[^"\\]|\\.)*"): /gm, "$1:");
  return spaced.replaceAll("\n", layout.eol + indent);
}

/** The whitespace the line holding `offset` starts with. */
function indentAt(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

const oneLine = (text: string, node: Node): boolean =>
  !text.slice(node.offset, node.offset + node.length).includes("\n");

/** Whether arrays and objects are written on one line here: as `like` is, else as the file's. */
function inlineValues(text: string, like: Node | undefined): boolean {
  if (like !== undefined) return oneLine(text, like);
  // A file whose arrays open at a line's end, and none on one line holding something.
  return /\[[ \t]*[^\s\]][^\n]*\]/.test(text) || !/\[[ \t]*\r?\n/.test(text);
}

function entryNode(text: string, path: JsonPath): Node | undefined {
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const node = tree && findNodeAtLocation(tree, path);
  return node?.type === "object" ? node : undefined;
}

const property = (entry: Node, key: string): Node | undefined =>
  entry.children?.find((p) => p.children?.[0]?.value === key);

/**
 * `text` without the entry at `path` (a server in its map), its lines and comma with it;
 * undefined when there is no such entry.
 */
export function removeJsonEntry(text: string, path: JsonPath): string | undefined {
  const map = entryNode(text, path.slice(0, -1));
  const prop = map && property(map, String(path.at(-1)));
  return map && prop ? removeProperty(text, map, prop) : undefined;
}

/**
 * `text` with `"key": value` added last to the object at `path` (a host's server map), in
 * the file's own layout; undefined when there is no object there.
 */
export function addJsonEntry(
  text: string,
  path: JsonPath,
  key: string,
  value: unknown,
): string | undefined {
  const map = entryNode(text, path);
  if (map === undefined) return undefined;
  const layout = layoutOf(text);
  return addProperty(
    text,
    map,
    key,
    value,
    spacingOf(text.slice(map.offset, map.offset + map.length), layout),
  );
}

/** `text` without the property `prop` of `entry`, and the comma that goes with it. */
function removeProperty(text: string, entry: Node, prop: Node): string {
  const siblings = entry.children ?? [];
  const at = siblings.indexOf(prop);
  const end = prop.offset + prop.length;
  const after = /^[ \t]*,?/.exec(text.slice(end))![0];
  const hasComma = after.endsWith(",");
  const lineStart = text.lastIndexOf("\n", prop.offset - 1) + 1;
  const ownLine = /^[ \t]*$/.test(text.slice(lineStart, prop.offset));
  const restOfLine = /^[ \t]*,?[ \t]*(?:\/\/[^\n]*)?(?=\r?\n)/.exec(text.slice(end));
  if (ownLine && restOfLine !== null) {
    // The property holds its own lines: they go, with the newline ending them.
    const newline = text.indexOf("\n", end + restOfLine[0].length);
    let next = text.slice(0, lineStart) + text.slice(newline + 1);
    const previous = siblings[at - 1];
    if (!hasComma && previous !== undefined && at === siblings.length - 1) {
      // It was the last: the one before it now is, and loses its comma.
      const from = previous.offset + previous.length;
      const comma = next.indexOf(",", from);
      if (comma !== -1 && comma < lineStart) next = next.slice(0, comma) + next.slice(comma + 1);
    }
    return next;
  }
  if (hasComma) {
    const spaces = /^[ \t]*/.exec(text.slice(end + after.length))![0];
    return text.slice(0, prop.offset) + text.slice(end + after.length + spaces.length);
  }
  const previous = siblings[at - 1];
  if (previous === undefined) return text.slice(0, prop.offset) + text.slice(end);
  return text.slice(0, previous.offset + previous.length) + text.slice(end);
}

/** `text` with `"key": value` added as the last property of `entry`, in its layout. */
export function addProperty(
  text: string,
  entry: Node,
  key: string,
  value: unknown,
  layout: JsonLayout,
): string {
  const colon = layout.spaced ? ": " : ":";
  const last = entry.children?.at(-1);
  const like = entry.children
    ?.map((p) => p.children?.[1])
    .find((v) => v?.type === "array" || v?.type === "object");
  if (last === undefined && !oneLine(text, entry)) {
    // An entry emptied across lines: its first property on the line after the brace.
    const at = entry.offset + 1;
    const indent = indentAt(text, entry.offset) + layout.unit;
    const rendered = inlineValues(text, undefined)
      ? inline(value, layout)
      : expanded(value, indent, layout);
    return `${text.slice(0, at)}${layout.eol}${indent}${JSON.stringify(key)}${colon}${rendered}${text.slice(at)}`;
  }
  if (last === undefined) {
    const pad = layout.padded ? " " : "";
    const at = entry.offset + 1;
    return `${text.slice(0, at)}${pad}${JSON.stringify(key)}${colon}${inline(value, layout)}${pad}${text.slice(entry.offset + entry.length - 1)}`;
  }
  const end = last.offset + last.length;
  if (oneLine(text, entry)) {
    const comma = layout.commaSpaced ? ", " : ",";
    return `${text.slice(0, end)}${comma}${JSON.stringify(key)}${colon}${inline(value, layout)}${text.slice(end)}`;
  }
  const indent = indentAt(text, last.offset);
  const rendered = inlineValues(text, like)
    ? inline(value, layout)
    : expanded(value, indent, layout);
  const line = `${JSON.stringify(key)}${colon}${rendered}`;
  const tail = /^[ \t]*(,?)[ \t]*(?:\/\/[^\n]*)?(?=\r?\n|$)/.exec(text.slice(end));
  if (tail !== null) {
    // After the last property's line (its comment stays with it); a trailing comma stays.
    const lineEnd = end + tail[0].length;
    const trailing = tail[1] === ",";
    const head = trailing
      ? text.slice(0, lineEnd)
      : `${text.slice(0, end)},${text.slice(end, lineEnd)}`;
    return `${head}${layout.eol}${indent}${line}${trailing ? "," : ""}${text.slice(lineEnd)}`;
  }
  return `${text.slice(0, end)},${layout.eol}${indent}${line}${text.slice(end)}`;
}

/** `text` with the value of `prop` replaced by `value`, written as the old value was. */
function replaceValue(text: string, prop: Node, value: unknown, layout: JsonLayout): string {
  const old = prop.children![1]!;
  const rendered = oneLine(text, old)
    ? inline(value, spacingOf(text.slice(old.offset, old.offset + old.length), layout))
    : expanded(value, indentAt(text, prop.offset), layout);
  return text.slice(0, old.offset) + rendered + text.slice(old.offset + old.length);
}

/**
 * `text` with the object at `path` turned from `original` into `wired`: the keys of
 * `original` that `wired` lacks removed, the others set where they are or appended.
 */
export function rewriteJsonEntry(
  text: string,
  path: JsonPath,
  original: Record<string, unknown>,
  wired: Record<string, unknown>,
): { text: string } | { why: string } {
  const layout = layoutOf(text);
  let next = text;
  const edit = (change: (entry: Node) => string): boolean => {
    const entry = entryNode(next, path);
    if (entry === undefined) return false;
    next = change(entry);
    return true;
  };
  const manual = { why: "its entry could not be rewritten in place; wire it by hand" };
  for (const key of Object.keys(original)) {
    if (key in wired) continue;
    const ok = edit((entry) => {
      const prop = property(entry, key);
      return prop ? removeProperty(next, entry, prop) : next;
    });
    if (!ok) return manual;
  }
  for (const [key, value] of Object.entries(wired)) {
    if (JSON.stringify(original[key]) === JSON.stringify(value)) continue;
    const ok = edit((entry) => {
      const prop = property(entry, key);
      // The entry's own spacing first (`"args":["a","b"]` in a file spaced elsewhere).
      const own = spacingOf(next.slice(entry.offset, entry.offset + entry.length), layout);
      return prop
        ? replaceValue(next, prop, value, own)
        : addProperty(next, entry, key, value, own);
    });
    if (!ok) return manual;
  }
  const check = entryNode(next, path);
  const errors: unknown[] = [];
  parseTree(next, errors as never[], { allowTrailingComma: true, disallowComments: false });
  if (check === undefined || errors.length > 0) return manual;
  const got = getNodeValue(check) as Record<string, unknown>;
  const want: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(original)) if (key in wired) want[key] = value;
  Object.assign(want, wired);
  const sorted = (o: Record<string, unknown>) =>
    JSON.stringify(
      Object.keys(o)
        .sort()
        .map((key) => [key, o[key]]),
    );
  return sorted(got) === sorted(want) ? { text: next } : manual;
}
