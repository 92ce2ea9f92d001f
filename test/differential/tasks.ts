/**
 * The session's tasks (MCP 2025-11-25 "tasks" utility), run when the server declares
 * task-augmented `tools/call`: the first tool whose `execution.taskSupport` is optional or
 * required called with a `task`; `tasks/get` until the task is terminal (only the terminal
 * answer is a step: how many polls that took is the machine's timing); `tasks/result`;
 * `tasks/list`; then a second task of the same tool, cancelled at once with `tasks/cancel`.
 * A task's id is the server's own making: the steps name each by its order.
 */
import type { Host } from "./host.js";
import { withoutRelatedTask } from "./normalise.js";
import { step, type Named, type Step } from "./session.js";

/** The task a host asks for: a ttl long enough for the session, short enough to go. */
const TASK = { ttl: 60_000 };
/** How long a task may run before the session gives up on it, and how often it asks. */
const TASK_BOUND_MS = 30_000;
const POLL_MS = 200;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Whether `capabilities` offer task-augmented tools/call. */
export function offersToolTasks(capabilities: Record<string, unknown>): boolean {
  const tasks = capabilities.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/** The first tool that may run as a task. */
export function taskTool(tools: readonly Named[]): Named | undefined {
  return tools.find((tool) => {
    const support = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
    return support === "optional" || support === "required";
  });
}

const taskIdOf = (s: Step): string | undefined =>
  (s.result as { task?: { taskId?: string } } | undefined)?.task?.taskId;

/** The task steps for `tool`, called with `args`. */
export async function taskSteps(
  host: Host,
  tool: Named,
  args: Record<string, unknown>,
): Promise<Step[]> {
  const steps: Step[] = [];
  const created = await step(host, "tools/call", { name: tool.name, arguments: args, task: TASK });
  steps.push(created);
  const taskId = taskIdOf(created);
  if (taskId === undefined) return steps;
  steps.push(await untilTerminal(host, taskId));
  steps.push(await step(host, "tasks/result", { taskId }));
  steps.push(await step(host, "tasks/list", {}));
  const second = await step(host, "tools/call", { name: tool.name, arguments: args, task: TASK });
  steps.push(second);
  const secondId = taskIdOf(second);
  if (secondId !== undefined) steps.push(await step(host, "tasks/cancel", { taskId: secondId }));
  return named(steps, [taskId, secondId]);
}

/**
 * `tasks/get` of `taskId` until the task is terminal (or refused, or past the bound): the last
 * answer, the one step (how many polls it took is the machine's timing).
 */
export async function untilTerminal(host: Host, taskId: string): Promise<Step> {
  const deadline = Date.now() + TASK_BOUND_MS;
  for (;;) {
    const got = await step(host, "tasks/get", { taskId });
    const status = (got.result as { status?: string } | undefined)?.status;
    if (got.error !== undefined || TERMINAL.has(status ?? "") || Date.now() > deadline) return got;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** `steps` with each task id the server made named by its order (`<task 1>`, `<task 2>`). */
function named(steps: Step[], ids: readonly (string | undefined)[]): Step[] {
  let text = JSON.stringify(steps);
  ids.forEach((id, i) => {
    if (id !== undefined) text = text.split(id).join(`<task ${i + 1}>`);
  });
  return JSON.parse(text) as Step[];
}

/**
 * What a 2026-07-28 host is answered for each tool of `tools` that requires a task, run on
 * `host` (a 2025-11-25 session direct) as a task: its `tasks/result`, less the `_meta` key
 * naming the task (normalise.ts TASK_RUN_FOR_MODERN). By tool name.
 */
export async function requiredTaskResults(
  host: Host,
  calls: readonly { name: string; arguments: Record<string, unknown> }[],
  tools: readonly Named[],
): Promise<Map<string, unknown>> {
  const results = new Map<string, unknown>();
  for (const call of calls) {
    const tool = tools.find((t) => t.name === call.name) as
      { execution?: { taskSupport?: unknown } } | undefined;
    if (tool?.execution?.taskSupport !== "required" || results.has(call.name)) continue;
    const created = await step(host, "tools/call", { ...call, task: TASK });
    const taskId = taskIdOf(created);
    if (taskId === undefined) continue;
    await untilTerminal(host, taskId);
    const answered = await step(host, "tasks/result", { taskId });
    if (answered.error === undefined) results.set(call.name, withoutRelatedTask(answered.result));
  }
  return results;
}
