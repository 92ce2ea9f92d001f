/** Headers from tool parameters (SEP-2243, src/pool/transport/modern-fetch.ts): the marks' rules and the values. */
import { describe, expect, it } from "vitest";
import {
  headerValue,
  offeredTools,
  paramHeaders,
  paramMarks,
} from "../../src/pool/transport/modern-fetch.js";

const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });

describe("paramMarks", () => {
  it("finds marks on primitive properties at any depth of `properties`", () => {
    const marks = paramMarks(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        nested: { type: "object", properties: { on: { type: "boolean", "x-mcp-header": "On" } } },
        query: { type: "string" },
      }),
    );
    expect(marks).toEqual({
      ok: true,
      headers: [
        { path: ["region"], name: "Region" },
        { path: ["nested", "on"], name: "On" },
      ],
    });
  });

  it.each([
    ["an empty name", schema({ v: { type: "string", "x-mcp-header": "" } })],
    ["a name with a space", schema({ v: { type: "string", "x-mcp-header": "My Region" } })],
    ["a name with a colon", schema({ v: { type: "string", "x-mcp-header": "A:B" } })],
    ["a non-ASCII name", schema({ v: { type: "string", "x-mcp-header": "Région" } })],
    ["a number property", schema({ v: { type: "number", "x-mcp-header": "Score" } })],
    ["an object property", schema({ v: { type: "object", "x-mcp-header": "Data" } })],
    [
      "a name twice in two cases",
      schema({
        a: { type: "string", "x-mcp-header": "MyField" },
        b: { type: "string", "x-mcp-header": "myfield" },
      }),
    ],
    [
      "a mark under items",
      schema({ v: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } }),
    ],
    ["a mark on the root", { type: "object", "x-mcp-header": "Root" }],
  ])("refuses %s", (_what, inputSchema) => {
    expect(paramMarks(inputSchema).ok).toBe(false);
  });
});

describe("paramHeaders and headerValue", () => {
  it("mirrors each marked argument, omits null and absent ones, and Base64s what cannot ride plain", () => {
    const marks = [
      { path: ["region"], name: "Region" },
      { path: ["priority"], name: "Priority" },
      { path: ["verbose"], name: "Verbose" },
      { path: ["debug"], name: "Debug" },
      { path: ["greeting"], name: "Greeting" },
      { path: ["absent"], name: "Absent" },
    ];
    const args = { region: "us-west1", priority: 42, verbose: null, debug: true, greeting: " hi" };
    expect(paramHeaders(marks, args)).toEqual({
      "Mcp-Param-Region": "us-west1",
      "Mcp-Param-Priority": "42",
      "Mcp-Param-Debug": "true",
      "Mcp-Param-Greeting": `=?base64?${Buffer.from(" hi").toString("base64")}?=`,
    });
    expect(headerValue("=?base64?abc?=")).toBe(
      `=?base64?${Buffer.from("=?base64?abc?=").toString("base64")}?=`,
    );
    expect(headerValue("\tindented")).toMatch(/^=\?base64\?/);
  });

  it("offers the tools with sound marks and says why each other is not offered", () => {
    const { offered, refused } = offeredTools([
      { name: "good", inputSchema: schema({ r: { type: "string", "x-mcp-header": "R" } }) },
      { name: "bad", inputSchema: schema({ r: { type: "number", "x-mcp-header": "R" } }) },
    ] as never);
    expect(offered.map((t) => t.name)).toEqual(["good"]);
    expect(refused).toEqual([
      expect.stringMatching(/^tool "bad" is not offered: x-mcp-header "R"/),
    ]);
  });
});
