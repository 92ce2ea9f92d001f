import { JSONRPCErrorCode } from "json-rpc-2.0";
import { describe, expect, it } from "vitest";

import { readEnvelope } from "../../src/daemon/socket/envelope.js";

const HELLO = { protocolVersion: 1, clientName: "t", pid: 7 };
const request = (id: unknown, method: string, params?: unknown): Record<string, unknown> => ({
  jsonrpc: "2.0",
  ...(id !== undefined ? { id } : {}),
  method,
  ...(params !== undefined ? { params } : {}),
});

describe("readEnvelope before hello", () => {
  it("takes hello as a request with checked params", () => {
    expect(readEnvelope(request(1, "hello", HELLO), true)).toEqual({
      kind: "hello",
      id: 1,
      params: HELLO,
    });
  });

  it("refuses anything else first, hello sent as a notification included", () => {
    for (const message of [
      request(1, "pool/state"),
      request(undefined, "hello", HELLO),
      request(undefined, "request/cancel", { id: 1 }),
      { jsonrpc: "2.0", id: 1, result: {} },
    ]) {
      const verdict = readEnvelope(message, true);
      expect(verdict).toMatchObject({ kind: "refuse", code: JSONRPCErrorCode.InvalidRequest });
    }
    expect(readEnvelope(request(3, "pool/state"), true)).toEqual({
      kind: "refuse",
      id: 3,
      code: JSONRPCErrorCode.InvalidRequest,
      message: "Invalid Request: the first request must be hello",
    });
  });

  it("refuses hello with wrong params as invalid params", () => {
    expect(readEnvelope(request(1, "hello", { clientName: "t" }), true)).toMatchObject({
      kind: "refuse",
      id: 1,
      code: JSONRPCErrorCode.InvalidParams,
    });
  });
});

describe("readEnvelope after hello", () => {
  it("refuses what is not a JSON-RPC 2.0 object, naming batches", () => {
    expect(readEnvelope([request(1, "pool/state")], false)).toEqual({
      kind: "refuse",
      id: null,
      code: JSONRPCErrorCode.InvalidRequest,
      message: "Invalid Request: batches are not supported",
    });
    expect(readEnvelope("text", false)).toMatchObject({
      id: null,
      message: "Invalid Request: not a JSON-RPC message",
    });
    expect(readEnvelope({ jsonrpc: "1.0", id: 4, method: "pool/state" }, false)).toMatchObject({
      id: 4,
      message: "Invalid Request: not JSON-RPC 2.0",
    });
    expect(readEnvelope({ jsonrpc: "2.0", id: { no: 1 }, method: "x" }, false)).toMatchObject({
      id: null,
      message: "Invalid Request: not JSON-RPC 2.0",
    });
    expect(readEnvelope({ jsonrpc: "2.0", id: 5 }, false)).toMatchObject({
      id: 5,
      message: "Invalid Request: no method",
    });
  });

  it("passes the client's answers to the daemon's own requests on", () => {
    const answer = { jsonrpc: "2.0", id: 2, result: { action: "accept" } };
    expect(readEnvelope(answer, false)).toEqual({ kind: "answer", message: answer });
    const refusal = { jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } };
    expect(readEnvelope(refusal, false)).toEqual({ kind: "answer", message: refusal });
  });

  it("withdraws a request on request/cancel, and ignores a cancel it cannot read", () => {
    expect(readEnvelope(request(undefined, "request/cancel", { id: "a" }), false)).toEqual({
      kind: "cancel",
      id: "a",
    });
    expect(readEnvelope(request(undefined, "request/cancel", { id: {} }), false)).toEqual({
      kind: "ignore",
    });
    expect(readEnvelope(request(undefined, "request/cancel"), false)).toEqual({ kind: "ignore" });
  });

  it("answers an unknown method with method not found, and ignores it as a notification", () => {
    expect(readEnvelope(request(6, "pool/nope"), false)).toEqual({
      kind: "refuse",
      id: 6,
      code: JSONRPCErrorCode.MethodNotFound,
      message: "Method not found: pool/nope",
    });
    expect(readEnvelope(request(undefined, "pool/nope"), false)).toEqual({ kind: "ignore" });
  });

  it("refuses params that are not an object or that the method's check refuses", () => {
    expect(readEnvelope(request(7, "tools/call", ["x"]), false)).toEqual({
      kind: "refuse",
      id: 7,
      code: JSONRPCErrorCode.InvalidParams,
      message: "Invalid params: params must be an object",
    });
    const verdict = readEnvelope(request(8, "tools/call", { name: 1 }), false);
    expect(verdict).toMatchObject({ kind: "refuse", id: 8, code: JSONRPCErrorCode.InvalidParams });
    expect((verdict as { message: string }).message).toMatch(/^Invalid params: .*name/);
  });

  it("refuses a second hello", () => {
    expect(readEnvelope(request(9, "hello", HELLO), false)).toEqual({
      kind: "refuse",
      id: 9,
      code: JSONRPCErrorCode.InvalidRequest,
      message: "Invalid Request: hello was already exchanged",
    });
  });

  it("hands a request or a notification to its handler, absent params as {}", () => {
    expect(readEnvelope(request(10, "tools/call", { name: "echo__echo" }), false)).toEqual({
      kind: "call",
      id: 10,
      method: "tools/call",
      params: { name: "echo__echo" },
    });
    expect(readEnvelope(request(undefined, "pool/state"), false)).toEqual({
      kind: "call",
      id: undefined,
      method: "pool/state",
      params: {},
    });
  });
});
