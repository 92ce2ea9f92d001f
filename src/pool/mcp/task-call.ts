/**
 * A call of a tool that requires a task, from a caller that takes none: a 2026-07-28 host
 * calling a 2025-11-25 server's tool whose `execution.taskSupport` is `"required"`.
 *
 * The host's era has no task-augmented call: there the server decides on its own whether a
 * request runs as a task, and a client that declared no tasks gets the result itself ("the
 * server either blocks for a regular result as usual or returns a capability error",
 * https://modelcontextprotocol.github.io/ext-tasks/). The pool does what such a server does:
 * it makes the task upstream (`tools/call` with `task`), follows it with `tasks/get` at the
 * server's `pollInterval` until it is terminal or waits for input, then asks `tasks/result`
 * (which hands the host the server's queued questions, blocks until the task ends, and
 * answers what the call would have: its result or its error), as the SDK's client does
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks). The
 * call's progress token stays the task's until then. A caller that withdraws (cancels, goes)
 * or runs out of time has the task cancelled upstream where the server offers `tasks.cancel`.
 *
 * The task is the pool's own, never a host's: no record in calls/tasks.ts, and its statuses
 * reach no host (a host's `tasks/list` never names it).
 */
import type { CallToolRequest, CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { CallSignal } from "../core/types.js";
import { ErrorCode, McpError } from "../core/mcp-error.js";
import type { McpClient } from "./client.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, type RequestOptions } from "./protocol.js";

/** The states after which a task changes no more, and the one that waits for its requestor. */
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const INPUT_REQUIRED = "input_required";
/** How often a task is polled when the server suggests no `pollInterval`: the SDK client's, ms. */
const DEFAULT_POLL_MS = 1000;
/** The `_meta` key a 2025-11-25 server names a result's task by: not the host's era's, dropped. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

interface Task {
  taskId: string;
  status?: string;
  pollInterval?: number;
}

/**
 * Whether a plain call of `tool` on `client` runs as a task, for a caller that takes none:
 * the client speaks 2025-11-25, the tool requires a task and the server offers
 * task-augmented `tools/call`. Otherwise the call goes as it came (a server that says a tool
 * requires a task but offers none refuses it, as it would direct).
 */
export function runsAsTask(tool: Pick<Tool, "execution">, client: McpClient): boolean {
  if (client.era !== "legacy" || tool.execution?.taskSupport !== "required") return false;
  const tasks = client.getServerCapabilities()?.tasks as
    { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/** What the pool's task of a call is sent with: the call's bound, abort and progress. */
export interface DrivenRequest {
  /** The whole call's bound, from the task's making to its result, ms; default the SDK's. */
  timeout: number | undefined;
  signal?: CallSignal | undefined;
  onprogress?: RequestOptions["onprogress"];
}

/**
 * Runs the call `params` on `client` as a task of the pool's, and answers its result (the
 * `related-task` key of its `_meta` dropped: the host never knew the task).
 */
export async function runAsTask(
  client: McpClient,
  params: CallToolRequest["params"],
  request: DrivenRequest,
): Promise<CallToolResult> {
  const bound = request.timeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const run = new TaskRun(client, bound, request.signal);
  try {
    return withoutRelatedTask(await run.drive(params, request.onprogress));
  } finally {
    run.end();
  }
}

/** One call's task, from its making to its result; end() cancels it unless it finished. */
class TaskRun {
  readonly #client: McpClient;
  readonly #deadline: number;
  /** Aborted when the call is over (answered, withdrawn, out of time): polling and progress stop. */
  readonly #over = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #caller: CallSignal | undefined;
  readonly #withdrawn = (): void => this.#stop(this.#caller?.reason);
  #task: Task | undefined;
  #finished = false;

  constructor(client: McpClient, bound: number, caller: CallSignal | undefined) {
    this.#client = client;
    this.#deadline = Date.now() + bound;
    this.#timer = setTimeout(() => this.#stop(timedOut(bound)), bound);
    this.#timer.unref();
    this.#caller = caller;
    if (caller?.aborted === true) this.#withdrawn();
    else caller?.addEventListener("abort", this.#withdrawn, { once: true });
  }

  async drive(
    params: CallToolRequest["params"],
    onprogress: RequestOptions["onprogress"],
  ): Promise<CallToolResult> {
    // Not withdrawn upstream while the server makes the task: its answer names the task, and
    // the task is cancelled then (end()), as a host's is when the host goes first.
    const making = this.#client.request<{ task?: Task } & CallToolResult>(
      // The task is no use once the call is over: the server may let it go after the bound.
      { method: "tools/call", params: { ...params, task: { ttl: this.#remaining() } } },
      { timeout: this.#remaining(), onprogress, progressUntil: this.#over.signal },
    );
    void making.then(
      (made) => this.#made(made.task),
      () => undefined,
    );
    const made = await this.#untilOver(making);
    // A server that answered the call itself (no task): that is the call's answer.
    if (made.task === undefined) return made;
    let task = made.task;
    while (!TERMINAL.has(task.status ?? "") && task.status !== INPUT_REQUIRED) {
      await this.#pause(task.pollInterval ?? DEFAULT_POLL_MS);
      task = { ...task, ...(await this.#ask<Task>("tasks/get", task.taskId)) };
    }
    try {
      return await this.#ask<CallToolResult>("tasks/result", task.taskId);
    } finally {
      // Answered (its result, or the error the call would have had): the task is over.
      if (!this.#over.signal.aborted) this.#finished = true;
    }
  }

  /** The call is over: a task not seen finished is cancelled where the server offers it. */
  end(): void {
    clearTimeout(this.#timer);
    this.#caller?.removeEventListener("abort", this.#withdrawn);
    this.#over.abort();
    this.#cancel();
  }

  #made(task: Task | undefined): void {
    this.#task = task;
    // Made after the call was withdrawn or ran out: no one waits for it.
    if (this.#over.signal.aborted) this.#cancel();
  }

  #cancel(): void {
    const task = this.#task;
    if (task === undefined || this.#finished || TERMINAL.has(task.status ?? "")) return;
    this.#finished = true;
    const tasks = this.#client.getServerCapabilities()?.tasks as { cancel?: unknown } | undefined;
    if (tasks?.cancel === undefined) return;
    void this.#client
      .request({ method: "tasks/cancel", params: { taskId: task.taskId } })
      .catch(() => undefined);
  }

  /** `tasks/get` or `tasks/result` of the task, withdrawn upstream if the call ends first. */
  #ask<T>(method: "tasks/get" | "tasks/result", taskId: string): Promise<T> {
    const options = { timeout: this.#remaining(), signal: this.#over.signal };
    return this.#untilOver(this.#client.request<T>({ method, params: { taskId } }, options));
  }

  /** `ms` (the server's poll interval), cut short when the call ends. */
  #pause(ms: number): Promise<void> {
    return this.#untilOver(
      new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)).unref()),
    );
  }

  /** `promise`, or the reason the call ended as soon as it does (withdrawn, out of time). */
  #untilOver<T>(promise: Promise<T>): Promise<T> {
    const over = this.#over.signal;
    if (over.aborted) return Promise.reject(over.reason as Error);
    return new Promise<T>((resolve, reject) => {
      const onOver = (): void => reject(over.reason as Error);
      over.addEventListener("abort", onOver, { once: true });
      promise.then(resolve, reject).finally(() => over.removeEventListener("abort", onOver));
    });
  }

  #remaining(): number {
    return Math.max(1, this.#deadline - Date.now());
  }

  #stop(reason: unknown): void {
    if (!this.#over.signal.aborted) this.#over.abort(reason);
  }
}

/** The call ran past its bound, as a request past its timeout fails. */
function timedOut(bound: number): McpError {
  return new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: bound });
}

function withoutRelatedTask(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (meta === undefined || !(RELATED_TASK in meta)) return result;
  const { [RELATED_TASK]: _task, ...kept } = meta;
  const { _meta: _dropped, ...rest } = result;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}
