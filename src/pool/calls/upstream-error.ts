/**
 * The one mapping from a failed upstream request (the SDK's McpError, a transport's error,
 * an HTTP refusal) to a pool error, used by every path that sends one: call(), a
 * conversation's call, and the passthrough surface (resources, prompts…). Each code says
 * one way a request can fail:
 *
 * - `timeout`: the request timed out, or the server stopped answering and is replaced;
 * - `server-crashed` / `connection-lost`: the connection closed under the request — a
 *   crash, or ours (a reconnect, a retirement), as the caller's `cutOff` tells;
 * - `answer-too-large`: the answer passed the frame cap and was dropped unread (line-reader.ts
 *   for stdio, http-transport.ts for http);
 * - `tool-error`: the server refused, its JSON-RPC code in `mcpCode`, its message as it sent it
 *   in `mcpMessage` and its `data` kept; the error's own message says `MCP error <code>: ` once
 *   before the server's words, even when those words already begin with it (an SDK v1
 *   server sends its McpError's message, prefix and all);
 * - `auth-required`: the server wants a sign-in, when the caller can tell;
 * - `connection-lost`: a remote that could not be reached, when the caller asks for it.
 *
 * A pool error, a session loss (withSession redials on it) and an aborted request are
 * passed through whole.
 */
import { causeCode, withCause } from "../core/causes.js";
import { McpPoolError } from "../core/errors.js";
import { ErrorCode, isMcpError } from "../core/mcp-error.js";
import { mcpErrorPrefix, withoutMcpPrefix } from "mcpool-protocol";
import { sessionLost } from "../server/session.js";
import { isBrokenPipe } from "../transport/stdio-transport.js";
import { AnswerTooLarge } from "../transport/line-reader.js";
import type { CallSignal } from "../core/types.js";

/** The request as its failure is told. */
export interface UpstreamRequest {
  serverId: string;
  /** What was asked, as a message names it: `call to "add"`, `resources/read`. */
  what: string;
  /** A tool call: it ran, whatever became of its answer. Absent: a read, a listing, a prompt. */
  toolCall?: boolean;
  /** The request's timeout, ms; undefined is the SDK's 60 s. */
  timeoutMs: number | undefined;
  /** The caller's signal: an aborted request's error is the abort's. */
  signal?: CallSignal | undefined;
  /** The connection gave up on: a ping went unanswered after a timeout. */
  unresponsive?: boolean;
  /**
   * The error of a connection closed under the request. Default: `connection-lost`,
   * "server closed the connection during …".
   */
  cutOff?: () => McpPoolError;
  /** The auth-required sentence when the error means a sign-in is wanted; else undefined. */
  authRefusal?: string | undefined;
  /**
   * A failure that is none of the above (no answer at all: refused, reset, DNS), with the
   * row's secrets blanked: as `connection-lost` when given; passed through when not.
   */
  unreachable?: (detail: string) => string;
}

/** The request timeout the SDK applies when none is given, ms. */
const SDK_TIMEOUT_MS = 60_000;

export function upstreamError(error: unknown, request: UpstreamRequest): unknown {
  const { serverId, what } = request;
  if (request.signal?.aborted || error instanceof McpPoolError || sessionLost(error)) {
    return error;
  }
  const timedOut = isMcpError(error, ErrorCode.RequestTimeout);
  if (timedOut || request.unresponsive) {
    const ms = request.timeoutMs ?? SDK_TIMEOUT_MS;
    const why = timedOut
      ? `timed out after ${ms} ms`
      : "got no answer: the server stopped answering and is being replaced";
    return new McpPoolError("timeout", `${what} on server "${serverId}" ${why}`, {
      serverId,
      timeoutMs: ms,
    });
  }
  const cutOff = isMcpError(error, ErrorCode.ConnectionClosed);
  if (cutOff || isBrokenPipe(error)) {
    if (request.cutOff) return request.cutOff();
    return new McpPoolError(
      "connection-lost",
      `server "${serverId}" closed the connection during ${what}`,
      { serverId },
    );
  }
  if (isMcpError(error) && error.data instanceof AnswerTooLarge) {
    const { bytes, maxBytes } = error.data;
    const ask = request.toolCall ? "the tool ran: ask it for less" : "ask for less";
    return new McpPoolError(
      "answer-too-large",
      `server "${serverId}" answered the ${what} with ${bytes} bytes, over the daemon's ${maxBytes}-byte frame cap, so the answer was dropped as it arrived; ${ask}`,
      { serverId, bytes, maxFrameBytes: maxBytes },
    );
  }
  if (isMcpError(error)) {
    // The server refused (unknown uri, bad arguments…): its JSON-RPC code travels in mcpCode,
    // its words in mcpMessage (the pool's McpError keeps them; an SDK one has one prefix more).
    const said =
      "peerMessage" in error && typeof error.peerMessage === "string"
        ? error.peerMessage
        : withoutMcpPrefix(error.code, error.message);
    const once = mcpErrorPrefix(error.code) + withoutMcpPrefix(error.code, said);
    return new McpPoolError("tool-error", once, {
      serverId,
      mcpCode: error.code,
      mcpMessage: said,
      ...(error.data !== undefined ? { data: error.data } : {}),
    });
  }
  if (request.authRefusal !== undefined) {
    return new McpPoolError("auth-required", request.authRefusal, { serverId }, { cause: error });
  }
  if (!request.unreachable) return error;
  // A remote that cannot be reached (connection refused, reset): name the server and the cause.
  const cause = error instanceof Error ? (error.cause as Error | undefined) : undefined;
  const code = causeCode(error);
  const detail = withCause(
    cause?.message ? `${(error as Error).message}: ${cause.message}` : String(error),
    code,
  );
  return new McpPoolError(
    "connection-lost",
    request.unreachable(`server "${serverId}" could not be reached for the ${what}: ${detail}`),
    { serverId, ...(code !== undefined ? { causeCode: code } : {}) },
    { cause: error },
  );
}
