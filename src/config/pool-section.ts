/**
 * The `"mcpool"` section of `mcp.json` judged as a whole (issue 14): every key it may hold,
 * each with its type, so `validate` and the daemon's status name a typo (`callTimeoutMS`),
 * a wrong type (`"childEnv": ["PATH", 1]`) or a value outside its set (`"childEnv": "nope"`)
 * instead of the pool quietly keeping its default. The daemon still applies what it can.
 *
 * Browser-safe: no `node:` imports.
 */
import { durationProblems, POOL_DURATIONS } from "./durations.js";
import { closestKey, typoMessage } from "./suggest.js";

/** One problem with the key it belongs to, so the caller can say where the key is. */
export interface SectionProblem {
  key: string;
  message: string;
}

const PREFIX = "mcpool.";

/** Whole numbers ≥ 0 that are not durations. */
const COUNTS = [
  "maxResultChars",
  "maxDescriptionChars",
  "toolsTokenWarning",
  "maxConcurrentStarts",
  // The pool reads it as milliseconds ≥ 0, 0 included.
  "pingTimeoutMs",
  // A server's memory limit, MB (issue 17); 0: none.
  "maxMemoryMb",
  // How often a server under a memory limit is sampled, ms (issue 17).
  "memoryCheckMs",
  // Connections the daemon accepts at once, its socket's and its MCP sockets' (issue 27); ≥ 1.
  "maxConnections",
  // A server's children for other hosts' projects and capabilities; ≥ 1.
  "maxChildrenPerServer",
];

const BOOLEANS = ["lazy", "indexTools", "coerceArguments", "sampling"];

const CHILD_ENV_POLICIES = ["inherit", "minimal"];

const ELICITATION_MODES = ["form", "url"];

/** Every key the section may hold. */
export const POOL_SECTION_KEYS: readonly string[] = [
  ...Object.keys(POOL_DURATIONS),
  ...COUNTS,
  ...BOOLEANS,
  "childEnv",
  "resultCache",
  "elicitationModes",
];

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** A value for a message: the section holds no secrets, but a long string is cut to its kind. */
function quoted(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "string" && value.length <= 40 ? JSON.stringify(value) : kind(value);
}

function checkChildEnv(value: unknown): string | undefined {
  if (typeof value === "string" && CHILD_ENV_POLICIES.includes(value)) return undefined;
  if (Array.isArray(value) && value.every((name) => typeof name === "string")) return undefined;
  return `\`${PREFIX}childEnv\` must be "inherit", "minimal" or a list of variable names; got ${quoted(value)}`;
}

function checkElicitationModes(value: unknown): string | undefined {
  if (Array.isArray(value) && value.every((mode) => ELICITATION_MODES.includes(mode as string))) {
    return undefined;
  }
  return `\`${PREFIX}elicitationModes\` must be a list of "form" and "url"; got ${Array.isArray(value) ? "other values" : kind(value)}`;
}

function checkResultCache(value: unknown): string[] {
  if (value === true || value === false) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [
      `\`${PREFIX}resultCache\` must be true or an object with \`ttlMs\` and \`maxEntries\`; got ${kind(value)}`,
    ];
  }
  const problems: string[] = [];
  const known = ["ttlMs", "maxEntries"];
  for (const [key, item] of Object.entries(value)) {
    const near = closestKey(key, known);
    if (near !== undefined) problems.push(typoMessage(key, near, `${PREFIX}resultCache.`));
    else if (known.includes(key) && !isCount(item)) {
      problems.push(
        `\`${PREFIX}resultCache.${key}\` must be a whole number ≥ 0; got ${quoted(item)}`,
      );
    }
  }
  return problems;
}

/** The problem of one known key's value, if any (durations apart: durations.ts says those). */
function valueProblems(key: string, value: unknown): string[] {
  if (key === "maxConnections" && value === 0) {
    return [`\`${PREFIX}maxConnections\` must be at least 1 (the default is 1000); got 0`];
  }
  if (key === "maxChildrenPerServer" && value === 0) {
    return [`\`${PREFIX}maxChildrenPerServer\` must be at least 1 (the default is 8); got 0`];
  }
  if (COUNTS.includes(key) && !isCount(value)) {
    return [`\`${PREFIX}${key}\` must be a whole number ≥ 0; got ${quoted(value)}`];
  }
  if (BOOLEANS.includes(key) && typeof value !== "boolean") {
    return [`\`${PREFIX}${key}\` must be true or false; got ${quoted(value)}`];
  }
  if (key === "childEnv") return [checkChildEnv(value)].filter((p) => p !== undefined);
  if (key === "elicitationModes") {
    return [checkElicitationModes(value)].filter((p) => p !== undefined);
  }
  if (key === "resultCache") return checkResultCache(value);
  return [];
}

/**
 * Every problem of the section: a key that looks like a typo of a known one, a value of
 * the wrong type or outside its set. A key near no known one passes (a newer version's).
 */
export function poolSectionProblems(section: Readonly<Record<string, unknown>>): SectionProblem[] {
  const problems: SectionProblem[] = [];
  for (const [key, value] of Object.entries(section)) {
    const near = closestKey(key, POOL_SECTION_KEYS);
    if (near !== undefined) {
      problems.push({ key, message: typoMessage(key, near, PREFIX) });
      continue;
    }
    if (value === undefined || value === null) continue;
    const found =
      key in POOL_DURATIONS
        ? durationProblems({ [key]: POOL_DURATIONS[key] }, { [key]: value }, PREFIX)
        : valueProblems(key, value);
    for (const message of found) problems.push({ key, message });
  }
  return problems;
}
