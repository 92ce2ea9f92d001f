/**
 * The JSON-RPC 2.0 the daemon's socket writes (SPEC D2): the error codes it answers with and
 * the four messages it builds, under json-rpc-2.0's names and in its shapes. The daemon's
 * own, so that it loads no JSON-RPC library: json-rpc-2.0's client and server are the
 * client side's (mcpool-client), and its types, erased at build, are all the daemon takes.
 */
import type {
  JSONRPCErrorResponse,
  JSONRPCID,
  JSONRPCParams,
  JSONRPCRequest,
  JSONRPCSuccessResponse,
} from "json-rpc-2.0";

export type { JSONRPCID } from "json-rpc-2.0";

/** The codes JSON-RPC 2.0 reserves, as json-rpc-2.0's enum has them. */
export const JSONRPCErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

export function isJSONRPCID(id: unknown): id is JSONRPCID {
  return typeof id === "string" || typeof id === "number" || id === null;
}

export function createJSONRPCRequest(
  id: JSONRPCID,
  method: string,
  params?: JSONRPCParams,
): JSONRPCRequest {
  return { jsonrpc: "2.0", id, method, params };
}

export function createJSONRPCNotification(method: string, params?: JSONRPCParams): JSONRPCRequest {
  return { jsonrpc: "2.0", method, params };
}

export function createJSONRPCSuccessResponse(
  id: JSONRPCID,
  result?: unknown,
): JSONRPCSuccessResponse {
  return { jsonrpc: "2.0", id, result: result ?? null };
}

/** `data` is left out when there is none, as json-rpc-2.0 leaves it out. */
export function createJSONRPCErrorResponse(
  id: JSONRPCID,
  code: number,
  message: string,
  data?: unknown,
): JSONRPCErrorResponse {
  return {
    jsonrpc: "2.0",
    id,
    error: data === undefined || data === null ? { code, message } : { code, message, data },
  };
}
