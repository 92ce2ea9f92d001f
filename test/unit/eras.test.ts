import { describe, expect, it } from "vitest";
import { validateServerConfig } from "../../src/config/validate.js";
import {
  discoverFresh,
  LEGACY_VERDICT_MAX_AGE_MS,
  parseVerdict,
  refusedAsModernOnly,
  usableVerdict,
  type EraVerdict,
} from "../../src/pool/core/era.js";
import { readResult, retryParams } from "../../src/pool/mcp/input-required.js";
import { headerValue } from "../../src/pool/transport/modern-fetch.js";

const DISCOVER = { supportedVersions: ["2026-07-28"], capabilities: { tools: {} } };

describe("the era of a server", () => {
  it("takes a -32022 refusal of initialize as modern only when it names a modern revision", () => {
    const refusal = (supported: unknown) => ({ code: -32022, data: { supported } });
    expect(refusedAsModernOnly(refusal(["2026-07-28"]))).toBe(true);
    expect(refusedAsModernOnly(refusal(["2025-06-18"]))).toBe(false);
    expect(refusedAsModernOnly({ code: -32022 })).toBe(false);
    expect(refusedAsModernOnly({ code: -32601, data: { supported: ["2026-07-28"] } })).toBe(false);
  });

  it("believes a legacy verdict for a day and a modern one until it fails", () => {
    const now = 10 * LEGACY_VERDICT_MAX_AGE_MS;
    const legacy = (age: number): EraVerdict => ({ era: "legacy", at: now - age });
    expect(usableVerdict(legacy(1000), now)).toEqual(legacy(1000));
    expect(usableVerdict(legacy(LEGACY_VERDICT_MAX_AGE_MS), now)).toBeUndefined();
    const modern: EraVerdict = { era: "modern", version: "2026-07-28", discover: DISCOVER, at: 0 };
    expect(usableVerdict(modern, now)).toEqual(modern);
    const foreign = { ...modern, discover: { supportedVersions: ["2030-01-01"] } };
    expect(usableVerdict(foreign, now)).toBeUndefined();
  });

  it("adopts a kept server/discover answer while its own ttlMs says, and for a day at most", () => {
    const now = 10 * LEGACY_VERDICT_MAX_AGE_MS;
    const kept = (ttlMs: unknown, age: number) => ({
      discover: { ...DISCOVER, ttlMs },
      at: now - age,
    });
    expect(discoverFresh(kept(60_000, 59_999), now)).toBe(true);
    expect(discoverFresh(kept(60_000, 60_000), now)).toBe(false);
    // No lifetime promised (0, absent, malformed): the pool's own horizon.
    for (const ttl of [0, undefined, "soon", -5]) {
      expect(discoverFresh(kept(ttl, LEGACY_VERDICT_MAX_AGE_MS - 1), now)).toBe(true);
      expect(discoverFresh(kept(ttl, LEGACY_VERDICT_MAX_AGE_MS), now)).toBe(false);
    }
    // A lifetime past the horizon is held to it.
    expect(
      discoverFresh(kept(10 * LEGACY_VERDICT_MAX_AGE_MS, LEGACY_VERDICT_MAX_AGE_MS), now),
    ).toBe(false);
  });

  it("reads back only whole verdicts from a store", () => {
    const modern = { era: "modern", version: "2026-07-28", discover: DISCOVER, at: 5 };
    expect(parseVerdict(modern)).toEqual(modern);
    expect(parseVerdict({ era: "legacy", at: 5 })).toEqual({ era: "legacy", at: 5 });
    for (const bad of [
      null,
      "modern",
      { era: "modern", at: 5 },
      { era: "legacy" },
      { era: "x", at: 1 },
    ]) {
      expect(parseVerdict(bad)).toBeUndefined();
    }
  });

  it("validates a row's protocol pin, naming what each value means", () => {
    const row = { id: "a", transport: "stdio", command: "x" };
    for (const protocol of ["auto", "legacy", "2026-07-28"]) {
      expect(validateServerConfig({ ...row, protocol })).toEqual([]);
    }
    const [problem] = validateServerConfig({ ...row, protocol: "2025-11-25" });
    expect(problem).toMatch(/`protocol` must be "auto", "legacy", "2026-07-28".*got "2025-11-25"/);
  });
});

describe("a modern result", () => {
  it("hands on a complete result without its resultType, and an absent one as complete", () => {
    expect(readResult("tools/list", { tools: [], resultType: "complete" })).toEqual({
      kind: "complete",
      result: { tools: [] },
    });
    expect(readResult("tools/list", { tools: [] })).toEqual({
      kind: "complete",
      result: { tools: [] },
    });
    expect(() => readResult("tools/call", { resultType: "later" })).toThrow(/resultType "later"/);
  });

  it("reads input_required and retries with the answers and the server's state untouched", () => {
    const read = readResult("tools/call", {
      resultType: "input_required",
      inputRequests: { ask: { method: "elicitation/create", params: { message: "?" } } },
      requestState: "  opaque==  ",
    });
    expect(read).toEqual({
      kind: "input_required",
      inputRequests: { ask: { method: "elicitation/create", params: { message: "?" } } },
      requestState: "  opaque==  ",
    });
    const params = { name: "t", arguments: {}, inputResponses: { old: 1 }, requestState: "old" };
    expect(retryParams(params, { ask: { action: "accept" } }, "  opaque==  ")).toEqual({
      name: "t",
      arguments: {},
      inputResponses: { ask: { action: "accept" } },
      requestState: "  opaque==  ",
    });
    // No requestState in the result: none in the retry.
    expect(retryParams(params, { ask: 1 }, undefined)).not.toHaveProperty("requestState");
    expect(() => readResult("tools/call", { resultType: "input_required" })).toThrow(/neither/);
  });

  it("puts a name that is not plain ASCII in Mcp-Name as its Base64 sentinel", () => {
    expect(headerValue("get_weather")).toBe("get_weather");
    expect(headerValue("file:///a b.txt")).toBe("file:///a b.txt");
    expect(headerValue("café")).toBe(`=?base64?${Buffer.from("café").toString("base64")}?=`);
    expect(headerValue(" padded")).toMatch(/^=\?base64\?/);
  });
});
