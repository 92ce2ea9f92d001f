/**
 * The value helpers both sides share (values.ts): defined() is what every param and option
 * object goes through, so what it keeps and drops is the wire's meaning of "absent".
 */
import { describe, expect, it } from "vitest";
import { defined, isRecord } from "../src/values.js";

describe("defined", () => {
  it("drops the keys whose value is undefined and keeps every other value, falsy ones too", () => {
    const out = defined({
      a: undefined,
      b: null,
      c: 0,
      d: false,
      e: "",
      f: [],
      g: { h: undefined },
    });
    expect(out).toEqual({ b: null, c: 0, d: false, e: "", f: [], g: { h: undefined } });
    expect(Object.keys(out)).toEqual(["b", "c", "d", "e", "f", "g"]);
  });

  it("copies: the result is a new object, its values the same ones, and inherited keys are left out", () => {
    const nested = { x: 1 };
    const source = Object.assign(Object.create({ inherited: 1 }) as object, { nested });
    const out = defined(source) as Record<string, unknown>;
    expect(out).not.toBe(source);
    expect(out.nested).toBe(nested);
    expect("inherited" in out).toBe(false);
  });
});

describe("isRecord", () => {
  it("is true for a plain object and false for null, an array and a primitive", () => {
    expect([{}, null, [], "x", 1].map(isRecord)).toEqual([true, false, false, false, false]);
  });
});
