import { describe, expect, it } from "vitest";
import {
  CLIENT_ERROR_CODES,
  McpPoolError,
  POOL_ERROR_CODES as WIRE_POOL_CODES,
  fromWireError,
  toWireError,
  wireCodeOf,
} from "mcpool-client";

import { McpPoolError as PoolError, POOL_ERROR_CODES } from "../../src/pool/core/errors.js";

describe("wire errors", () => {
  it("is one class and one code list on both sides: what the pool throws, a client catches", () => {
    expect(WIRE_POOL_CODES).toBe(POOL_ERROR_CODES);
    expect(PoolError).toBe(McpPoolError);
    expect(new PoolError("backoff", "later", { retryAt: 1 })).toBeInstanceOf(McpPoolError);
  });

  it.each([...POOL_ERROR_CODES])(
    "carries %s across the wire with its message and detail",
    (code) => {
      const detail = {
        serverId: "git",
        retryAt: 1_700_000_000_000,
        timeoutMs: 250,
        stderr: "boom",
      };
      const wire = JSON.parse(JSON.stringify(toWireError(code, `refused: ${code}`, detail)));
      expect(wire.code).toBe(-32000 - POOL_ERROR_CODES.indexOf(code));
      expect(wire.data).toEqual({ code, detail });
      const back = fromWireError(wire);
      expect(back).toBeInstanceOf(McpPoolError);
      expect(back.code).toBe(code);
      expect(back.message).toBe(`refused: ${code}`);
      expect(back.detail).toEqual(detail);
    },
  );

  it.each([...CLIENT_ERROR_CODES])("round-trips the client code %s too", (code) => {
    const back = fromWireError(toWireError(code, "no daemon"));
    expect(back.code).toBe(code);
    expect(back.detail).toEqual({});
  });

  it("gives every code its own number inside JSON-RPC's server-error range", () => {
    const numbers = [...POOL_ERROR_CODES, ...CLIENT_ERROR_CODES].map(wireCodeOf);
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const n of numbers) {
      expect(n).toBeLessThanOrEqual(-32000);
      expect(n).toBeGreaterThanOrEqual(-32099);
    }
  });

  it("rebuilds a code from the number alone when data is missing", () => {
    expect(
      fromWireError({ code: -32000 - POOL_ERROR_CODES.indexOf("timeout"), message: "slow" }).code,
    ).toBe("timeout");
  });

  it("turns a plain JSON-RPC error into rpc-error, keeping its number", () => {
    const back = fromWireError({ code: -32602, message: "Invalid params", data: { why: "x" } });
    expect(back.code).toBe("rpc-error");
    expect(back.detail).toEqual({ rpcCode: -32602, data: { why: "x" } });
  });

  it("ignores a data.code it does not know and a detail that is not an object", () => {
    expect(fromWireError({ code: -32603, message: "m", data: { code: "nope" } }).code).toBe(
      "rpc-error",
    );
    const back = fromWireError({
      code: -32009,
      message: "m",
      data: { code: "timeout", detail: "text" },
    });
    expect(back.code).toBe("timeout");
    expect(back.detail).toEqual({});
  });
});
