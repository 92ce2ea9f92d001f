/**
 * The JSON-RPC 2.0 messages both sides of the daemon's wire build (mcpool-protocol's
 * json-rpc.ts) are the ones json-rpc-2.0 builds, byte for byte on the wire, with the codes
 * its enum has; the library is kept as that reference, in tests only.
 */
import * as reference from "json-rpc-2.0";
import {
  createJSONRPCErrorResponse,
  createJSONRPCNotification,
  createJSONRPCRequest,
  createJSONRPCSuccessResponse,
  isJSONRPCID,
  isJSONRPCResponse,
  JSONRPCErrorCode,
} from "mcpool-protocol";
import { describe, expect, it } from "vitest";

const wire = (message: unknown): string => JSON.stringify(message);

describe("the wire's JSON-RPC messages", () => {
  it("builds requests and notifications as json-rpc-2.0 does", () => {
    for (const params of [undefined, {}, { id: 7, nested: { a: [1, 2] } }]) {
      expect(wire(createJSONRPCRequest(3, "call", params))).toBe(
        wire(reference.createJSONRPCRequest(3, "call", params)),
      );
      expect(wire(createJSONRPCNotification("request/cancel", params))).toBe(
        wire(reference.createJSONRPCNotification("request/cancel", params)),
      );
    }
  });

  it("builds responses as json-rpc-2.0 does, a missing result as null", () => {
    for (const result of [undefined, null, 0, "", { tools: [] }]) {
      expect(wire(createJSONRPCSuccessResponse("a", result))).toBe(
        wire(reference.createJSONRPCSuccessResponse("a", result)),
      );
    }
    expect(wire(createJSONRPCErrorResponse(null, -32600, "Invalid Request"))).toBe(
      wire(reference.createJSONRPCErrorResponse(null, -32600, "Invalid Request")),
    );
    const data = { code: "unknown-tool" };
    expect(wire(createJSONRPCErrorResponse(9, -32001, "no tool", data))).toBe(
      wire(reference.createJSONRPCErrorResponse(9, -32001, "no tool", data)),
    );
  });

  it("leaves out an error's null data, where json-rpc-2.0 would write it", () => {
    expect(createJSONRPCErrorResponse(1, -32603, "oops", null)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32603, message: "oops" },
    });
  });

  it("has json-rpc-2.0's reserved codes and its tests of ids and responses", () => {
    for (const [name, code] of Object.entries(JSONRPCErrorCode)) {
      expect(code).toBe(reference.JSONRPCErrorCode[name as keyof typeof JSONRPCErrorCode]);
    }
    const samples: unknown[] = [
      1,
      "x",
      null,
      undefined,
      {},
      { jsonrpc: "2.0", id: 1, result: 0 },
      { jsonrpc: "2.0", id: null, error: { code: 1, message: "" } },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "1.0", id: 1, result: 1 },
      { jsonrpc: "2.0", method: "progress", params: {} },
    ];
    for (const sample of samples) {
      expect(isJSONRPCID(sample)).toBe(reference.isJSONRPCID(sample as reference.JSONRPCID));
      if (sample !== null && sample !== undefined) {
        expect(isJSONRPCResponse(sample)).toBe(reference.isJSONRPCResponse(sample));
      }
    }
  });
});
