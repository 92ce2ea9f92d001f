/**
 * Traffic a pooled server sends back to the caller during a call (SPEC C14). Progress needs
 * no routing here: the SDK gives each tools/call its own progressToken and hands its
 * notifications to that call's `onprogress`. Elicitation does: a server's
 * `elicitation/create` is a request of its own, and nothing on it names the call it is for.
 *
 * Where the answer goes: the callers in flight on that server that registered a handler,
 * the most recent first — but one already answering an elicitation is passed over while
 * another is not, because a tool awaiting its question cannot ask a second one. Then the
 * pool's own handler; then `decline`. A handler that throws, answers something that is not
 * an ElicitResult, or whose call ends first (a disconnected agent) answers `cancel`, which
 * the server can handle, rather than a protocol error.
 *
 * Why not by the related request: in SDK 1.32 a server's `extra.sendRequest` passes
 * `relatedRequestId` to its own transport only, to pick the HTTP response stream (stdio
 * drops it), and neither client transport hands anything about it to our request handler
 * (shared/protocol.js `_onrequest`, client/streamableHttp.js `_handleSseStream`).
 */
import {
  ElicitResultSchema,
  ErrorCode,
  McpError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { PoolLog } from "./types.js";

/** What a server asks in elicitation/create: a form (`requestedSchema`), or a `url` to open. */
export type ElicitParams = ElicitRequest["params"];
export type { ElicitResult };

/** The elicitation modes a pool can declare; url only when the host can open a link. */
export type ElicitationMode = "form" | "url";

export interface ElicitContext {
  /** The server that asks. */
  serverId: string;
  /** Aborted when the answer is no longer wanted: the server withdrew the question, or the call ended. */
  signal: AbortSignal;
}

/** Answers the elicitations of one call (CallOptions.onElicit). */
export type CallElicitHandler = (
  params: ElicitParams,
  context: ElicitContext,
) => ElicitResult | Promise<ElicitResult>;

/** Answers an elicitation no call in flight took (McpPoolOptions.onElicit). */
export type PoolElicitHandler = (
  serverId: string,
  params: ElicitParams,
  context: ElicitContext,
) => ElicitResult | Promise<ElicitResult>;

/** One progress notification of a call, without its token (MCP `notifications/progress`). */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Makes a connected transport hand each response to the client a microtask late. The SDK
 * (1.32, shared/protocol.js) runs a notification's handler a microtask after it is read but
 * a response's at once, and a response drops its call's progress handler: a call's last
 * progress notifications, read in the same chunk as its answer, found no handler ("unknown
 * token") and were lost. Late by one microtask, the answer comes after them.
 */
export function progressBeforeResponses(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    if ("id" in message && !("method" in message)) queueMicrotask(() => deliver(message, extra));
    else deliver(message, extra);
  };
}

/** The `elicitation` client capability for `modes`; undefined declares none. */
export function elicitationCapability(
  modes: readonly ElicitationMode[] = ["form"],
): { form?: Record<string, never>; url?: Record<string, never> } | undefined {
  if (modes.length === 0) return undefined;
  return {
    ...(modes.includes("form") ? { form: {} } : {}),
    ...(modes.includes("url") ? { url: {} } : {}),
  };
}

interface Caller {
  readonly handler: CallElicitHandler;
  /** Aborted when the call ends: a question still being answered is withdrawn. */
  readonly ended: AbortController;
  /** Elicitations this caller is answering now. */
  asking: number;
}

const CANCEL: ElicitResult = { action: "cancel" };
const DECLINE: ElicitResult = { action: "decline" };

export class ElicitationRouter {
  /** Per server id, the callers in flight with a handler, oldest first. */
  readonly #callers = new Map<string, Caller[]>();
  readonly #fallback: PoolElicitHandler | undefined;
  readonly #log: PoolLog;

  constructor(fallback: PoolElicitHandler | undefined, log: PoolLog) {
    this.#fallback = fallback;
    this.#log = log;
  }

  /** A call with a handler is in flight on `serverId` until the returned function is called. */
  register(serverId: string, handler: CallElicitHandler): () => void {
    const caller: Caller = { handler, ended: new AbortController(), asking: 0 };
    const list = this.#callers.get(serverId) ?? [];
    list.push(caller);
    this.#callers.set(serverId, list);
    return () => {
      const now = this.#callers.get(serverId);
      const at = now?.indexOf(caller) ?? -1;
      if (now && at !== -1) {
        now.splice(at, 1);
        if (now.length === 0) this.#callers.delete(serverId);
      }
      caller.ended.abort(new Error("the call that was asked has ended"));
    };
  }

  /** The answer to one elicitation/create of `serverId`; never rejects. */
  async elicit(serverId: string, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    const callers = this.#callers.get(serverId) ?? [];
    const caller =
      callers.findLast((c) => c.asking === 0) ?? (callers.length > 0 ? callers.at(-1) : undefined);
    if (caller) {
      caller.asking += 1;
      try {
        const asked = AbortSignal.any([signal, caller.ended.signal]);
        return await this.#ask(serverId, asked, (ctx) => caller.handler(params, ctx));
      } finally {
        caller.asking -= 1;
      }
    }
    const fallback = this.#fallback;
    if (fallback) return this.#ask(serverId, signal, (ctx) => fallback(serverId, params, ctx));
    return DECLINE;
  }

  async #ask(
    serverId: string,
    signal: AbortSignal,
    run: (context: ElicitContext) => ElicitResult | Promise<ElicitResult>,
  ): Promise<ElicitResult> {
    if (signal.aborted) return CANCEL;
    let onAbort: (() => void) | undefined;
    const withdrawn = new Promise<ElicitResult>((resolve) => {
      onAbort = () => resolve(CANCEL);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const answer = await Promise.race([
        Promise.resolve().then(() => run({ serverId, signal })),
        withdrawn,
      ]);
      const parsed = ElicitResultSchema.safeParse(answer);
      if (parsed.success) return parsed.data;
      this.#log.error?.(
        `mcpool: ${serverId}: an elicitation handler answered something that is not an ElicitResult; answered cancel`,
      );
      return CANCEL;
    } catch (error) {
      this.#log.error?.(
        `mcpool: ${serverId}: an elicitation handler failed, answered cancel: ${(error as Error).message}`,
      );
      return CANCEL;
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }
}

/** What a server asks in sampling/createMessage: messages to complete, and how. */
export type SampleParams = CreateMessageRequest["params"];
export type { CreateMessageResult };

export interface SampleContext {
  /** The server that asks. */
  serverId: string;
  /** Aborted when the answer is no longer wanted: the server withdrew the request, or the call ended. */
  signal: AbortSignal;
}

/** Answers the sampling requests of one call (CallOptions.onSample). */
export type CallSampleHandler = (
  params: SampleParams,
  context: SampleContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

/** Answers a sampling request no call in flight took (McpPoolOptions.onSample). */
export type PoolSampleHandler = (
  serverId: string,
  params: SampleParams,
  context: SampleContext,
) => CreateMessageResult | Promise<CreateMessageResult>;

interface Sampler {
  readonly handler: CallSampleHandler;
  /** Aborted when the call ends: a request still being answered is withdrawn. */
  readonly ended: AbortController;
  /** Sampling requests this caller is answering now. */
  asking: number;
}

/**
 * Routes a server's `sampling/createMessage` as ElicitationRouter routes its elicitations:
 * to the callers in flight on that server with a handler, the most recent not already
 * answering first; then the pool's handler. Unlike an elicitation, a sampling request has
 * no answer meaning "no": with nobody to ask, or a handler that fails, the server gets a
 * JSON-RPC error (-32601 "sampling not available", or the handler's McpError, else
 * -32603), as the SDK answers a client without sampling. The SDK validates the result.
 */
export class SamplingRouter {
  /** Per server id, the callers in flight with a handler, oldest first. */
  readonly #callers = new Map<string, Sampler[]>();
  readonly #fallback: PoolSampleHandler | undefined;

  constructor(fallback: PoolSampleHandler | undefined) {
    this.#fallback = fallback;
  }

  /** A call with a handler is in flight on `serverId` until the returned function is called. */
  register(serverId: string, handler: CallSampleHandler): () => void {
    const caller: Sampler = { handler, ended: new AbortController(), asking: 0 };
    const list = this.#callers.get(serverId) ?? [];
    list.push(caller);
    this.#callers.set(serverId, list);
    return () => {
      const now = this.#callers.get(serverId);
      const at = now?.indexOf(caller) ?? -1;
      if (now && at !== -1) {
        now.splice(at, 1);
        if (now.length === 0) this.#callers.delete(serverId);
      }
      caller.ended.abort(new Error("the call that asked has ended"));
    };
  }

  /** The answer to one sampling/createMessage of `serverId`; rejects with an McpError. */
  async sample(
    serverId: string,
    params: SampleParams,
    signal: AbortSignal,
  ): Promise<CreateMessageResult> {
    const callers = this.#callers.get(serverId) ?? [];
    const caller =
      callers.findLast((c) => c.asking === 0) ?? (callers.length > 0 ? callers.at(-1) : undefined);
    if (caller) {
      caller.asking += 1;
      try {
        const asked = AbortSignal.any([signal, caller.ended.signal]);
        return await this.#ask(serverId, asked, (ctx) => caller.handler(params, ctx));
      } finally {
        caller.asking -= 1;
      }
    }
    const fallback = this.#fallback;
    if (fallback) return this.#ask(serverId, signal, (ctx) => fallback(serverId, params, ctx));
    throw new McpError(ErrorCode.MethodNotFound, "sampling not available");
  }

  async #ask(
    serverId: string,
    signal: AbortSignal,
    run: (context: SampleContext) => CreateMessageResult | Promise<CreateMessageResult>,
  ): Promise<CreateMessageResult> {
    const withdrawn = (): McpError =>
      new McpError(ErrorCode.InternalError, "the sampling request was withdrawn");
    if (signal.aborted) throw withdrawn();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(withdrawn());
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([Promise.resolve().then(() => run({ serverId, signal })), aborted]);
    } catch (error) {
      if (error instanceof McpError) throw error;
      throw new McpError(ErrorCode.InternalError, `sampling failed: ${(error as Error).message}`);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  }
}
