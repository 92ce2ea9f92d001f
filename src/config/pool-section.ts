/**
 * The `"mcpool"` section of `mcp.json` judged as a whole: every key it may hold,
 * each with its type, so `validate` and the daemon's status name a typo (`callTimeoutMS`),
 * a wrong type (`"childEnv": ["PATH", 1]`) or a value outside its set (`"childEnv": "nope"`)
 * instead of the pool quietly keeping its default. The daemon still applies what it can.
 *
 * Browser-safe: no `node:` imports.
 */
import { durationProblem, durationProblems, POOL_DURATIONS } from "./durations.js";
import { closestKey, typoMessage } from "./suggest.js";

/** One problem with the key it belongs to, so the caller can say where the key is. */
export interface SectionProblem {
  key: string;
  message: string;
}

const PREFIX = "mcpool.";

/** Who takes a key's value: the pool's options, its memory monitor, or the daemon itself. */
export type SectionTaker = "pool" | "monitor" | "daemon";

/** One key of the section: what it holds, what stands without it, and how it is judged. */
export interface SectionKey<T = unknown, W extends SectionTaker = SectionTaker> {
  /** What the key holds, as the docs say it. */
  readonly type: string;
  /** What stands when the key is absent, null or unusable. */
  readonly default: string;
  /** What the key does. */
  readonly doc: string;
  readonly takenBy: W;
  /** Every problem of a value that is not null or absent: what `validate` and status say. */
  problems(value: unknown): string[];
  /** The value the daemon applies, or undefined: the default stands. */
  read(value: unknown): T | undefined;
}

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

/** A duration of the pool's options (durations.ts judges it, and says what 0 means). */
function duration(name: string, doc: string, fallback: string): SectionKey<number, "pool"> {
  const zero = POOL_DURATIONS[name];
  return {
    type: "milliseconds",
    default: fallback,
    doc,
    takenBy: "pool",
    problems: (value) => durationProblems({ [name]: zero }, { [name]: value }, PREFIX),
    read: (value) =>
      durationProblem(name, value, zero) === undefined ? (value as number) : undefined,
  };
}

function countProblems(name: string, value: unknown): string[] {
  return isCount(value)
    ? []
    : [`\`${PREFIX}${name}\` must be a whole number ≥ 0; got ${quoted(value)}`];
}

/** A whole number ≥ 0 of the pool's options; the pool takes any number ≥ 0. */
function count(name: string, doc: string, fallback: string): SectionKey<number, "pool"> {
  return {
    type: "whole number ≥ 0",
    default: fallback,
    doc,
    takenBy: "pool",
    problems: (value) => countProblems(name, value),
    read: (value) =>
      typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined,
  };
}

/** A whole number ≥ 0 of the memory monitor's; 0 leaves its default. */
function monitorCount(name: string, doc: string, fallback: string): SectionKey<number, "monitor"> {
  return {
    type: "whole number ≥ 0",
    default: fallback,
    doc,
    takenBy: "monitor",
    problems: (value) => countProblems(name, value),
    read: (value) =>
      typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : undefined,
  };
}

function flag<W extends SectionTaker>(
  name: string,
  takenBy: W,
  doc: string,
  fallback: string,
): SectionKey<boolean, W> {
  return {
    type: "true or false",
    default: fallback,
    doc,
    takenBy,
    problems: (value) =>
      typeof value === "boolean"
        ? []
        : [`\`${PREFIX}${name}\` must be true or false; got ${quoted(value)}`],
    read: (value) => (typeof value === "boolean" ? value : undefined),
  };
}

const CHILD_ENV_POLICIES = ["inherit", "minimal"];

const ELICITATION_MODES = ["form", "url"];

const childEnv: SectionKey<"inherit" | "minimal" | readonly string[], "pool"> = {
  type: '"inherit", "minimal" or a list of variable names',
  default: '"inherit"',
  doc: "what a stdio server inherits",
  takenBy: "pool",
  problems(value) {
    if (typeof value === "string" && CHILD_ENV_POLICIES.includes(value)) return [];
    if (Array.isArray(value) && value.every((name) => typeof name === "string")) return [];
    return [
      `\`${PREFIX}childEnv\` must be "inherit", "minimal" or a list of variable names; got ${quoted(value)}`,
    ];
  },
  read(value) {
    if (value === "inherit" || value === "minimal") return value;
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
    return undefined;
  },
};

const resultCache: SectionKey<{ ttlMs?: number; maxEntries?: number }, "pool"> = {
  type: "true or { ttlMs, maxEntries }",
  default: "off (30 s, 256 when on)",
  doc: "answer repeated read-only calls of rows that trust their annotations from memory",
  takenBy: "pool",
  problems(value) {
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
  },
  read(value) {
    if (value === true) return {};
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const { ttlMs, maxEntries } = value as Record<string, unknown>;
    return {
      ...(typeof ttlMs === "number" && ttlMs >= 0 ? { ttlMs } : {}),
      ...(typeof maxEntries === "number" && maxEntries >= 0 ? { maxEntries } : {}),
    };
  },
};

const elicitationModes: SectionKey<("form" | "url")[], "pool"> = {
  type: 'a list of "form" and "url"',
  default: '["form"]',
  doc: "what the pool declares it can ask a person; [] for none",
  takenBy: "pool",
  problems(value) {
    if (Array.isArray(value) && value.every((mode) => ELICITATION_MODES.includes(mode as string))) {
      return [];
    }
    return [
      `\`${PREFIX}elicitationModes\` must be a list of "form" and "url"; got ${Array.isArray(value) ? "other values" : kind(value)}`,
    ];
  },
  read(value) {
    if (!Array.isArray(value) || !value.every((mode) => mode === "form" || mode === "url")) {
      return undefined;
    }
    return value as ("form" | "url")[];
  },
};

const maxConnections: SectionKey<number, "daemon"> = {
  type: "whole number ≥ 1",
  default: "1,000",
  doc: "connections the daemon holds at once, its socket's and its MCP sockets' together",
  takenBy: "daemon",
  problems(value) {
    if (value === 0) {
      return [`\`${PREFIX}maxConnections\` must be at least 1 (the default is 1000); got 0`];
    }
    return countProblems("maxConnections", value);
  },
  read: (value) =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined,
};

const maxChildrenPerServer: SectionKey<number, "pool"> = {
  type: "whole number ≥ 1",
  default: "8",
  doc: "children one server runs for hosts with other capabilities or roots than the pool's (one per project, one per capability set); past it the least recently used idle one ends",
  takenBy: "pool",
  problems(value) {
    if (value === 0) {
      return [`\`${PREFIX}maxChildrenPerServer\` must be at least 1 (the default is 8); got 0`];
    }
    return countProblems("maxChildrenPerServer", value);
  },
  read: (value) =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined,
};

const maxConnectionsPerProcess: SectionKey<number, "daemon"> = {
  type: "whole number ≥ 1",
  default: "a quarter of maxConnections",
  doc: "the most of those connections one process may hold, so one process cannot lock the others out",
  takenBy: "daemon",
  problems(value) {
    if (value === 0) {
      return [
        `\`${PREFIX}maxConnectionsPerProcess\` must be at least 1 (the default is a quarter of maxConnections); got 0`,
      ];
    }
    return countProblems("maxConnectionsPerProcess", value);
  },
  read: (value) =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined,
};

/**
 * Every key the section may hold, each once: its type, default, doc and judgement. The
 * list of keys, the checks of `validate` and the options the daemon applies are read from
 * here; a key near none of these is taken for a typo of the nearest.
 */
export const POOL_SECTION = {
  connectTimeoutMs: duration(
    "connectTimeoutMs",
    "every row's budget for starting: the handshake and every tools/list page",
    "the SDK's 60 s per request",
  ),
  callTimeoutMs: duration("callTimeoutMs", "every row's budget for one call", "60 s"),
  probeTimeoutMs: duration(
    "probeTimeoutMs",
    "every row's budget for `mcpool probe`",
    "connectTimeoutMs",
  ),
  crashBackoffMs: duration(
    "crashBackoffMs",
    "the first wait after a server failed, doubling per failure up to 5 minutes",
    "5,000 ms",
  ),
  syncDebounceMs: duration(
    "syncDebounceMs",
    "how long edits to mcp.json are gathered before a reconcile",
    "100 ms",
  ),
  idleTimeoutMs: duration(
    "idleTimeoutMs",
    "stop a server after this long without a use; 0 never",
    "never",
  ),
  maxResultChars: count(
    "maxResultChars",
    "every row's cap on the text a call returns; 0 no cap",
    "none",
  ),
  maxDescriptionChars: count(
    "maxDescriptionChars",
    "cap on a tool description's length in listings",
    "none",
  ),
  toolsTokenWarning: count(
    "toolsTokenWarning",
    "estimated tokens of all tool definitions above which the log warns; 0 silences",
    "20,000",
  ),
  maxConcurrentStarts: count("maxConcurrentStarts", "servers a reconcile starts at once", "8"),
  maxChildrenPerServer,
  pingTimeoutMs: count(
    "pingTimeoutMs",
    "how long a server whose call timed out gets to answer a ping before it is replaced, ms",
    "5,000 ms",
  ),
  maxMemoryMb: monitorCount(
    "maxMemoryMb",
    "resident memory a server's process group may hold, MB; 0 no limit",
    "none",
  ),
  memoryCheckMs: monitorCount(
    "memoryCheckMs",
    "how often a server under a memory limit is sampled, ms",
    "5,000 ms",
  ),
  maxConnections,
  maxConnectionsPerProcess,
  lazy: flag("lazy", "pool", "start every row's server at its first use", "false"),
  indexTools: flag("indexTools", "pool", "false: never list tools (a pure proxy)", "true"),
  coerceArguments: flag(
    "coerceArguments",
    "pool",
    "coerce call arguments to the tool's input schema",
    "true",
  ),
  sampling: flag("sampling", "daemon", "false declares no sampling capability", "true"),
  childEnv,
  resultCache,
  elicitationModes,
} as const;

type Section = typeof POOL_SECTION;

/** The values of the keys `taker` takes, each as its `read` gives it. */
export type SectionValues<W extends SectionTaker> = {
  -readonly [
    K in keyof Section as Section[K]["takenBy"] extends W ? K : never
  ]?: Section[K] extends SectionKey<infer T> ? T : never;
};

/** Every key the section may hold. */
export const POOL_SECTION_KEYS: readonly string[] = Object.keys(POOL_SECTION);

/**
 * What the daemon applies of `section` for `taker`: each usable value it takes. A bad
 * value is left out, so its default stands (its problem is in status: parseMcpJson says it).
 */
export function sectionValues<W extends SectionTaker>(
  section: Readonly<Record<string, unknown>>,
  taker: W,
): SectionValues<W> {
  const values: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(POOL_SECTION) as [string, SectionKey][]) {
    if (key.takenBy !== taker) continue;
    const value = key.read(section[name]);
    if (value !== undefined) values[name] = value;
  }
  return values as SectionValues<W>;
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
    if (!Object.hasOwn(POOL_SECTION, key)) continue;
    const known: SectionKey = POOL_SECTION[key as keyof Section];
    for (const message of known.problems(value)) problems.push({ key, message });
  }
  return problems;
}
