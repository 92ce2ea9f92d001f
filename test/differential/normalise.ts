/**
 * Transcripts made comparable, and compared. Normalising removes only what differs between
 * any two runs of the same session direct: times, generated ids and the pool's own `_meta`
 * keys (`mcpool/…`). Everything else a host sees must be equal, except the short list in
 * EXPECTED_DIFFERENCES, each with why — the one place a difference is allowed.
 */
import type { Step } from "./session.js";

/**
 * What a host may see differently through the pool, and why. Each entry says which step it
 * touches and rewrites that step the same way on both sides.
 */
export const EXPECTED_DIFFERENCES: {
  why: string;
  applies(step: Step): boolean;
  rewrite(step: Step): Step;
}[] = [
  {
    why:
      "server-everything's get-env prints its process environment, which is its launcher's: " +
      "the host's direct, the daemon's through the pool",
    applies: (step) => step.op === "tools/call" && callName(step) === "get-env",
    rewrite: (step) => ({ ...step, result: "<the server's environment>" }),
  },
];

/**
 * The one allowed difference of era: a dual-era host (SDK v2 on `auto`) of the catalogue or
 * the client library is served in 2026-07-28 by the pool whatever the server speaks (so is
 * one of a bridge over several servers when one of them may speak it), so against a server
 * that speaks only 2025-11-25 the host's era differs from direct, and so does the modern envelope of each
 * answer (a list's `ttlMs` and `cacheScope`, the `_meta` key naming the answering server).
 * Applied only when the eras differ; the rest of each answer must still be equal.
 */
export const ERA_ENVELOPE = {
  why: "a dual-era host of the catalogue or the library is served in 2026-07-28 whatever its servers speak",
  fields: ["ttlMs", "cacheScope"],
  metaKeys: ["io.modelcontextprotocol/serverInfo"],
};

/** `steps` of a modern session seen as the legacy session direct had. */
export function withoutModernEnvelope(steps: readonly Step[]): Step[] {
  return steps.map((step) => {
    if (step.op === "handshake") {
      return { ...step, result: { ...(step.result as object), era: "legacy" } };
    }
    if (step.result === null || typeof step.result !== "object") return step;
    const result = { ...(step.result as Record<string, unknown>) };
    for (const field of ERA_ENVELOPE.fields) delete result[field];
    const meta = result._meta as Record<string, unknown> | undefined;
    if (meta !== undefined) {
      const kept = Object.entries(meta).filter(([k]) => !ERA_ENVELOPE.metaKeys.includes(k));
      if (kept.length === 0) delete result._meta;
      else result._meta = Object.fromEntries(kept);
    }
    return { ...step, result };
  });
}

/**
 * What a 2025-11-25 server's host loses when it is served in 2026-07-28 (a dual-era host of a
 * bridge over servers of both eras: one connection speaks one era, and serving it in
 * 2025-11-25 would shut out a host that speaks only 2026-07-28). That era has no place for:
 * a tool's `execution` and a `tasks` capability (its tasks extension lets a server decide on
 * each request whether to make a task, with no per-tool declaration; SDK v2's 2026-07-28
 * codec deletes both as removed vocabulary), so neither the task steps that follow from them
 * (tasks.ts); and a url elicitation's `elicitationId` (the revision removed it with
 * `notifications/elicitation/complete`). Nothing else: a resource subscription is no loss,
 * the era's form of it (a listen naming the URI) holds the server's subscription; and a tool
 * that requires a task is no loss either — the pool runs the task for the host, whose plain
 * call answers what the task's `tasks/result` answered direct (TASK_RUN_FOR_MODERN).
 */
export const MODERN_ERA_LOSSES = {
  why: "2026-07-28 has no tool `execution`, no `tasks` capability and no url elicitation's `elicitationId`",
  tasks: ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"],
};

/** A url elicitation the server asked, as the 2026-07-28 era carries it (no `elicitationId`). */
function withoutElicitationId(question: unknown): unknown {
  const { method, params } = question as { method?: unknown; params?: Record<string, unknown> };
  if (method !== "elicitation/create" || params?.mode !== "url") return question;
  const { elicitationId: _lost, ...kept } = params;
  return { ...(question as object), params: kept };
}

/**
 * A 2026-07-28 host's call of a 2025-11-25 tool whose `execution.taskSupport` is "required":
 * its era has no task-augmented call, so the pool makes the task, follows it and answers the
 * host the task's result, as a 2026-07-28 server answers a client that declared no tasks. What
 * the host gets is what a 2025-11-25 host's `tasks/result` answers direct, less the `_meta`
 * key naming the task (`related-task`): the host never knew a task.
 */
export const TASK_RUN_FOR_MODERN = {
  why: "the pool runs a required task for a 2026-07-28 host and answers it the task's result",
  relatedTask: "io.modelcontextprotocol/related-task",
};

/** A task's result as a 2026-07-28 host is answered it (TASK_RUN_FOR_MODERN). */
export function withoutRelatedTask(result: unknown): unknown {
  const meta = (result as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (meta === undefined || !(TASK_RUN_FOR_MODERN.relatedTask in meta)) return result;
  const { [TASK_RUN_FOR_MODERN.relatedTask]: _task, ...kept } = meta;
  const { _meta: _dropped, ...rest } = result as Record<string, unknown>;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/**
 * `steps` with each plain call of a tool named in `results` answered that result (what the
 * pool answers a 2026-07-28 host of a tool that requires a task: TASK_RUN_FOR_MODERN).
 */
export function withTaskResults(steps: readonly Step[], results: ReadonlyMap<string, unknown>) {
  return steps.map((s): Step => {
    const params = s.params as { name?: string; task?: unknown } | undefined;
    if (s.op !== "tools/call" || params?.task !== undefined) return s;
    if (params?.name === undefined || !results.has(params.name)) return s;
    const { error: _refused, ...answered } = s;
    return { ...answered, result: results.get(params.name) };
  });
}

/**
 * The first task's tool and its `tasks/result` in a direct session's steps (tasks.ts), when
 * the tool is listed as requiring a task (an optional one's plain call is the tool's own).
 */
function taskResults(steps: readonly Step[]): Map<string, unknown> {
  const call = steps.find(
    (s) => s.op === "tools/call" && (s.params as { task?: unknown }).task !== undefined,
  );
  const result = steps.find((s) => s.op === "tasks/result" && s.error === undefined);
  const name = (call?.params as { name?: string } | undefined)?.name;
  const listed = steps
    .filter((s) => s.op === "tools/list")
    .flatMap((s) => (s.result as { tools?: Record<string, unknown>[] } | undefined)?.tools ?? []);
  const tool = listed.find((t) => t.name === name) as
    { execution?: { taskSupport?: unknown } } | undefined;
  if (tool?.execution?.taskSupport !== "required" || result === undefined) return new Map();
  return new Map([[name!, withoutRelatedTask(result.result)]]);
}

/** `steps` of a direct 2025-11-25 session as a 2026-07-28 host is served them (MODERN_ERA_LOSSES). */
export function withoutLegacyOnly(steps: readonly Step[]): Step[] {
  const tasked = (s: Step): boolean =>
    MODERN_ERA_LOSSES.tasks.includes(s.op) ||
    (s.op === "tools/call" && (s.params as { task?: unknown } | undefined)?.task !== undefined);
  return withTaskResults(steps, taskResults(steps))
    .filter((s) => !tasked(s))
    .map((s) => (s.asked === undefined ? s : { ...s, asked: s.asked.map(withoutElicitationId) }))
    .map((s) => {
      if (s.op === "handshake") {
        const { tasks: _lost, ...result } = s.result as Record<string, unknown>;
        return { ...s, result };
      }
      const result = s.result as { tools?: Record<string, unknown>[] } | undefined;
      if (s.op !== "tools/list" || result?.tools === undefined) return s;
      const tools = result.tools.map(({ execution: _lost, ...tool }) => tool);
      return { ...s, result: { ...result, tools } };
    });
}

/** The era a transcript's handshake names. */
export function eraOf(steps: readonly Step[]): unknown {
  return (steps[0]?.result as { era?: unknown } | undefined)?.era;
}

/**
 * The client library offers a tool as a model is given it: named `<server>__<tool>`, its
 * description starting `[<server>] `. The library's host (entries.ts) reads both back to the
 * server's own, so the rest of its listing is compared.
 */
export const LIBRARY_TOOL_NAMES = {
  why: "the client library names a tool <server>__<tool> and prefixes its description with [<server>]",
  name: (server: string, tool: string): string => `${server}__${tool}`,
  own: (server: string, named: string): string => named.replace(`${server}__`, ""),
  ownDescription: (server: string, text: string): string => text.replace(`[${server}] `, ""),
};

/**
 * When a server asks a host for its roots is the server's own timing (server-filesystem asks
 * after the handshake, at a moment no step fixes), and the pool asks a host that declares roots
 * before its first listing or call, by design. So `roots/list` questions are not compared; the
 * roots a server then uses show in its answers (list_allowed_directories, get-roots-list).
 */
export const ROOTS_QUESTIONS = {
  why: "when roots/list is asked is the server's timing, or the pool's by design; its effect is compared",
  drop: (asked: unknown[]): unknown[] =>
    asked.filter((a) => (a as { method?: unknown }).method !== "roots/list"),
};

/**
 * A question's `_meta.progressToken` is the server's count of its own requests on its session:
 * a direct session is the host's alone, the pool's connection is shared, so the number differs
 * by construction. Whether the question carries one is compared, not the number.
 */
export const QUESTION_TOKENS = {
  why: "a server numbers its own questions per session; the pool's session is shared",
  mask: (asked: unknown[]): unknown[] =>
    asked.map((question) => {
      const { params } = question as { params?: { _meta?: Record<string, unknown> } };
      if (params?._meta?.progressToken === undefined) return question;
      return {
        ...(question as object),
        params: { ...params, _meta: { ...params._meta, progressToken: "<token>" } },
      };
    }),
};

function callName(step: Step): unknown {
  return (step.params as { name?: unknown } | undefined)?.name;
}

const PATTERNS: [RegExp, string][] = [
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?/g, "<time>"],
  [
    /\b[A-Z][a-z]{2} [A-Z][a-z]{2} \d\d \d{4} \d\d:\d\d:\d\d GMT[+-]\d{4}(?: \([^)]*\))?/g,
    "<time>",
  ],
  [/\b\d{1,2}:\d\d:\d\d(?:\s?[AP]M)\b/g, "<time>"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
];

/** `value` with times and ids replaced, the pool's `_meta` keys removed, and keys sorted. */
export function normaliseValue(value: unknown): unknown {
  if (typeof value === "string") {
    return PATTERNS.reduce((text, [pattern, by]) => text.replace(pattern, by), value);
  }
  if (Array.isArray(value)) return value.map(normaliseValue);
  if (value === null || typeof value !== "object") return value;
  // Keys sorted: their order is no part of what a host is told.
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, inner] of entries) {
    if (inner === undefined) continue;
    if (key === "_meta" && inner !== null && typeof inner === "object") {
      const kept = Object.entries(inner).filter(([k]) => !k.startsWith("mcpool/"));
      if (kept.length === 0 && Object.keys(inner).length > 0) continue;
      out[key] = normaliseValue(Object.fromEntries(kept));
      continue;
    }
    out[key] = normaliseValue(inner);
  }
  return out;
}

/** `steps` with times, ids and the pool's `_meta` keys replaced or removed. */
export function normalise(steps: readonly Step[]): Step[] {
  return steps.map((step) => {
    const rule = EXPECTED_DIFFERENCES.find((r) => r.applies(step));
    const out = normaliseValue(rule === undefined ? step : rule.rewrite(step)) as Step;
    if (out.asked === undefined) return out;
    const asked = QUESTION_TOKENS.mask(ROOTS_QUESTIONS.drop(out.asked));
    const { asked: _, ...rest } = out;
    return asked.length === 0 ? rest : { ...rest, asked };
  });
}

const clip = (text: string, max = 1500): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;

/** Where `a` and `b` differ, as `path: direct → pooled` lines (at most `limit`). */
function paths(a: unknown, b: unknown, at: string, out: string[], limit = 12): void {
  if (out.length >= limit || JSON.stringify(a) === JSON.stringify(b)) return;
  const objects = a !== null && b !== null && typeof a === "object" && typeof b === "object";
  if (objects && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const inner = (v: unknown): unknown => (v as Record<string, unknown>)[key];
      const label = Array.isArray(a) ? `${at}[${key}]` : `${at}.${key}`;
      paths(inner(a), inner(b), label, out, limit);
    }
    return;
  }
  const show = (v: unknown): string =>
    v === undefined ? "(absent)" : clip(JSON.stringify(v), 400);
  out.push(`${at}: ${show(a)} → ${show(b)}`);
}

const keyOf = (step: Step | undefined): string =>
  `${step?.op} ${JSON.stringify(step?.params ?? {})}`;

/**
 * The differences between two normalised transcripts (empty when they are the same): per
 * differing step, the step and each path where direct (left) and the pool (right) differ. Steps
 * are matched by request, so a step one side lacks (a tool only one list has) is named once
 * and the rest still line up.
 */
export function differences(direct: readonly Step[], pooled: readonly Step[]): string[] {
  const out: string[] = [];
  let [i, j] = [0, 0];
  while (i < direct.length || j < pooled.length) {
    const [a, b] = [direct[i], pooled[j]];
    if (a !== undefined && b !== undefined && keyOf(a) === keyOf(b)) {
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        const lines: string[] = [];
        paths(a, b, "", lines);
        out.push(`step ${i} ${clip(keyOf(a), 200)}\n${lines.map((l) => `  ${l}`).join("\n")}`);
      }
      [i, j] = [i + 1, j + 1];
      continue;
    }
    // A step one side lacks: the pooled one if direct has it nowhere ahead, else the direct one.
    const ahead = b !== undefined && direct.slice(i).some((s) => keyOf(s) === keyOf(b));
    if (b !== undefined && !ahead) {
      out.push(`pooled step ${j} ${clip(keyOf(b), 200)}: only through the pool`);
      j++;
    } else {
      out.push(`step ${i} ${clip(keyOf(a), 200)}: only direct`);
      i++;
    }
  }
  return out;
}

/**
 * The differences between a normalised direct transcript and a normalised pooled one, the
 * era allowance (ERA_ENVELOPE) applied when the host was served another era than direct —
 * where `otherEra` allows it: an entry over the whole pool (`--catalog`, the library), never
 * a one-server entry, whose host negotiates the era it would direct.
 */
export function compare(
  direct: readonly Step[],
  pooled: readonly Step[],
  otherEra = true,
): string[] {
  const eras = otherEra && eraOf(direct) === "legacy" && eraOf(pooled) === "modern";
  return differences(direct, eras ? withoutModernEnvelope(pooled) : pooled);
}
