/**
 * The pool refuses a duration no timer can honour (src/config/durations.ts) where it is
 * handed one — its options, a row given to sync(), a call's `timeoutMs` — with
 * `invalid-arguments` naming the option, rather than timing every call out at once.
 */
import {
  durationProblem,
  durationProblems,
  POOL_DURATIONS,
  ROW_DURATIONS,
} from "../../config/durations.js";
import type { McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";

/** Durations of the pool's `conversations` options; 0 is not one. */
const CONVERSATION_POOL_DURATIONS = { terminateTimeoutMs: undefined, endTimeoutMs: undefined };

function refuse(problems: readonly string[], detail: Record<string, unknown> = {}): void {
  if (problems.length === 0) return;
  throw new McpPoolError("invalid-arguments", problems.join("; "), detail);
}

/** Throws `invalid-arguments` when an option of `new McpPool()` is not a usable duration. */
export function checkPoolDurations(options: object & { conversations?: object }): void {
  refuse([
    ...durationProblems(POOL_DURATIONS, options as unknown as Record<string, unknown>),
    ...durationProblems(
      CONVERSATION_POOL_DURATIONS,
      (options.conversations ?? {}) as Record<string, unknown>,
      "conversations.",
    ),
  ]);
}

/** Throws `invalid-arguments` when a row handed to sync() carries an unusable duration. */
export function checkRowDurations(rows: readonly McpServerConfig[]): void {
  for (const row of rows) {
    const problems = durationProblems(ROW_DURATIONS, row as unknown as Record<string, unknown>);
    refuse(
      problems.map((problem) => `\`${row.id}\`: ${problem}`),
      { serverId: row.id },
    );
  }
}

/** Throws `invalid-arguments` when a call's own `timeoutMs` is not a usable duration. */
export function checkCallTimeout(timeoutMs: unknown): void {
  if (timeoutMs === undefined) return;
  const problem = durationProblem("timeoutMs", timeoutMs);
  if (problem !== undefined) refuse([problem], { timeoutMs });
}
