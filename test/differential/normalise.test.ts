/**
 * The comparison itself: what normalising removes (and only that), and how differences are
 * told — so a cell that passes passes because the transcripts are the same.
 */
import { describe, expect, it } from "vitest";
import { compare, differences, normalise, withoutLegacyOnly } from "./normalise.js";
import type { Step } from "./session.js";

const call = (name: string, result: unknown): Step => ({
  op: "tools/call",
  params: { name },
  result,
});

describe("withoutLegacyOnly", () => {
  it("takes off a 2025-11-25 session what 2026-07-28 has no place for, and nothing else", () => {
    const url = { mode: "url", message: "m", url: "https://example.com/", elicitationId: "e" };
    const form = { mode: "form", message: "m", requestedSchema: {} };
    const out = withoutLegacyOnly([
      { op: "handshake", result: { era: "legacy", tasks: { list: {} }, other: 1 } },
      {
        op: "tools/list",
        result: { tools: [{ name: "a", execution: { taskSupport: "required" }, title: "A" }] },
      },
      {
        ...call("ask", { content: [] }),
        asked: [
          { method: "elicitation/create", params: url },
          { method: "elicitation/create", params: form },
        ],
      },
      { op: "tools/call", params: { name: "a", task: { ttl: 1 } }, result: {} },
      { op: "tasks/get", params: { taskId: "1" }, result: {} },
      { op: "tasks/result", params: { taskId: "1" }, result: {} },
      { op: "tasks/list", params: {}, result: {} },
      { op: "tasks/cancel", params: { taskId: "2" }, result: {} },
      { op: "resources/subscribe", params: { uri: "u" }, result: {} },
    ]);
    const { elicitationId: _id, ...urlKept } = url;
    expect(out).toEqual([
      { op: "handshake", result: { era: "legacy", other: 1 } },
      { op: "tools/list", result: { tools: [{ name: "a", title: "A" }] } },
      {
        ...call("ask", { content: [] }),
        asked: [
          { method: "elicitation/create", params: urlKept },
          { method: "elicitation/create", params: form },
        ],
      },
      { op: "resources/subscribe", params: { uri: "u" }, result: {} },
    ]);
  });

  it("answers a plain call of a tool that requires a task with the task's result, its task unnamed", () => {
    const related = { "io.modelcontextprotocol/related-task": { taskId: "1" } };
    const listed = (support: string): Step => ({
      op: "tools/list",
      result: { tools: [{ name: "a", execution: { taskSupport: support } }] },
    });
    const session = (support: string): Step[] => [
      listed(support),
      { op: "tools/call", params: { name: "a" }, error: { code: -32601, message: "needs a task" } },
      { op: "tools/call", params: { name: "a", task: { ttl: 1 } }, result: { task: {} } },
      { op: "tasks/result", params: { taskId: "1" }, result: { content: [], _meta: related } },
    ];
    expect(withoutLegacyOnly(session("required"))).toEqual([
      { op: "tools/list", result: { tools: [{ name: "a" }] } },
      { op: "tools/call", params: { name: "a" }, result: { content: [] } },
    ]);
    // An optional tool's plain call is the tool's own answer.
    expect(withoutLegacyOnly(session("optional"))[1]).toMatchObject({ error: { code: -32601 } });
  });
});

describe("normalise", () => {
  it("removes times, ids and the pool's own _meta keys, and nothing else", () => {
    const [out] = normalise([
      call("t", {
        content: [
          {
            type: "text",
            text: "at 2026-12-05T13:39:44.123Z, id 0c9e2f4a-1b2c-4d5e-8f90-123456789abc",
          },
        ],
        _meta: { "mcpool/server": "fs", "io.modelcontextprotocol/serverInfo": { name: "s" } },
      }),
    ]);
    expect(out?.result).toEqual({
      content: [{ type: "text", text: "at <time>, id <uuid>" }],
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "s" } },
    });
    const [empty] = normalise([call("t", { content: [], _meta: { "mcpool/server": "fs" } })]);
    expect(empty?.result).toEqual({ content: [] });
  });

  it("does not compare when a server asks for roots, but does compare its other questions", () => {
    const [out] = normalise([
      { ...call("t", {}), asked: [{ method: "roots/list" }, { method: "sampling/createMessage" }] },
    ]);
    expect(out?.asked).toEqual([{ method: "sampling/createMessage" }]);
  });
});

describe("differences", () => {
  it("names each path that differs, direct on the left", () => {
    const found = differences(
      [call("a", { tools: [{ name: "x", execution: { taskSupport: "forbidden" } }] })],
      [call("a", { tools: [{ name: "x" }] })],
    );
    expect(found).toEqual([
      'step 0 tools/call {"name":"a"}\n  .result.tools[0].execution: {"taskSupport":"forbidden"} → (absent)',
    ]);
  });

  it("lines steps up by request, so a step one side lacks is named once", () => {
    expect(
      differences([call("a", 1), call("b", 1), call("c", 1)], [call("a", 1), call("c", 1)]),
    ).toEqual(['step 1 tools/call {"name":"b"}: only direct']);
    expect(differences([call("a", 1)], [call("a", 1), call("x", 1)])).toEqual([
      'pooled step 1 tools/call {"name":"x"}: only through the pool',
    ]);
    expect(differences([call("a", 1)], [call("a", 1)])).toEqual([]);
  });

  it("compares whether a server's question carries a progress token, not its number", () => {
    const asking = (meta?: object): Step => ({
      op: "tools/call",
      params: { name: "confirm" },
      result: { content: [] },
      asked: [
        {
          method: "elicitation/create",
          params: { message: "?", ...(meta ? { _meta: meta } : {}) },
        },
      ],
    });
    const direct = normalise([asking({ progressToken: 0 })]);
    expect(differences(direct, normalise([asking({ progressToken: 3 })]))).toEqual([]);
    expect(differences(direct, normalise([asking()]))).toHaveLength(1);
  });

  it("allows the modern envelope only when the pool served another era than direct", () => {
    const handshake = (era: string): Step => ({ op: "handshake", result: { era } });
    const modern = call("a", { content: [], ttlMs: 0, cacheScope: "public" });
    expect(
      compare([handshake("legacy"), call("a", { content: [] })], [handshake("modern"), modern]),
    ).toEqual([]);
    expect(
      compare([handshake("modern"), call("a", { content: [] })], [handshake("modern"), modern]),
    ).toHaveLength(1);
    // A one-server entry: its host negotiates the era it would direct, so none is allowed.
    expect(
      compare(
        [handshake("legacy"), call("a", { content: [] })],
        [handshake("modern"), modern],
        false,
      ).length,
    ).toBeGreaterThan(0);
  });
});
