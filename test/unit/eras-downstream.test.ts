/**
 * The dual-era downstream side's pure parts (SPEC H3): which era a host's opening message
 * is, and the input key the pool hands a call's handler and the bridge takes out again.
 */
import { describe, expect, it } from "vitest";
import { opensModern } from "../../src/bridge/era-switch.js";
import { splitInputKey } from "../../src/bridge/host-requests.js";
import { META } from "../../src/pool/mcp/era.js";
import { INPUT_KEY_META, keyed } from "../../src/pool/mcp/input-required.js";

const request = (method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0" as const,
  id: 1,
  method,
  ...(params ? { params } : {}),
});

describe("a host's era, from its opening message", () => {
  it("is legacy for initialize and for a request that names no revision", () => {
    expect(opensModern(request("initialize", { protocolVersion: "2025-11-25" }))).toBe(false);
    expect(opensModern(request("tools/list"))).toBe(false);
    expect(opensModern({ jsonrpc: "2.0", method: "notifications/initialized" })).toBe(false);
  });

  it("is modern for server/discover and for any request whose _meta names a revision", () => {
    expect(opensModern(request("server/discover"))).toBe(true);
    const meta = { _meta: { [META.protocolVersion]: "2026-07-28" } };
    expect(opensModern(request("tools/call", { name: "x", ...meta }))).toBe(true);
    // An initialize in the modern era's envelope is a modern host asking a removed method.
    expect(opensModern(request("initialize", meta))).toBe(true);
  });
});

describe("a modern server's input key, on its way to the host", () => {
  it("rides in the question's _meta and comes out again, the rest untouched", () => {
    const asked = keyed(
      { method: "elicitation/create", params: { message: "Name?", _meta: { trace: "t" } } },
      "user_name",
    );
    expect(asked.params?._meta).toEqual({ trace: "t", [INPUT_KEY_META]: "user_name" });
    expect(splitInputKey(asked.params)).toEqual({
      key: "user_name",
      params: { message: "Name?", _meta: { trace: "t" } },
    });
  });

  it("leaves a question without one as it is", () => {
    const params = { message: "Name?" };
    expect(splitInputKey(params)).toEqual({ key: undefined, params });
    const onlyKey = keyed({ method: "sampling/createMessage", params: { maxTokens: 5 } }, "k");
    expect(splitInputKey(onlyKey.params)).toEqual({ key: "k", params: { maxTokens: 5 } });
  });
});
