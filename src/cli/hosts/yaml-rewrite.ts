/**
 * `mcpool wire goose` and `mcpool wire continue`: Goose's `config.yaml` (a map of extensions)
 * and Continue's (a list of `mcpServers` blocks) rewritten entry by entry. The `yaml` package's
 * document API edits the extension's map in place — its comments and other keys kept — and
 * only that map's text is replaced in the file, so the rest of it (provider settings, other
 * extensions, the way sequences are indented) stays byte for byte as it was. Stringifying
 * the whole document would normalise the layout of every other key.
 */
import { Document, isMap, isNode, isPair, isScalar, isSeq, parseDocument } from "yaml";
import { canonicalJson } from "./files.js";

/** Sequences written flush with their key (`args:\n- x`), as Goose's own serde_yaml writes them. */
function flushSequences(text: string): boolean {
  return /^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(text);
}

/**
 * `text` with the map at `path` (`extensions.<name>`, `mcpServers.<index>`) holding `entry`'s
 * keys: each key of `entry` set (in place where it was, appended where it was not), each key
 * of `drop` not in `entry` removed.
 */
export function rewriteYamlEntry(
  text: string,
  path: readonly (string | number)[],
  entry: Record<string, unknown>,
  drop: ReadonlySet<string>,
): { text: string } | { why: string } {
  const document = parseDocument(text);
  const node: unknown = document.getIn(path, true);
  if (!isMap(node) || node.range == null) return { why: "not a YAML map; wire it by hand" };
  const [start, , end] = node.range;
  for (const key of drop) if (!(key in entry)) node.delete(key);
  for (const [key, value] of Object.entries(entry)) {
    const current: unknown = node.get(key);
    if (JSON.stringify(current) === JSON.stringify(value)) continue;
    // A flow sequence (`args: ["-y", "pkg"]`) stays one; a block one stays block.
    const old: unknown = node.get(key, true);
    const flow = (isSeq(old) || isMap(old)) && old.flow === true;
    const made = document.createNode(value, { flow });
    // Its items quoted as the old ones were (`["-y", "pkg"]`).
    const quoted =
      isSeq(old) && old.items.some((item) => isScalar(item) && item.type === "QUOTE_DOUBLE");
    if (quoted && isSeq(made))
      for (const item of made.items) if (isScalar(item)) item.type = "QUOTE_DOUBLE";
    node.set(key, made);
  }
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const column = start - (text.lastIndexOf("\n", start - 1) + 1);
  let rendered = new Document(node).toString({
    indentSeq: !flushSequences(text),
    flowCollectionPadding: !/[[{][^\s\]}]/.test(text.slice(start, end)),
    // A flow sequence written on one line stays on one line, however long the entry grows.
    lineWidth: 0,
  });
  const original = text.slice(start, end);
  if (!original.endsWith("\n")) rendered = rendered.replace(/\n$/, "");
  // The map starts at its first key's column: every further line gets that indentation.
  const indented = rendered
    .split("\n")
    .map((line, i) => (i === 0 || line === "" ? line : " ".repeat(column) + line))
    .join(eol);
  return { text: text.slice(0, start) + indented + text.slice(end) };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The lines an item of a block collection holds: from its line's start to its end. */
function itemLines(text: string, item: unknown): [number, number] | undefined {
  const node: unknown = isPair(item) ? item.value : item;
  const range = isNode(node) ? node.range : undefined;
  const keyRange = isPair(item) && isNode(item.key) ? item.key.range : undefined;
  if (range == null) return undefined;
  const from = keyRange?.[0] ?? range[0];
  return [text.lastIndexOf("\n", from - 1) + 1, range[2]];
}

/** What `replaceYamlEntries` puts in: a map's entry (`key`) or a list's item. */
export type YamlAdded =
  { key: string; value: Record<string, unknown> } | { value: Record<string, unknown> };

/**
 * `text` with the items of the top-level block collection `at` whose keys (a map's) or
 * indexes (a list's) are in `goes` taken out, and `added` in the first one's place — after
 * the last item when none goes, under a new `at:` at the file's end when there is none; or
 * why not. Nothing added and every item gone, `at` stays, empty (`{}`, `[]`). Only those lines
 * change; the result must mean the old file with exactly that change.
 */
export function replaceYamlEntries(
  text: string,
  at: string,
  goes: readonly (string | number)[],
  added: YamlAdded | undefined,
  /** Without `added`: whether `at` is a list. */
  list = added !== undefined && !("key" in added),
): { text: string } | { why: string } {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const render = (column: number, unit: number): string =>
    added === undefined
      ? ""
      : new Document("key" in added ? { [added.key]: added.value } : [added.value])
          .toString({ indent: unit, indentSeq: !flushSequences(text), lineWidth: 0 })
          .replace(/\n$/, "")
          .split("\n")
          .map((line) => (line === "" ? line : " ".repeat(column) + line) + eol)
          .join("");
  const document = parseDocument(text);
  const node: unknown = document.get(at, true);
  let next: string;
  if (node === undefined && goes.length === 0) {
    const gap = text === "" || text.endsWith("\n") ? "" : eol;
    next = `${text}${gap}${at}:${eol}${render(2, 2)}`;
  } else {
    const block = (isMap(node) || isSeq(node)) && node.flow !== true && node.items.length > 0;
    const lines = block ? node.items.map((item) => itemLines(text, item)) : [];
    if (!block || lines.some((range) => range === undefined)) {
      return { why: `its ${at} is not a block ${list ? "list" : "map"}; wire it by hand` };
    }
    const keyOf = (item: unknown, index: number): unknown =>
      isPair(item) && isScalar(item.key) ? item.key.value : index;
    const going = node.items.flatMap((item, index) =>
      goes.includes(keyOf(item, index) as string | number) ? [lines[index]!] : [],
    );
    const [first] = lines as [number, number][];
    const column = /^ */.exec(text.slice(first[0]))![0].length;
    const parentStart = text.lastIndexOf("\n", (node.range?.[0] ?? 1) - 1) + 1;
    const unit = Math.max(2, column - /^ */.exec(text.slice(parentStart))![0].length);
    const end = lines.at(-1)![1];
    const [start, stop] = going[0] ?? [end, end];
    const lead = start === 0 || text[start - 1] === "\n" || added === undefined ? "" : eol;
    next = text.slice(0, start) + lead + render(column, unit);
    let from = stop;
    for (const [cut, resume] of going.slice(1)) {
      next += text.slice(from, cut);
      from = resume;
    }
    next += text.slice(from);
    if (added === undefined && going.length === node.items.length) {
      const emptied = emptyCollection(document, next, at, list);
      if (emptied === undefined) return { why: `its ${at} could not be emptied safely` };
      next = emptied;
    }
  }
  const before = document.toJS() as unknown;
  const root = isRecord(before) ? before : {};
  const was = root[at];
  let want: unknown;
  if (list) {
    const items = Array.isArray(was) ? was.filter((_, index) => !goes.includes(index)) : [];
    const index = goes.length > 0 ? Math.min(...(goes as number[])) : items.length;
    if (added !== undefined) items.splice(index, 0, added.value);
    want = items;
  } else {
    const kept = Object.entries(isRecord(was) ? was : {}).filter(([key]) => !goes.includes(key));
    want = {
      ...Object.fromEntries(kept),
      ...(added && "key" in added ? { [added.key]: added.value } : {}),
    };
  }
  const after = parseDocument(next);
  if (
    after.errors.length === 0 &&
    canonicalJson(after.toJS()) === canonicalJson({ ...root, [at]: want })
  ) {
    return { text: next };
  }
  return { why: `its ${at} could not be rewritten safely; wire it by hand` };
}

/**
 * `next` (`text` with every item of its top-level `at` cut out) with `at:` given an empty
 * collection (`at: {}`, `at: []`) on its own line, which would otherwise mean null.
 */
function emptyCollection(
  document: ReturnType<typeof parseDocument>,
  next: string,
  at: string,
  list: boolean,
): string | undefined {
  const top: unknown = document.contents;
  const pair = isMap(top)
    ? top.items.find((item) => isScalar(item.key) && item.key.value === at)
    : undefined;
  const keyEnd = pair !== undefined && isScalar(pair.key) ? pair.key.range?.[1] : undefined;
  if (keyEnd === undefined) return undefined;
  const colon = next.indexOf(":", keyEnd);
  if (colon === -1) return undefined;
  return `${next.slice(0, colon + 1)} ${list ? "[]" : "{}"}${next.slice(colon + 1)}`;
}
