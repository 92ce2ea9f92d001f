/**
 * Durations in milliseconds, judged in one place for `mcpool validate`, the daemon's
 * reading of `mcp.json` and the pool's own options. A duration is a whole number of
 * milliseconds no longer than a Node timer can wait: setTimeout takes a delay above
 * 2^31−1 ms as 1 ms, so a `callTimeoutMs` of 3,000,000,000 would time every call out at
 * once. 0 is allowed only where it means "off".
 *
 * Browser-safe: no `node:` imports, nothing from the SDK or the pool.
 */

/** The longest delay a Node timer honours (2^31−1 ms, about 24.8 days). */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * The durations a row may carry, each with what 0 means where 0 is allowed
 * (`undefined`: 0 is not a duration there). Null or absent means the pool's.
 */
export const ROW_DURATIONS: Readonly<Record<string, string | undefined>> = {
  connectTimeoutMs: undefined,
  callTimeoutMs: undefined,
  probeTimeoutMs: undefined,
  idleTimeoutMs: "never closed for idleness",
};

/** The durations of the pool's options and of the `"mcpool"` section, likewise. */
export const POOL_DURATIONS: Readonly<Record<string, string | undefined>> = {
  connectTimeoutMs: undefined,
  callTimeoutMs: undefined,
  probeTimeoutMs: undefined,
  crashBackoffMs: "no backoff",
  syncDebounceMs: "no debounce",
  idleTimeoutMs: "never closed for idleness",
};

/** A short rendering of a value for a message; durations are not secrets, strings may be. */
function shown(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value.length <= 40 ? JSON.stringify(value) : "a string";
  if (value === null) return "null";
  return Array.isArray(value)
    ? "an array"
    : `${typeof value === "object" ? "an" : "a"} ${typeof value}`;
}

/**
 * Why `value` is not a usable duration for `name`, or undefined when it is. `zero` says
 * what 0 means where 0 is allowed; without it the least duration is 1 ms.
 */
export function durationProblem(name: string, value: unknown, zero?: string): string | undefined {
  const least = zero === undefined ? 1 : 0;
  if (
    typeof value === "number" &&
    Number.isInteger(value) &&
    value >= least &&
    value <= MAX_DURATION_MS
  ) {
    return undefined;
  }
  const from = zero === undefined ? "1" : `0 (${zero})`;
  return `\`${name}\` must be a whole number of milliseconds from ${from} to ${MAX_DURATION_MS} (about 24.8 days), the longest a timer can wait; got ${shown(value)}`;
}

/**
 * The problems of every duration in `fields` that `values` sets; null and absent are
 * skipped (they mean "the default"). `prefix` names the enclosing object in messages.
 */
export function durationProblems(
  fields: Readonly<Record<string, string | undefined>>,
  values: Readonly<Record<string, unknown>>,
  prefix = "",
): string[] {
  const problems: string[] = [];
  for (const [field, zero] of Object.entries(fields)) {
    const value = values[field];
    if (value === undefined || value === null) continue;
    const problem = durationProblem(`${prefix}${field}`, value, zero);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}
