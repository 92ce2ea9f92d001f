/**
 * Hooks: tool calls a row asks the host to make at points in a
 * session — recall before a turn, remember after it. A hook is always an MCP tool call,
 * never a command, so "can edit the server list" never means "can run anything".
 *
 * This module is the data half: the events, what each offers to templates, validation,
 * template rendering, `contextBlocks` and `readVeto`. The runner that calls the pool is
 * src/pool/calls/hooks.ts. The hook, context and outcome types are the wire's, declared once in
 * mcpool-protocol and re-exported here. Browser-safe (the `mcpool/hooks` entry): no `node:`
 * imports, nothing from the SDK or the pool, and from mcpool-protocol only types.
 */
import type { Covering, HookEvent, HookOutcome, ToolHook } from "mcpool-protocol";

export type { HookContext, HookEvent, HookFailure, HookOutcome, ToolHook } from "mcpool-protocol";

const EVENTS_IN_SESSION_ORDER = [
  "sessionStart",
  "beforeTurn",
  "afterTurn",
  "beforeCompact",
  "sessionEnd",
  "sessionDelete",
] as const satisfies readonly HookEvent[];

/**
 * Every point in a session a hook can run at, in the order a session meets them. Typed to
 * cover HookEvent: an event the wire gains fails to compile here until it is listed.
 */
export const HOOK_EVENTS: Covering<HookEvent, typeof EVENTS_IN_SESSION_ORDER> =
  EVENTS_IN_SESSION_ORDER;

/** Events that run before the request, so what a hook returns can still reach the model. */
export const INJECT_EVENTS: readonly HookEvent[] = ["sessionStart", "beforeTurn"];

/** Events that announce something a hook may ask the host not to do. */
export const VETO_EVENTS: readonly HookEvent[] = ["beforeCompact"];

/** Placeholders every event offers; `vars.*` is whatever the host put in `vars`. */
const COMMON_VARS = ["session.id", "host", "now", "vars.*"] as const;

const EVENT_VARS: Record<HookEvent, readonly string[]> = {
  sessionStart: ["prompt"],
  beforeTurn: ["prompt", "turn.index"],
  afterTurn: ["prompt", "reply", "turn.index", "turn.messages"],
  beforeCompact: ["compacting", "range.from", "range.through"],
  sessionEnd: ["status", "reply"],
  sessionDelete: [],
};

/** The placeholders `event` offers to a hook's args, `vars.*` standing for any var. */
export function hookVars(event: HookEvent): string[] {
  return [...COMMON_VARS, ...EVENT_VARS[event]];
}

/** A hook's own budget in contextBlocks when it names none, in tokens. */
export const DEFAULT_HOOK_MAX_TOKENS = 1000;
/** What contextBlocks lets every hook together add to one request, in tokens. */
export const DEFAULT_CONTEXT_MAX_TOKENS = 2000;
/**
 * Bound on a hook the user or a compaction is waiting on (sessionStart, beforeTurn, and a
 * beforeCompact hook that may veto), ms. A memory server that is slow costs a turn 3 s of
 * recall at most, not the turn.
 */
export const DEFAULT_WAITED_HOOK_TIMEOUT_MS = 3000;
/** Bound on every other hook, ms: the MCP SDK's own request timeout. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;

/** One block that made it into contextBlocks' text. */
export interface InjectedBlock {
  hook: string;
  serverId: string;
  label: string;
  tokens: number;
  /** Exactly as it went into the block: trimmed, cut with … if over a cap, no wrapper. */
  text: string;
}

export interface ContextBlocks {
  /** `<context source="Label">…</context>` blocks, one per line group, or "". */
  text: string;
  tokens: number;
  injected: InjectedBlock[];
}

type Fields = Record<string, unknown>;

function isPlainObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `${JSON.stringify(value.slice(0, 40))}`;
  return String(value);
}

export function isHookEvent(value: unknown): value is HookEvent {
  return typeof value === "string" && (HOOK_EVENTS as readonly string[]).includes(value);
}

// ── Templates ──────────────────────────────────────────────────────────────────────

/** `{{ path }}`: letters, digits, `_`, `-`, dot-separated. */
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}$/;

/** Every placeholder path in a template value (strings inside objects and arrays included). */
export function placeholders(value: unknown): string[] {
  const found: string[] = [];
  const walk = (item: unknown): void => {
    if (typeof item === "string") {
      for (const match of item.matchAll(PLACEHOLDER)) found.push(match[1]!);
    } else if (Array.isArray(item)) item.forEach(walk);
    else if (isPlainObject(item)) Object.values(item).forEach(walk);
  };
  walk(value);
  return found;
}

/** Whether `event` offers `path`: one of its vars, a path inside one, or any `vars.*`. */
function offers(event: HookEvent, path: string): boolean {
  return hookVars(event).some((offered) =>
    offered.endsWith(".*")
      ? path.startsWith(offered.slice(0, -1)) && path.length > offered.length - 1
      : path === offered || path.startsWith(`${offered}.`),
  );
}

/** The value at a dotted path; undefined and null both mean "no value". */
export function lookupPath(context: unknown, path: string): unknown {
  let value: unknown = context;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Fields)[key];
  }
  return value ?? undefined;
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export type Rendered = { ok: true; value: unknown } | { ok: false; missing: string };

/**
 * A template with the context filled in. A string that is exactly one placeholder becomes
 * the value itself (an array stays an array); placeholders inside longer strings become
 * text. The first path with no value makes the whole render fail: a `session_id` sent as
 * `"app:"` would file a turn under the wrong session.
 */
export function renderTemplate(template: unknown, context: unknown): Rendered {
  let missing: string | undefined;
  const render = (item: unknown): unknown => {
    if (missing !== undefined) return undefined;
    if (typeof item === "string") {
      const whole = WHOLE.exec(item);
      if (whole) {
        const value = lookupPath(context, whole[1]!);
        if (value === undefined) missing = whole[1]!;
        return value;
      }
      return item.replace(PLACEHOLDER, (_, path: string) => {
        const value = lookupPath(context, path);
        if (value === undefined) {
          missing ??= path;
          return "";
        }
        return asText(value);
      });
    }
    if (Array.isArray(item)) return item.map(render);
    if (isPlainObject(item)) {
      return Object.fromEntries(Object.entries(item).map(([key, v]) => [key, render(v)]));
    }
    return item;
  };
  const value = render(template);
  return missing === undefined ? { ok: true, value } : { ok: false, missing };
}

// ── Validation ─────────────────────────────────────────────────────────────────────

function list(items: readonly string[]): string {
  return items.join(", ");
}

function checkHook(hook: unknown, at: string, problems: string[]): void {
  if (!isPlainObject(hook)) {
    problems.push(`\`${at}\` must be an object, got ${kindOf(hook)}`);
    return;
  }
  if (hook.id === undefined) problems.push(`\`${at}.id\` is missing; every hook needs one`);
  else if (typeof hook.id !== "string" || hook.id === "") {
    problems.push(`\`${at}.id\` must be a non-empty string, got ${kindOf(hook.id)}`);
  }

  let event: HookEvent | undefined;
  if (hook.on === undefined) {
    problems.push(`\`${at}.on\` is missing; it must be one of ${list(HOOK_EVENTS)}`);
  } else if (!isHookEvent(hook.on)) {
    problems.push(
      `\`${at}.on\` ${kindOf(hook.on)} is not an event; it must be one of ${list(HOOK_EVENTS)}`,
    );
  } else event = hook.on;

  if (hook.tool === undefined) problems.push(`\`${at}.tool\` is missing; name the tool to call`);
  else if (typeof hook.tool !== "string" || hook.tool === "") {
    problems.push(`\`${at}.tool\` must be a non-empty string, got ${kindOf(hook.tool)}`);
  }

  if (hook.args !== undefined && !isPlainObject(hook.args)) {
    problems.push(`\`${at}.args\` must be an object, got ${kindOf(hook.args)}`);
  } else if (hook.args !== undefined && event !== undefined) {
    for (const path of new Set(placeholders(hook.args))) {
      if (!offers(event, path)) {
        problems.push(
          `\`${at}.args\` uses {{${path}}}, which ${event} does not offer (it offers ${list(hookVars(event))})`,
        );
      }
    }
  }

  for (const flag of ["inject", "veto"] as const) {
    if (hook[flag] !== undefined && typeof hook[flag] !== "boolean") {
      problems.push(`\`${at}.${flag}\` must be true or false, got ${kindOf(hook[flag])}`);
    }
  }
  if (hook.inject === true && event !== undefined && !INJECT_EVENTS.includes(event)) {
    problems.push(
      `\`${at}.inject\` is set on ${event}, which runs too late for the model to read it; only ${list(INJECT_EVENTS)} can inject`,
    );
  }
  if (hook.veto === true && event !== undefined && !VETO_EVENTS.includes(event)) {
    problems.push(
      `\`${at}.veto\` is set on ${event}, which announces nothing a hook can stop; only ${list(VETO_EVENTS)} can veto`,
    );
  }

  for (const [field, unit] of [
    ["maxTokens", "tokens"],
    ["timeoutMs", "milliseconds"],
  ] as const) {
    const value = hook[field];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
      problems.push(
        `\`${at}.${field}\` must be a whole number of ${unit} > 0, got ${kindOf(value)}`,
      );
    }
  }
}

/**
 * Every problem with a row's `hooks`, as sentences naming the field: a hook's shape (what a
 * form holds is not yet a ToolHook), an unknown event, a placeholder the event does not
 * offer, `inject` on an event that runs too late, `veto` on an event that announces nothing
 * stoppable, and duplicate ids. Empty means the hooks are fine. Run it when a row is saved.
 */
export function validateHooks(hooks: unknown): string[] {
  if (hooks === undefined) return [];
  if (!Array.isArray(hooks)) return [`\`hooks\` must be an array of hooks, got ${kindOf(hooks)}`];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  hooks.forEach((hook: unknown, i) => {
    const at = `hooks[${i}]`;
    checkHook(hook, at, problems);
    const id = isPlainObject(hook) && typeof hook.id === "string" ? hook.id : undefined;
    if (id === undefined || id === "") return;
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else problems.push(`\`${at}.id\` "${id}" is already used by \`hooks[${first}]\``);
  });
  return problems;
}

/** The bound a hook gets: its own, else 3 s where someone waits on it, else the SDK's 60 s. */
export function hookTimeoutMs(hook: Pick<ToolHook, "on" | "timeoutMs" | "veto">): number {
  if (hook.timeoutMs !== undefined && hook.timeoutMs > 0) return hook.timeoutMs;
  const waited =
    INJECT_EVENTS.includes(hook.on) || (hook.veto === true && VETO_EVENTS.includes(hook.on));
  return waited ? DEFAULT_WAITED_HOOK_TIMEOUT_MS : DEFAULT_HOOK_TIMEOUT_MS;
}

// ── What a hook may add or ask ─────────────────────────────────────────────────────

/**
 * A tool asking for a compaction not to happen: its output parses as a JSON object whose
 * `veto` is `true` (MCP gives a tool no other channel). A `reason` string comes back with
 * it. Prose, a list, `{"veto": "true"}` are not vetoes, so a tool that has never heard of
 * any of this cannot stop a compaction by accident. Takes the text or a parsed value.
 */
export function readVeto(output: unknown): { veto: true; reason?: string } | undefined {
  let value = output;
  if (typeof output === "string") {
    try {
      value = JSON.parse(output);
    } catch {
      return undefined;
    }
  }
  if (!isPlainObject(value) || value.veto !== true) return undefined;
  return typeof value.reason === "string" && value.reason !== ""
    ? { veto: true, reason: value.reason }
    : { veto: true };
}

/** Estimated tokens of text, at four characters a token (as tools() counts). */
function tokensOf(text: string): number {
  return Math.ceil(text.length / 4);
}

/** `text` in at most `maxChars` characters, ending in … when cut; never splits a pair. */
function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return maxChars === 1 ? "…" : "";
  let end = maxChars - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * What the injecting hooks of an event returned, as `<context source="Label">` blocks for
 * the request. Only `ok` outcomes the row marked `inject` on an event that allows it. Each
 * text is trimmed and capped at its hook's `maxTokens` (1000 by default), and all of them
 * together at `maxTokens` (2000 by default; the wrappers are not counted); a cut ends in
 * "…", and a block with no room left is left out. `injected` says what went in, exactly.
 */
export function contextBlocks(
  outcomes: readonly HookOutcome[],
  options: { maxTokens?: number } = {},
): ContextBlocks {
  let remaining = (options.maxTokens ?? DEFAULT_CONTEXT_MAX_TOKENS) * 4;
  const injected: InjectedBlock[] = [];
  const blocks: string[] = [];
  for (const outcome of outcomes) {
    if (!outcome.ok || !outcome.inject || outcome.text === undefined) continue;
    const trimmed = outcome.text.trim();
    if (trimmed === "") continue;
    const cap = Math.min((outcome.maxTokens ?? DEFAULT_HOOK_MAX_TOKENS) * 4, remaining);
    const text = cut(trimmed, cap);
    if (text === "" || text === "…") continue;
    remaining -= text.length;
    injected.push({
      hook: outcome.hook,
      serverId: outcome.serverId,
      label: outcome.label,
      tokens: tokensOf(text),
      text,
    });
    blocks.push(`<context source="${escapeAttribute(outcome.label)}">\n${text}\n</context>`);
  }
  return {
    text: blocks.join("\n"),
    tokens: injected.reduce((sum, block) => sum + block.tokens, 0),
    injected,
  };
}
