/**
 * Long loops over rows that give the event loop a turn between batches, so a reconcile of
 * tens of thousands of rows does not leave the daemon deaf to `hello` and `status`
 * (bench/config-scale.mjs). Nothing here reorders work: items are handled in order, a batch at a time.
 */

/**
 * Rows handled between two turns of the event loop. A row costs a few microseconds to
 * register, so a batch holds the loop for a few milliseconds, and 10,000 rows pay for 20
 * turns (each well under a millisecond when nothing else is waiting).
 */
export const ROWS_PER_TURN = 500;

/** Resolves on the next turn of the event loop, after pending I/O callbacks. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** `map(item)` for each item in order, with a turn of the event loop after each batch. */
export async function mapInTurns<T, R>(
  items: readonly T[],
  map: (item: T) => R,
  size = ROWS_PER_TURN,
): Promise<R[]> {
  const out: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    if (start > 0) await nextTurn();
    for (const item of items.slice(start, start + size)) out.push(map(item));
  }
  return out;
}

/** `run(item)` for every item, a batch at a time (the batch's promises awaited together). */
export async function eachInTurns<T>(
  items: readonly T[],
  run: (item: T) => Promise<unknown>,
  size = ROWS_PER_TURN,
): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(run));
    await nextTurn();
  }
}
