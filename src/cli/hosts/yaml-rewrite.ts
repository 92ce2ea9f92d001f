/**
 * `mcpool wire goose` and `mcpool wire continue`: Goose's `config.yaml` (a map of extensions)
 * and Continue's (a list of `mcpServers` blocks) rewritten entry by entry. The `yaml` package's
 * document API edits the extension's map in place — its comments and other keys kept — and
 * only that map's text is replaced in the file, so the rest of it (provider settings, other
 * extensions, the way sequences are indented) stays byte for byte as it was. Stringifying
 * the whole document would normalise the layout of every other key.
 */
import { Document, isMap, isScalar, isSeq, parseDocument } from "yaml";

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
