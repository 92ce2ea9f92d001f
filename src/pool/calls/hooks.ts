/**
 * The hook runner: runs the hooks rows attach to one event as
 * tool calls through the pool. The pool never fires a hook itself — only the host knows
 * when a turn starts — it supplies this, so every host runs the same rows the same way.
 *
 * - Never rejects: a failed call, a timeout, an abort and a skipped hook each come back as
 *   an outcome with `ok: false`, and are passed to `onNotice`. A memory server that is down
 *   costs the turn its recall, not the turn.
 * - At once, in order: an event's hooks run in parallel; outcomes come back in
 *   configuration order (rows, then each row's hooks).
 * - Bounded: each hook gets hookTimeoutMs(hook), which covers waking its server too.
 * - Read and add only: `inject` and `veto` count only on the events that allow them, held
 *   here as well as in validateHooks, since a row need not have been through the validator.
 */
import {
  hookTimeoutMs,
  INJECT_EVENTS,
  readVeto,
  renderTemplate,
  VETO_EVENTS,
  type HookContext,
  type HookEvent,
  type HookFailure,
  type HookOutcome,
  type ToolHook,
} from "../../config/hooks.js";
import { isEnabled, labelOf, slugOf, type McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";
import { qualifiedName } from "../catalog/naming.js";
import type { CallOptions } from "./options.js";
import type { CallSignal } from "../core/types.js";

export interface RunHooksOptions {
  /** Aborts the hooks still running; their outcomes say `aborted`. */
  signal?: CallSignal;
  /** Told of each outcome that is not ok, as it settles. A listener that throws is ignored. */
  onNotice?: (outcome: HookOutcome) => void;
  /** Servers whose hooks run: absent = every server, empty = none. */
  servers?: readonly string[];
}

/** What the runner needs of a pool. */
export interface HookHost {
  /** The rows, in configuration order. */
  rows(): readonly McpServerConfig[];
  call(
    qualified: string,
    input: Record<string, unknown>,
    options: Omit<CallOptions, "raw">,
  ): Promise<string>;
}

/** Runs every hook rows attach to `event`; resolves with their outcomes, never rejects. */
export async function runHooks(
  host: HookHost,
  event: HookEvent,
  context: HookContext,
  options: RunHooksOptions = {},
): Promise<HookOutcome[]> {
  let planned: { row: McpServerConfig; hook: ToolHook }[];
  try {
    const scope = options.servers ? new Set(options.servers) : undefined;
    planned = host
      .rows()
      .flatMap((row) =>
        isEnabled(row) && (!scope || scope.has(row.id)) && Array.isArray(row.hooks)
          ? row.hooks.filter((hook) => hook?.on === event).map((hook) => ({ row, hook }))
          : [],
      );
  } catch {
    return [];
  }
  const filled: HookContext = { ...context, now: context.now ?? new Date().toISOString() };
  return Promise.all(
    planned.map(async ({ row, hook }) => {
      const outcome = await runOne(host, row, hook, event, filled, options.signal);
      if (!outcome.ok && options.onNotice) {
        try {
          options.onNotice(outcome);
        } catch {
          // A host's logging bug must not cost the turn its other hooks.
        }
      }
      return outcome;
    }),
  );
}

async function runOne(
  host: HookHost,
  row: McpServerConfig,
  hook: ToolHook,
  event: HookEvent,
  context: HookContext,
  signal: CallSignal | undefined,
): Promise<HookOutcome> {
  const started = performance.now();
  const base = {
    hook: String(hook.id),
    serverId: row.id,
    label: labelOf(row),
    event,
    tool: qualifiedName(slugOf(row), String(hook.tool)),
    inject: hook.inject === true && INJECT_EVENTS.includes(event),
    ...(typeof hook.maxTokens === "number" && hook.maxTokens > 0
      ? { maxTokens: hook.maxTokens }
      : {}),
  };
  const failed = (reason: HookFailure, error: string, code?: string): HookOutcome => ({
    ...base,
    ok: false,
    reason,
    error,
    ...(code !== undefined ? { code } : {}),
    ms: performance.now() - started,
  });

  if (signal?.aborted) return failed("aborted", "aborted before it ran");
  const rendered = renderTemplate(hook.args ?? {}, context);
  if (!rendered.ok)
    return failed("skipped", `the context has no value for {{${rendered.missing}}}`);

  const bound = hookTimeoutMs(hook);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const cut = new Promise<HookOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new McpPoolError("timeout", `hook timed out after ${bound} ms`));
      resolve(failed("timeout", `"${base.hook}" did not answer within ${bound} ms`, "timeout"));
    }, bound);
    onAbort = () => {
      controller.abort(signal?.reason);
      resolve(failed("aborted", `"${base.hook}" was aborted`));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  const called = host
    .call(base.tool, rendered.value as Record<string, unknown>, {
      servers: [row.id],
      hidden: true,
      signal: controller.signal,
      timeoutMs: bound,
    })
    .then((text): HookOutcome => {
      const granted = hook.veto === true && VETO_EVENTS.includes(event);
      const veto = granted ? readVeto(text) : undefined;
      return {
        ...base,
        ok: true,
        text: veto?.reason ?? text,
        ...(veto ? { veto: true as const } : {}),
        ms: performance.now() - started,
      };
    })
    .catch((error: unknown) => {
      const code = error instanceof McpPoolError ? error.code : undefined;
      const message = error instanceof Error ? error.message : String(error);
      return failed(code === "timeout" ? "timeout" : "failed", message, code);
    });
  try {
    return await Promise.race([called, cut]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
