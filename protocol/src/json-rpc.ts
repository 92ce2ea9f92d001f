/**
 * The JSON-RPC 2.0 messages of the daemon's wire (https://www.jsonrpc.org/specification),
 * built in one place for both sides: the daemon answers and asks with them, the client asks
 * and answers with them. The names and shapes are json-rpc-2.0's, whose client and server
 * neither side needs: a frame is one of these objects, and the codec carries it.
 */

/** A request's id: a string, a number, or null where none could be read (section 4). */
export type JSONRPCID = string | number | null;

/** Positional or named parameters; the wire's are always named (an object). */
export type JSONRPCParams = unknown;

export interface JSONRPCRequest {
  jsonrpc: "2.0";
  method: string;
  params?: JSONRPCParams | undefined;
  id?: JSONRPCID;
}

export interface JSONRPCSuccessResponse {
  jsonrpc: "2.0";
  id: JSONRPCID;
  result: unknown;
  error?: undefined;
}

export interface JSONRPCError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JSONRPCErrorResponse {
  jsonrpc: "2.0";
  id: JSONRPCID;
  result?: undefined;
  error: JSONRPCError;
}

export type JSONRPCResponse = JSONRPCSuccessResponse | JSONRPCErrorResponse;

/** The codes JSON-RPC 2.0 reserves (section 5.1). */
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

/** A response: an id, and a result or an error. */
export function isJSONRPCResponse(payload: unknown): payload is JSONRPCResponse {
  const message = payload as Partial<JSONRPCResponse> | null | undefined;
  return (
    message?.jsonrpc === "2.0" &&
    message.id !== undefined &&
    (message.result !== undefined || message.error !== undefined)
  );
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

/** `data` is left out when there is none. */
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
