/**
 * The JSON-RPC error an MCP peer answers with, as the pool's client rejects it: the SDK's
 * McpError in shape and message (`MCP error -32001: Request timed out`), without the SDK's
 * `types.js`, whose zod schemas weigh 15 MB the daemon does not otherwise need.
 * Classify by `isMcpError(error, code)`: an error from the SDK's own classes (a caller's
 * SDK client, the HTTP transport) has the same shape and is recognised the same way.
 */
import { mcpErrorPrefix } from "mcpool-protocol";

/** The JSON-RPC and MCP error codes the pool reads or answers with (the SDK's ErrorCode). */
export const ErrorCode = {
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UrlElicitationRequired: -32042,
} as const;

export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;
  /** The message as the peer said it, without the prefix `message` has. */
  readonly peerMessage: string;

  constructor(code: number, message: string, data?: unknown) {
    super(`${mcpErrorPrefix(code)}${message}`);
    this.code = code;
    this.data = data;
    this.peerMessage = message;
    this.name = "McpError";
  }
}

/**
 * A JSON-RPC error a peer gets with exactly this message. An McpError's message carries
 * the `MCP error <code>: ` prefix, and the peer's SDK adds its own on top; what the pool
 * answers in a host's stead, or relays from a server, goes as that peer would send it.
 * (Not mcpool-protocol's `WireError`, the daemon wire's error shape.)
 */
export class VerbatimMcpError extends McpError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.message = message;
  }
}

/**
 * What an SDK client answers a request it has no handler for (a host that did not declare
 * sampling or elicitation): the server hears from the pool what it would hear from it.
 */
export function methodNotFound(): VerbatimMcpError {
  return new VerbatimMcpError(ErrorCode.MethodNotFound, "Method not found");
}

/** Whether `error` is an MCP error (ours or the SDK's), with `code` when one is given. */
export function isMcpError(error: unknown, code?: number): error is McpError {
  if (!(error instanceof Error) || error.name !== "McpError") return false;
  const actual = (error as { code?: unknown }).code;
  return typeof actual === "number" && (code === undefined || actual === code);
}
