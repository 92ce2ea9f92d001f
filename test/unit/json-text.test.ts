/**
 * JSON as people hand it over: a BOM at the top of mcp.json, keys written
 * twice, and the arguments of `mcpool call` with their errors said in one line.
 */
import { describe, expect, it } from "vitest";

import { parseArguments } from "../../src/cli/commands/call.js";
import { duplicateKeys, mayRepeatKeys, withoutBom } from "../../src/config/json-text.js";
import { parseMcpJson } from "../../src/config/mcp-json.js";

const BOM = "\uFEFF";

describe("a byte-order mark at the top of mcp.json", () => {
  it("is skipped, and the rows read as without it", () => {
    const text = JSON.stringify({ mcpServers: { echo: { command: "node" } } }, null, 2);
    const parsed = parseMcpJson(BOM + text, { env: {} });
    expect(parsed.rows.map((r) => r.id)).toEqual(["echo"]);
    expect(parsed.problems).toEqual([]);
    expect(withoutBom(BOM + text)).toBe(text);
    expect(withoutBom(text)).toBe(text);
  });

  it("does not shift the line and column of a problem, in JSONC too", () => {
    const text = '{\n  // hosts write comments\n  "mcpServers": { "bad": { "command": 5 } },\n}\n';
    const [problem] = parseMcpJson(BOM + text, { env: {} }).problems;
    expect(problem).toMatchObject({ id: "bad", line: 3, column: 19 });
    expect(() => parseMcpJson(`${BOM}{ "mcpServers": `, { env: {} })).toThrow(
      /expected a value at line 1, column 17/,
    );
  });
});

describe("a key written twice in mcp.json", () => {
  it("is a warning naming the key, its line and the line it was first written on", () => {
    const text = [
      "{",
      '  "mcpServers": {',
      '    "echo": { "command": "node", "args": ["a.js"] },',
      '    "echo": { "command": "node", "args": ["b.js"] }',
      "  }",
      "}",
    ].join("\n");
    const parsed = parseMcpJson(text, { env: {} });
    expect(parsed.problems).toEqual([]);
    expect(parsed.rows).toHaveLength(1);
    expect(parsed.rows[0]).toMatchObject({ args: ["b.js"] });
    expect(parsed.warnings).toEqual([
      {
        message: "`mcpServers` has the key `echo` twice (first at line 3); the last one counts",
        id: "echo",
        line: 4,
        column: 5,
      },
    ]);
  });

  it("is found inside a row, at the top of the file and in JSONC, once per repetition", () => {
    const text = [
      "{",
      "  // a comment makes this JSONC",
      '  "mcpServers": { "a": { "command": "x", "command": "y", "command": "z" } },',
      '  "mcpool": { "lazy": true },',
      '  "mcpool": { "lazy": false },',
      "}",
    ].join("\n");
    const warnings = parseMcpJson(text, { env: {} }).warnings;
    expect(warnings.map((w) => [w.message, w.line])).toEqual([
      ["`mcpServers.a` has the key `command` twice (first at line 3); the last one counts", 3],
      ["`mcpServers.a` has the key `command` twice (first at line 3); the last one counts", 3],
      ["the file has the key `mcpool` twice (first at line 4); the last one counts", 5],
    ]);
    expect(warnings[0]).toMatchObject({ id: "a" });
  });

  it("is told apart from the same key in sibling objects and in the objects of a list", () => {
    const text = JSON.stringify({
      mcpServers: { a: { command: "x", env: { K: "1" } }, b: { command: "x", env: { K: "2" } } },
      list: [{ k: 1 }, { k: 2 }],
    });
    expect(duplicateKeys(text)).toEqual([]);
    expect(parseMcpJson(text, { env: {} }).warnings).toEqual([]);
    expect(duplicateKeys('[{"k":1,"k":2}]')).toMatchObject([{ key: "k", path: ["0"] }]);
  });

  it("is looked for with the visitor only when the text spells more keys than it holds", () => {
    const tricky = JSON.stringify({ a: 'he said "x": y', b: ['\\":', { c: 1 }] });
    expect(mayRepeatKeys(tricky, JSON.parse(tricky))).toBe(false);
    const twice = '{"a": 1, "a": 2}';
    expect(mayRepeatKeys(twice, JSON.parse(twice))).toBe(true);
  });
});

describe("the arguments of mcpool call", () => {
  it("are a JSON object", () => {
    expect(parseArguments('{"text":"hi"}', "the arguments on stdin")).toEqual({ text: "hi" });
  });

  it("say where text that is not JSON goes wrong, in one line", () => {
    const error = () => parseArguments('{\n  "text": "hi",\n  "n": \n}', "the arguments in a.json");
    expect(error).toThrow(
      "the arguments in a.json are not JSON: expected a value at line 4, column 1",
    );
    expect(() => parseArguments("{not json", "the arguments of call")).toThrow(
      /^the arguments of call are not JSON: unexpected character here at line 1, column 2$/,
    );
  });

  it("say what they hold instead of an object, and that empty input is not {}", () => {
    expect(() => parseArguments("[1]", "the arguments on stdin")).toThrow(
      "the arguments on stdin must be a JSON object, not an array",
    );
    expect(() => parseArguments("null", "x")).toThrow("x must be a JSON object, not null");
    expect(() => parseArguments('"s"', "x")).toThrow("x must be a JSON object, not a string");
    expect(() => parseArguments(" \n", "the arguments on stdin")).toThrow(
      "the arguments on stdin are empty; give a JSON object ({} for no arguments)",
    );
  });
});
