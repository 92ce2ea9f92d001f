/**
 * What one decoded message on the daemon's socket asks for, decided from the
 * message and whether the connection is still before hello, and from nothing else: no
 * socket, no state, no handler. The dispatcher acts on the verdict; a refusal before hello
 * also ends the connection, which is the dispatcher's business, not this function's.
 *
 * The rules, in order: a JSON-RPC 2.0 object (no batches) with a valid id or none; without
 * a method it is an answer to one of the daemon's own requests (only after hello); hello
 * first, as a request; `request/cancel` withdraws a request; a method of METHODS with
 * object params its check accepts; hello exactly once.
 */
import { JSONRPCErrorCode, isJSONRPCID, type JSONRPCID } from "mcpool-protocol";
import { CANCEL, METHODS, isMethodName, type MethodName } from "mcpool-protocol";

export type Envelope =
  /** Answer `id` with this JSON-RPC error. */
  | { kind: "refuse"; id: JSONRPCID; code: number; message: string }
  /** The client's answer to a request of the daemon's (`elicit`, `sample`). */
  | { kind: "answer"; message: Record<string, unknown> }
  /** The client withdrew its request `id`. */
  | { kind: "cancel"; id: JSONRPCID }
  /** A notification nobody handles: no answer is owed. */
  | { kind: "ignore" }
  /** The connection's hello, params checked. */
  | { kind: "hello"; id: JSONRPCID; params: Record<string, unknown> }
  /** A request (`id` set) or notification for a handler, params checked. */
  | {
      kind: "call";
      id: JSONRPCID | undefined;
      method: Exclude<MethodName, "hello">;
      params: Record<string, unknown>;
    };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function refuse(id: JSONRPCID, code: number, message: string): Envelope {
  return { kind: "refuse", id, code, message };
}

function invalid(id: JSONRPCID, why: string): Envelope {
  return refuse(id, JSONRPCErrorCode.InvalidRequest, `Invalid Request: ${why}`);
}

/** The verdict on `message`, one decoded frame of a connection. */
export function readEnvelope(message: unknown, beforeHello: boolean): Envelope {
  if (!isRecord(message)) {
    return invalid(
      null,
      Array.isArray(message) ? "batches are not supported" : "not a JSON-RPC message",
    );
  }
  const rawId = message.id;
  const id = isJSONRPCID(rawId) ? rawId : null;
  if (message.jsonrpc !== "2.0" || (rawId !== undefined && !isJSONRPCID(rawId))) {
    return invalid(id, "not JSON-RPC 2.0");
  }
  const method = message.method;
  if (typeof method !== "string") {
    // A stray answer is the daemon's to ignore (PeerRequests.answer), not to refuse.
    if (rawId !== undefined && ("result" in message || "error" in message) && !beforeHello) {
      return { kind: "answer", message };
    }
    return invalid(id, "no method");
  }
  if (beforeHello && (method !== "hello" || rawId === undefined)) {
    return invalid(id, "the first request must be hello");
  }
  if (method === CANCEL.method && rawId === undefined) {
    const withdrawn = isRecord(message.params) ? message.params : {};
    if (CANCEL.check(withdrawn) !== undefined) return { kind: "ignore" };
    return { kind: "cancel", id: withdrawn.id as JSONRPCID };
  }
  if (!isMethodName(method)) {
    if (rawId === undefined) return { kind: "ignore" };
    return refuse(id, JSONRPCErrorCode.MethodNotFound, `Method not found: ${method}`);
  }
  if (message.params !== undefined && !isRecord(message.params)) {
    return refuse(id, JSONRPCErrorCode.InvalidParams, "Invalid params: params must be an object");
  }
  const params = message.params ?? {};
  const problem = METHODS[method].check(params);
  if (problem !== undefined) {
    return refuse(id, JSONRPCErrorCode.InvalidParams, `Invalid params: ${problem}`);
  }
  if (method === "hello") {
    if (!beforeHello) return invalid(id, "hello was already exchanged");
    return { kind: "hello", id, params };
  }
  return { kind: "call", id: rawId as JSONRPCID | undefined, method, params };
}
