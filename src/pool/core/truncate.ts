/**
 * Text cut to a budget of characters, with a marker saying how much was kept: a result over
 * `maxResultChars`, a description over `maxDescriptionChars`.
 */

function marker(kept: number, total: number): string {
  return `\n[truncated: kept ${kept} of ${total} chars]\n`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Cuts text to `maxChars`, keeping the first two thirds and the last third of the budget
 * with a marker on its own line between them: the head is where most answers start, the
 * tail is where a log ends, and the marker tells the model it did not see everything.
 *
 * The budget is marker-inclusive: `kept` (N) is the largest count for which head, marker
 * (with its two newlines) and tail together fit in `maxChars`; head = floor(2N/3) and
 * tail = N − head. So a cut result is never longer than `maxChars`, unless the cap is
 * smaller than the marker itself, when nothing is kept and the output is the marker alone.
 * A cut never splits a surrogate pair, and N counts what was actually kept.
 *
 * `maxChars` of 0, null, undefined, a negative number or Infinity is no cap.
 */
export function truncateText(text: string, maxChars?: number | null): string {
  if (
    maxChars === undefined ||
    maxChars === null ||
    !(maxChars > 0) ||
    !Number.isFinite(maxChars)
  ) {
    return text;
  }
  const cap = Math.floor(maxChars);
  const total = text.length;
  if (total <= cap) return text;

  // The marker's length depends on N's digits; start low and grow while it still fits.
  let budget = Math.max(0, cap - marker(cap, total).length);
  while (budget + 1 + marker(budget + 1, total).length <= cap) budget += 1;

  let headEnd = Math.floor((budget * 2) / 3);
  let tailStart = total - (budget - headEnd);
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1;
  if (tailStart < total && isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;

  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  return `${head}${marker(head.length + tail.length, total)}${tail}`;
}
