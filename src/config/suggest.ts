/**
 * "Did you mean …" for keys a person typed: `evn` for `env`, `callTimeoutMS` for
 * `callTimeoutMs`, `mcpServer` for `mcpServers`. A key near a known one is a typo to report;
 * a key near none is left alone, so a host's own options and a newer version's pass through.
 *
 * Browser-safe: no `node:` imports.
 */

/**
 * The most edits a key may be from a known one and still be taken for a typo of it. Two
 * catches a swapped or doubled letter and a dropped `s`; case differences cost nothing.
 */
const MAX_TYPO_DISTANCE = 2;

/** Keys this short get one edit at most: `id` is not a typo of `env`. */
const SHORT_KEY = 4;

/**
 * Edit distance with swaps of neighbours counted as one edit (optimal string alignment),
 * case-insensitive: `evn` is one edit from `env`, `callTimeoutMS` none from `callTimeoutMs`.
 */
export function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  const rows: number[][] = [Array.from({ length: right.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= left.length; i++) {
    const row = [i];
    for (let j = 1; j <= right.length; j++) {
      const cost = left[i - 1] === right[j - 1] ? 0 : 1;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && left[i - 1] === right[j - 2] && left[i - 2] === right[j - 1]) {
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
      }
    }
    rows.push(row);
  }
  return rows[left.length]![right.length]!;
}

/**
 * The known key `key` is most likely a typo of, or undefined when it is near none (or is
 * one).
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  if (known.includes(key)) return undefined;
  const limit = key.length <= SHORT_KEY ? 1 : MAX_TYPO_DISTANCE;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(key, name);
    if (distance <= limit && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

/** The message for a key taken for a typo of `known`, `where` naming the enclosing object. */
export function typoMessage(key: string, known: string, where = ""): string {
  return `\`${where}${key}\` is not a setting; did you mean \`${where}${known}\`?`;
}
