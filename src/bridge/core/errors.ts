/**
 * How a refusal from the daemon reaches an MCP host: converted here and nowhere else.
 * - A name the host may not call (`unknown-tool`, `out-of-scope`) is the protocol error MCP
 *   prescribes for an unknown tool (-32602), with one message for both.
 * - The bridge losing its daemon (`daemon-unavailable`, `closed`, …) is an MCP error
 *   (-32603) whose `data.code` is the client's code: the call failed, cleanly, and the host
 *   may retry once the client has redialled. One in flight when the daemon went away
 *   (`detail.inFlight`) says it may or may not have run, as the lean bridge and the perl
 *   relay say it (lean/session.ts); one that found no daemon says how to start it.
 * - A pooled server's own JSON-RPC error (the pool's `tool-error` with `detail.mcpCode`) keeps
 *   its code and message (`detail.mcpMessage`, the server's words), as the host would have had
 *   it from the server directly.
 * - A surface the server does not offer (`not-offered`) is "method not found" (-32601).
 * - Anything else that happened to the call itself (timeout, crash, bad arguments, backoff…)
 *   is a CallToolResult with `isError: true`, so the model reads what went wrong.
 */
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  McpPoolError,
  mcpErrorPrefix,
  withoutMcpPrefix,
  type ErrorCode as PoolCode,
} from "mcpool-client";
import { INFLIGHT_MESSAGE, START_DAEMON } from "../lean/session.js";

/** MCP's "resource not found" (spec 2025-06-18, server/resources#error-handling). */
export const RESOURCE_NOT_FOUND = -32002;

const UNKNOWN_NAME: ReadonlySet<PoolCode> = new Set(["unknown-tool", "out-of-scope"]);

/** The bridge's own link to the daemon failed: the request never reached a server. */
const LINK_FAILURE: ReadonlySet<PoolCode> = new Set([
  "daemon-unavailable",
  "closed",
  "protocol-mismatch",
  "rpc-error",
]);

/**
 * An MCP error whose message is sent as it is: the bridge's own refusal, or a pooled
 * server's error as the server sent it (the pool's client gave that the `MCP error <code>: `
 * prefix, as an SDK client does, and it comes off here). The host's SDK adds the prefix
 * itself; an McpError's own message carries it, and an SDK v1 server sends the message as
 * it is, so the host would show it twice.
 */
export class Refusal extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    const sent = withoutMcpPrefix(code, message);
    super(code, sent, data);
    this.message = sent;
  }
}

export function unknownTool(name: string): McpError {
  return new Refusal(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
}

/**
 * What a 2026-07-28 host is sent as an error's message: the SDK v2 adds no prefix, so a
 * refusal's message as it is, and another McpError's without the one SDK v1 gave it.
 */
export function unprefixed(code: number, error: Error): string {
  return error instanceof Refusal ? error.message : withoutMcpPrefix(code, error.message);
}

/** The MCP error a failed non-call request (list, read, get…) answers with. */
export function toMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof McpPoolError) {
    const { mcpMessage, ...detail } = error.detail;
    const data = { code: error.code, detail };
    const upstream = error.detail.mcpCode;
    if (typeof upstream === "number" && Number.isInteger(upstream)) {
      // The server's words exactly as it sent them (the pool's message says the prefix once,
      // and a server's words may begin with it too); Refusal takes off the prefix put here.
      const said =
        typeof mcpMessage === "string" ? mcpErrorPrefix(upstream) + mcpMessage : error.message;
      return new Refusal(upstream, said, data);
    }
    if (error.code === "not-offered") {
      return new Refusal(ErrorCode.MethodNotFound, error.message, data);
    }
    if (error.code === "unknown-server" || UNKNOWN_NAME.has(error.code)) {
      return new Refusal(ErrorCode.InvalidParams, error.message, data);
    }
    if (error.code === "daemon-unavailable") {
      const message =
        error.detail.inFlight === true
          ? INFLIGHT_MESSAGE
          : `mcpool: ${error.message}; ${START_DAEMON}. This bridge reconnects by itself once it is back.`;
      return new Refusal(ErrorCode.InternalError, message, data);
    }
    return new Refusal(ErrorCode.InternalError, `mcpool: ${error.message}`, data);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new Refusal(ErrorCode.InternalError, `mcpool: ${message}`);
}

/** What a failed tools/call answers: a thrown MCP error, or an isError result. */
export function callFailure(error: unknown, hostName: string): CallToolResult {
  if (error instanceof McpPoolError) {
    if (UNKNOWN_NAME.has(error.code)) throw unknownTool(hostName);
    if (LINK_FAILURE.has(error.code)) throw toMcpError(error);
    if (typeof error.detail.mcpCode === "number") throw toMcpError(error);
    return { content: [{ type: "text", text: error.message }], isError: true };
  }
  throw toMcpError(error);
}
