/**
 * A unified diff of two texts, line by line, as `diff -u` and `git diff` print it: what
 * `mcpool import` shows before it writes anything. Files here are config files of a few
 * hundred lines, so the longest common subsequence is found with the plain quadratic table
 * rather than a dependency.
 */

/** Unchanged lines kept around each change, as `diff -u` does. */
const CONTEXT = 3;

type Op = { kind: " " | "-" | "+"; line: string };

function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The edit script from `a` to `b`: every line of each, in order, marked kept, removed or added. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  // Common prefix and suffix first: an import touches a few lines of a long file.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  // lcs[i][j]: length of the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] =
        a[start + i] === b[start + j]
          ? lcs[i + 1]![j + 1]! + 1
          : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: " ", line }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      ops.push({ kind: " ", line: a[start + i]! });
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      // Removals before additions, as diff prints them.
      ops.push({ kind: "-", line: a[start + i]! });
      i++;
    } else {
      ops.push({ kind: "+", line: b[start + j]! });
      j++;
    }
  }
  for (const line of a.slice(endA)) ops.push({ kind: " ", line });
  return ops;
}

/**
 * The unified diff from `before` to `after` under the given file names, or "" when they
 * have the same lines.
 */
export function unifiedDiff(before: string, after: string, from: string, to: string): string {
  const ops = editScript(linesOf(before), linesOf(after));
  const changed = ops.flatMap((op, index) => (op.kind === " " ? [] : [index]));
  if (changed.length === 0) return "";
  // Group changes whose context would touch or overlap into one hunk.
  const groups: [number, number][] = [];
  for (const index of changed) {
    const last = groups.at(-1);
    if (last && index - last[1] <= 2 * CONTEXT + 1) last[1] = index;
    else groups.push([index, index]);
  }
  // Line numbers before each op, in the old and the new text.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let oldLine = 1;
  let newLine = 1;
  for (const op of ops) {
    oldAt.push(oldLine);
    newAt.push(newLine);
    if (op.kind !== "+") oldLine++;
    if (op.kind !== "-") newLine++;
  }
  const out = [`--- ${from}`, `+++ ${to}`];
  for (const [first, last] of groups) {
    const begin = Math.max(0, first - CONTEXT);
    const end = Math.min(ops.length - 1, last + CONTEXT);
    const slice = ops.slice(begin, end + 1);
    const oldCount = slice.filter((op) => op.kind !== "+").length;
    const newCount = slice.filter((op) => op.kind !== "-").length;
    // An empty range is numbered by the line before it, as diff does.
    const oldStart = oldCount === 0 ? oldAt[begin]! - 1 : oldAt[begin]!;
    const newStart = newCount === 0 ? newAt[begin]! - 1 : newAt[begin]!;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of slice) out.push(`${op.kind}${op.line}`);
  }
  return `${out.join("\n")}\n`;
}
