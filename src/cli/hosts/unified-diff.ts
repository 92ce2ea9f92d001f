/**
 * A unified diff of two texts, line by line, as `diff -u` and `git diff` print it: what
 * `mcpool import` and `mcpool wire` show before they write anything. Myers' O((n+m)·D)
 * algorithm: `~/.claude.json` runs to thousands of lines and an edit touches a few, so the
 * cost follows the size of the change, not the product of the two lengths.
 */

/** Past this many differences the two texts are shown as a whole replacement. */
const MAX_EDIT_DISTANCE = 4000;

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
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: " ", line }));
  ops.push(...middleScript(a.slice(start, endA), b.slice(start, endB)));
  for (const line of a.slice(endA)) ops.push({ kind: " ", line });
  return ops;
}

/** Myers' shortest edit script between `a` and `b`, removals before additions. */
function middleScript(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // v[k] for diagonals -d..d of each round, kept for the walk back.
  const trace: Int32Array[] = [];
  let v = new Int32Array(3);
  let found = n === 0 && m === 0;
  for (let d = 0; !found && d <= Math.min(n + m, MAX_EDIT_DISTANCE); d++) {
    const next = new Int32Array(2 * d + 3);
    const at = (row: Int32Array, k: number): number => row[k + (row.length >> 1)]!;
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && at(v, k - 1) < at(v, k + 1)) ? at(v, k + 1) : at(v, k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[k + d + 1] = x;
      if (x >= n && y >= m) found = true;
    }
    trace.push(next);
    v = next;
  }
  if (!found) {
    return [
      ...a.map((line) => ({ kind: "-" as const, line })),
      ...b.map((line) => ({ kind: "+" as const, line })),
    ];
  }
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const row = d > 0 ? trace[d - 1]! : new Int32Array(3);
    const at = (k: number): number => row[k + (row.length >> 1)]!;
    const k = x - y;
    const prevK = d === 0 ? 0 : k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: " ", line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: "+", line: b[--y]! });
      else ops.push({ kind: "-", line: a[--x]! });
    }
  }
  ops.reverse();
  // Within each run of changes, removals first, as diff prints them.
  for (let i = 0; i < ops.length;) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    let j = i;
    while (j < ops.length && ops[j]!.kind !== " ") j++;
    const run = ops.slice(i, j);
    ops.splice(
      i,
      j - i,
      ...run.filter((op) => op.kind === "-"),
      ...run.filter((op) => op.kind === "+"),
    );
    i = j;
  }
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
