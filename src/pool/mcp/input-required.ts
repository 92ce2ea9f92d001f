/**
 * A modern result read by its `resultType` (2026-07-28 basic/patterns/mrtr): `complete`
 * (or absent, as an earlier revision's server sends it) is the answer; `input_required`
 * carries the requests the server wants answered (`inputRequests`, keyed) and an opaque
 * `requestState`, and the request is sent again with `inputResponses` under the same keys
 * and that `requestState` exactly as it came. Pure: the round trips are the client's.
 */
import { ErrorCode, McpError } from "../core/mcp-error.js";
import type { Message } from "./protocol.js";

/**
 * Rounds of `input_required` one request may go through before it is refused: a server
 * that asks again every time is looping, and each round is a person answering a question.
 */
export const MAX_INPUT_ROUNDS = 10;

export type ReadResult =
  | { kind: "complete"; result: unknown }
  | {
      kind: "input_required";
      inputRequests: Record<string, Message>;
      requestState: string | undefined;
    };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads `result` of `method` by its resultType; the discriminator is not handed on. */
/** The results a server gave only after a retry with `inputResponses` (SEP-2322). */
const AFTER_INPUT = new WeakSet<object>();

/** Marks `result` as given after input: no cache may keep it (SEP-2549). */
export function markAnsweredAfterInput(result: unknown): void {
  if (isObject(result)) AFTER_INPUT.add(result);
}

/** Whether `result` was given only after the server asked for input. */
export function answeredAfterInput(result: object): boolean {
  return AFTER_INPUT.has(result);
}

export function readResult(method: string, result: unknown): ReadResult {
  if (!isObject(result)) return { kind: "complete", result };
  const { resultType, ...rest } = result;
  if (resultType === undefined || resultType === "complete") {
    return { kind: "complete", result: rest };
  }
  if (resultType !== "input_required") {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${method} answered with resultType ${JSON.stringify(resultType)}, which this client does not know`,
    );
  }
  const requests = isObject(result.inputRequests) ? result.inputRequests : {};
  const inputRequests: Record<string, Message> = {};
  for (const [key, request] of Object.entries(requests)) {
    if (!isObject(request) || typeof request.method !== "string") {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${method} asked for input "${key}" without a method`,
      );
    }
    inputRequests[key] = {
      method: request.method,
      params: isObject(request.params) ? request.params : undefined,
    };
  }
  const requestState = typeof result.requestState === "string" ? result.requestState : undefined;
  if (Object.keys(inputRequests).length === 0 && requestState === undefined) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `${method} answered input_required with neither inputRequests nor requestState`,
    );
  }
  return { kind: "input_required", inputRequests, requestState };
}

/** The params of the retry: the request's own, the answers, the server's state untouched. */
export function retryParams(
  params: Record<string, unknown> | undefined,
  inputResponses: Record<string, unknown>,
  requestState: string | undefined,
): Record<string, unknown> {
  const { inputResponses: _answered, requestState: _state, ...own } = params ?? {};
  return {
    ...own,
    ...(Object.keys(inputResponses).length > 0 ? { inputResponses } : {}),
    ...(requestState !== undefined ? { requestState } : {}),
  };
}

/**
 * The `_meta` key an input request's own key rides in to whoever answers it (the bridge keeps
 * it when it asks a modern host in turn); never sent to a server.
 */
export const INPUT_KEY_META = "mcpool/inputKey";

/**
 * The `_meta` key the whole round rides in beside each question's own key: every key of
 * the result's `inputRequests` and its method, so a bridge hands its host the questions it
 * answers as one `input_required`; never sent to a server.
 */
export const INPUT_ROUND_META = "mcpool/inputRound";

/** `asked` with its key, and the round it is one of, in its params' `_meta`. */
export function keyed(asked: Message, key: string, round?: Record<string, string>): Message {
  const params = asked.params ?? {};
  const meta = (params._meta ?? {}) as Record<string, unknown>;
  const own = { ...meta, [INPUT_KEY_META]: key, ...(round ? { [INPUT_ROUND_META]: round } : {}) };
  return { ...asked, params: { ...params, _meta: own } };
}
