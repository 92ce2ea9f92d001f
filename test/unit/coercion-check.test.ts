/**
 * Coercion checks before it copies: arguments that already fit the tool's
 * schema are sent as given, checked in one walk by the schema's compiled check; anything a
 * repair would touch, or a problem would name, still takes the repairing path.
 */
import { describe, expect, it } from "vitest";

import { argumentProblems, callArguments, coerceArguments } from "../../src/pool/calls/coercion.js";

const schema = {
  type: "object",
  properties: {
    path: { type: "string" },
    limit: { type: "integer" },
    verbose: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
    pair: { type: "array", prefixItems: [{ type: "number" }, { type: "boolean" }] },
    options: {
      type: "object",
      properties: { depth: { type: "number" }, mode: { type: ["string", "null"] } },
      required: ["depth"],
    },
    anything: {},
  },
  required: ["path"],
};

/** What the repairing path alone makes of `input`: the reference the check must agree with. */
function repaired(input: unknown): { args: unknown; problems: string[] } {
  const args = coerceArguments(input, schema);
  return { args, problems: argumentProblems(args, schema) };
}

function sent(input: unknown): { args: unknown; problems: string[] } {
  try {
    return { args: callArguments("t", input, schema, true), problems: [] };
  } catch (error) {
    return {
      args: undefined,
      problems: (error as { detail: { problems: string[] } }).detail.problems,
    };
  }
}

describe("callArguments with coercion", () => {
  it("sends arguments that already fit as given, nested ones included, without a copy", () => {
    const input = {
      path: "/a",
      limit: 3,
      tags: ["x", "y"],
      pair: [1, true],
      options: { depth: 2, mode: null },
      anything: { whatever: ["goes"] },
      unnamed: "passes through",
    };
    const frozen = structuredClone(input);
    expect(callArguments("t", input, schema, true)).toBe(input);
    // The same schema's compiled check, the second time.
    expect(callArguments("t", input, schema, true)).toBe(input);
    expect(input).toEqual(frozen);
  });

  it.each([
    ["a number as a string", { path: "/a", limit: "3" }],
    ["a nested number as a string", { path: "/a", options: { depth: "2" } }],
    ["an item to repair", { path: "/a", tags: ["x", 5] }],
    ["a prefix item to repair", { path: "/a", pair: ["1", "true"] }],
    ["an optional empty string", { path: "/a", limit: "" }],
    ["an optional null", { path: "/a", verbose: null }],
    ["the whole input as JSON", '{"path": "/a", "limit": "4"}'],
  ])("still repairs %s, into a copy, as the repairing path alone does", (_, input) => {
    const before = structuredClone(input);
    const out = sent(input);
    expect(out.problems).toEqual([]);
    expect(out.args).not.toBe(input);
    expect(out.args).toEqual(repaired(input).args);
    expect(input).toEqual(before);
  });

  it.each([
    ["a missing required property", { limit: 3 }],
    ["a nested missing required property", { path: "/a", options: { mode: "m" } }],
    ["a value with no reading", { path: "/a", limit: "many" }],
    ["an item with no reading", { path: "/a", pair: [1, "maybe"] }],
  ])("still refuses %s with the repairing path's problems", (_, input) => {
    const expected = repaired(input).problems;
    expect(expected.length).toBeGreaterThan(0);
    expect(sent(input).problems).toEqual(expected);
  });
});
