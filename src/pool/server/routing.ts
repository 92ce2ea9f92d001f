/**
 * Traffic a pooled server sends back to the caller during a call. Progress needs
 * no routing here: the SDK gives each tools/call its own progressToken and hands its
 * notifications to that call's `onprogress`. Elicitation and sampling do: a server's
 * `elicitation/create` or `sampling/createMessage` is a request of its own, and nothing on
 * it names the call it is for. Both go through one CallerRouter (caller-router.ts) each,
 * which picks the caller; this file says what each kind answers when no caller does.
 *
 * Elicitation: a handler that throws, answers something that is not an ElicitResult, or
 * whose call ends first (a disconnected agent) answers `cancel`, which the server can
 * handle, rather than a protocol error; nobody to ask answers `decline`. Sampling has no
 * answer meaning "no": the server gets a JSON-RPC error instead (see samplingPolicy).
 *
 * Why not by the related request: in SDK 1.32 a server's `extra.sendRequest` passes
 * `relatedRequestId` to its own transport only, to pick the HTTP response stream (stdio
 * drops it), and neither client transport hands anything about it to our request handler
 * (shared/protocol.js `_onrequest`, client/streamableHttp.js `_handleSseStream`).
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallerHandler,
  FallbackHandler,
  RequestContext,
  RoutePolicy,
} from "./caller-router.js";
import { ErrorCode, isMcpError, McpError, methodNotFound } from "../core/mcp-error.js";
import type { PoolLog } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

/** What a server asks in elicitation/create: a form (`requestedSchema`), or a `url` to open. */
export type ElicitParams = ElicitRequest["params"];
export type { ElicitResult };

/** The elicitation modes a pool can declare; url only when the host can open a link. */
export type ElicitationMode = "form" | "url";

/** The server that asks, and a signal aborted when the question is withdrawn or the call ends. */
export type ElicitContext = RequestContext;

/** Answers the elicitations of one call (CallOptions.onElicit). */
export type CallElicitHandler = CallerHandler<ElicitParams, ElicitResult>;

/** Answers an elicitation no call in flight took (McpPoolOptions.onElicit). */
export type PoolElicitHandler = FallbackHandler<ElicitParams, ElicitResult>;

/**
 * One progress notification of a call, without its token (MCP `notifications/progress`),
 * as the SDK hands it: its optional fields may hold undefined.
 */
export interface CallProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

/**
 * Makes a connected transport hand each response to an SDK client a microtask late (the
 * pool's own client hands progress on at once and needs none of this). The SDK
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

/** What a server asks in sampling/createMessage: messages to complete, and how. */
export type SampleParams = CreateMessageRequest["params"];
export type { CreateMessageResult };

/** The server that asks, and a signal aborted when the request is withdrawn or the call ends. */
export type SampleContext = RequestContext;

/** Answers the sampling requests of one call (CallOptions.onSample). */
export type CallSampleHandler = CallerHandler<SampleParams, CreateMessageResult>;

/** Answers a sampling request no call in flight took (McpPoolOptions.onSample). */
export type PoolSampleHandler = FallbackHandler<SampleParams, CreateMessageResult>;

const CANCEL: ElicitResult = { action: "cancel" };
const ACTIONS: readonly unknown[] = ["accept", "decline", "cancel"];

function isContentValue(value: unknown): boolean {
  const kind = typeof value;
  if (kind === "string" || kind === "number" || kind === "boolean") return true;
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/**
 * `answer` as an ElicitResult (the SDK's ElicitResultSchema, by hand: an action, and content
 * of strings, numbers, booleans and string lists, null read as none); undefined when not.
 */
export function asElicitResult(answer: unknown): ElicitResult | undefined {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return undefined;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (!ACTIONS.includes(action)) return undefined;
  if (content === null) {
    const { content: _dropped, ...rest } = answer as Record<string, unknown>;
    return rest as ElicitResult;
  }
  if (content === undefined) return answer as ElicitResult;
  if (typeof content !== "object" || Array.isArray(content)) return undefined;
  if (!Object.values(content).every(isContentValue)) return undefined;
  return answer as ElicitResult;
}
const DECLINE: ElicitResult = { action: "decline" };

/**
 * Elicitation always gets an answer the server can handle: `decline` with nobody to ask,
 * `cancel` for a handler that fails, answers nonsense, or is withdrawn.
 */
export function elicitationPolicy(log: PoolLog): RoutePolicy<ElicitResult> {
  return {
    unanswered: () => DECLINE,
    withdrawn: () => CANCEL,
    accept(answer, serverId) {
      const parsed = asElicitResult(answer);
      if (parsed !== undefined) return parsed;
      serverLog(log, serverId).error(
        `an elicitation handler answered something that is not an ElicitResult; answered cancel`,
      );
      return CANCEL;
    },
    failed(error, serverId) {
      // A host that does not answer elicitation says so as a client without it would.
      if (isMcpError(error, ErrorCode.MethodNotFound)) throw error;
      serverLog(log, serverId).error(
        `an elicitation handler failed, answered cancel: ${(error as Error).message}`,
      );
      return CANCEL;
    },
  };
}

/**
 * Unlike an elicitation, a sampling request has no answer meaning "no": with nobody to
 * ask, or a handler that fails, the server gets a JSON-RPC error (-32601 "Method not found",
 * as an SDK client without sampling answers; or the handler's McpError, else -32603). The SDK
 * validates the result.
 */
export const samplingPolicy: RoutePolicy<CreateMessageResult> = {
  unanswered() {
    throw methodNotFound();
  },
  withdrawn() {
    throw new McpError(ErrorCode.InternalError, "the sampling request was withdrawn");
  },
  accept: (answer) => answer as CreateMessageResult,
  failed(error) {
    if (isMcpError(error)) throw error;
    throw new McpError(ErrorCode.InternalError, `sampling failed: ${(error as Error).message}`);
  },
};
