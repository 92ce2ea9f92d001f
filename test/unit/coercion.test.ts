import { afterEach, describe, expect, it } from "vitest";

import { argumentProblems, callArguments, coerceArguments } from "../../src/pool/calls/coercion.js";
import { McpPool, McpPoolError, type PoolEvent } from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool } from "../helpers/tool-server.js";

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
});

describe("coerceArguments, case by case", () => {
  it('sends "5" as 5 where the schema says integer or number', () => {
    const schema = object({ limit: { type: "integer" }, ratio: { type: "number" } });
    expect(coerceArguments({ limit: "5", ratio: "0.25" }, schema)).toEqual({
      limit: 5,
      ratio: 0.25,
    });
    expect(coerceArguments({ limit: " -3 ", ratio: "1e3" }, schema)).toEqual({
      limit: -3,
      ratio: 1000,
    });
  });

  it("leaves a string that is not a number, or not an integer, for the refusal", () => {
    const schema = object({ limit: { type: "integer" }, ratio: { type: "number" } });
    expect(coerceArguments({ limit: "5.5", ratio: "abc" }, schema)).toEqual({
      limit: "5.5",
      ratio: "abc",
    });
    expect(coerceArguments({ ratio: "0x10" }, schema)).toEqual({ ratio: "0x10" });
  });

  it('sends "true" and "FALSE" as booleans where the schema says boolean, and nothing else', () => {
    const schema = object({
      a: { type: "boolean" },
      b: { type: "boolean" },
      c: { type: "boolean" },
    });
    expect(coerceArguments({ a: "true", b: "FALSE", c: "yes" }, schema)).toEqual({
      a: true,
      b: false,
      c: "yes",
    });
  });

  it("parses an object or array sent as a JSON string where the schema says object or array", () => {
    const schema = object({ filter: { type: "object" }, ids: { type: "array" } });
    expect(coerceArguments({ filter: '{"a": 1}', ids: "[1, 2]" }, schema)).toEqual({
      filter: { a: 1 },
      ids: [1, 2],
    });
    // A parse of the wrong shape is not that reading.
    expect(coerceArguments({ filter: "[1]", ids: '{"a":1}' }, schema)).toEqual({
      filter: "[1]",
      ids: '{"a":1}',
    });
  });

  it("sends 5 and true as strings where the schema says string", () => {
    const schema = object({ name: { type: "string" }, flag: { type: "string" } });
    expect(coerceArguments({ name: 5, flag: true }, schema)).toEqual({ name: "5", flag: "true" });
  });

  it('leaves out "" or null for an optional property whose type is neither', () => {
    const schema = object(
      {
        limit: { type: "integer" },
        depth: { type: "number" },
        note: { type: "string" },
        maybe: { type: ["integer", "null"] },
        needed: { type: "integer" },
      },
      ["needed"],
    );
    expect(
      coerceArguments({ limit: "", depth: null, note: "", maybe: null, needed: "" }, schema),
    ).toEqual({ note: "", maybe: null, needed: "" });
  });

  it("parses the whole input sent as a JSON string", () => {
    const schema = object({ limit: { type: "integer" } });
    expect(coerceArguments('{"limit": "7", "path": "a"}', schema)).toEqual({
      limit: 7,
      path: "a",
    });
  });

  it("recurses through properties and items", () => {
    const schema = object({
      options: object({ depth: { type: "integer" }, deep: object({ on: { type: "boolean" } }) }),
      ids: { type: "array", items: { type: "integer" } },
      pairs: { type: "array", items: object({ n: { type: "number" } }) },
      tuple: { type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] },
    });
    expect(
      coerceArguments(
        {
          options: '{"depth": "2", "deep": {"on": "TRUE"}}',
          ids: ["1", "2", 3],
          pairs: [{ n: "1.5" }],
          tuple: [1, "2"],
        },
        schema,
      ),
    ).toEqual({
      options: { depth: 2, deep: { on: true } },
      ids: [1, 2, 3],
      pairs: [{ n: 1.5 }],
      tuple: ["1", 2],
    });
  });

  it("adds nothing, passes unnamed properties through, and leaves anyOf, $ref and formats alone", () => {
    const schema = object({
      choice: { anyOf: [{ type: "integer" }, { type: "string" }] },
      ref: { $ref: "#/$defs/x" },
      when: { type: "string", format: "date-time" },
      withDefault: { type: "integer", default: 3 },
    });
    const input = { choice: "5", ref: "6", when: "yesterday", extra: "7" };
    expect(coerceArguments(input, schema)).toEqual(input);
    expect(argumentProblems(input, schema)).toEqual([]);
  });

  it("never mutates what it was given", () => {
    const input = { limit: "5", nested: { on: "true" } };
    const copy = structuredClone(input);
    coerceArguments(
      input,
      object({ limit: { type: "integer" }, nested: object({ on: { type: "boolean" } }) }),
    );
    expect(input).toEqual(copy);
  });
});

describe("argumentProblems and the invalid-arguments refusal", () => {
  const schema = object({ path: { type: "string" }, limit: { type: "integer" } }, ["path"]);

  it("names each field that still does not fit, and each missing required one, for a model", () => {
    expect(() => callArguments("files__read", { limit: "abc" }, schema, true)).toThrow(
      'invalid arguments for "files__read": `limit` must be an integer, got "abc"; missing required `path`',
    );
    const error = (() => {
      try {
        callArguments("files__read", { limit: "abc" }, schema, true);
      } catch (e) {
        return e as McpPoolError;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(McpPoolError);
    expect(error?.code).toBe("invalid-arguments");
    expect(error?.detail.problems).toHaveLength(2);
  });

  it("paths nested problems and lists several allowed types", () => {
    const nested = object({
      opts: object({ depth: { type: ["integer", "null"] } }, ["depth"]),
      ids: { type: "array", items: { type: "integer" } },
    });
    expect(argumentProblems({ opts: { depth: "x" }, ids: [1, "two"] }, nested)).toEqual([
      '`opts.depth` must be an integer or null, got "x"',
      '`ids[1]` must be an integer, got "two"',
    ]);
    expect(argumentProblems({ opts: {} }, nested)).toEqual(["missing required `opts.depth`"]);
  });

  it("refuses an input that is not an object once coerced", () => {
    expect(argumentProblems(5, schema)).toEqual(["the arguments must be an object, got 5"]);
    expect(() => callArguments("t", "not json", schema, true)).toThrow(/must be an object/);
  });

  it("sends the input exactly as given when coercion is off, and checks nothing", () => {
    expect(callArguments("t", { limit: "abc" }, schema, false)).toEqual({ limit: "abc" });
    expect(callArguments("t", undefined, schema, false)).toEqual({});
    expect(callArguments("t", 5, schema, false)).toEqual({});
    expect(() => callArguments("t", undefined, schema, true)).toThrow("missing required `path`");
  });
});

describe("coercion in call()", () => {
  const pools: McpPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  const limited = () =>
    scriptedServer([
      tool("read", {
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" }, limit: { type: "integer" } },
          required: ["path"],
        },
      }),
      tool("secret", { inputSchema: { type: "object", properties: { n: { type: "integer" } } } }),
    ]);

  it("is on by default and sends the repaired arguments", async () => {
    const pool = makePool({ servers: { s: limited().build } });
    pools.push(pool);
    await pool.sync([memoryRow("s")]);
    expect(await pool.call("s__read", { path: "a", limit: "5" })).toBe(
      'read({"path":"a","limit":5})',
    );
    expect(await pool.call("s__read", '{"path": "b"}')).toBe('read({"path":"b"})');
  });

  it("is configured at pool, row and call level, nearest first", async () => {
    const off = makePool({ servers: { s: limited().build }, coerceArguments: false });
    const on = makePool({ servers: { s: limited().build } });
    pools.push(off, on);
    await off.sync([memoryRow("s"), memoryRow("t", "s", { coerceArguments: true })]);
    await on.sync([memoryRow("s", "s", { coerceArguments: false })]);
    const input = { path: "a", limit: "5" };
    expect(await off.call("s__read", input)).toBe('read({"path":"a","limit":"5"})');
    expect(await off.call("t__read", input)).toBe('read({"path":"a","limit":5})');
    expect(await off.call("s__read", input, { coerce: true })).toBe('read({"path":"a","limit":5})');
    expect(await on.call("s__read", input)).toBe('read({"path":"a","limit":"5"})');
    expect(await on.call("s__read", input, { coerce: true })).toBe('read({"path":"a","limit":5})');
  });

  it("refuses what still does not fit as invalid-arguments, before the server sees it", async () => {
    const server = limited();
    const pool = makePool({ servers: { s: server.build } });
    pools.push(pool);
    const events: PoolEvent[] = [];
    pool.onEvent((e) => events.push(e));
    await pool.sync([memoryRow("s")]);
    await expect(pool.call("s__read", { limit: "abc" })).rejects.toMatchObject({
      code: "invalid-arguments",
      message:
        'invalid arguments for "s__read": `limit` must be an integer, got "abc"; missing required `path`',
    });
    expect(events.at(-1)).toMatchObject({ type: "call", ok: false, code: "invalid-arguments" });
  });

  it("refuses after the scope and hiding checks, so an unreachable tool still does not exist", async () => {
    const pool = makePool({ servers: { s: limited().build } });
    pools.push(pool);
    await pool.sync([memoryRow("s", "s", { hiddenTools: ["secret"] })]);
    await expect(pool.call("s__read", { limit: "abc" }, { servers: [] })).rejects.toMatchObject({
      code: "out-of-scope",
    });
    await expect(pool.call("s__secret", { n: "abc" })).rejects.toMatchObject({
      code: "unknown-tool",
    });
    await expect(pool.call("s__secret", { n: "abc" }, { hidden: true })).rejects.toMatchObject({
      code: "invalid-arguments",
    });
  });
});
