import { describe, expect, it } from "vitest";

import {
  contextBlocks,
  DEFAULT_HOOK_TIMEOUT_MS,
  DEFAULT_WAITED_HOOK_TIMEOUT_MS,
  HOOK_EVENTS,
  hookTimeoutMs,
  hookVars,
  INJECT_EVENTS,
  readVeto,
  renderTemplate,
  validateHooks,
  VETO_EVENTS,
  type HookOutcome,
} from "../../src/config/hooks.js";
import { validateServerConfig } from "../../src/config/index.js";

describe("the hook events", () => {
  it("are six, with inject before the request and veto only before a compaction", () => {
    expect(HOOK_EVENTS).toEqual([
      "sessionStart",
      "beforeTurn",
      "afterTurn",
      "beforeCompact",
      "sessionEnd",
      "sessionDelete",
    ]);
    expect(INJECT_EVENTS).toEqual(["sessionStart", "beforeTurn"]);
    expect(VETO_EVENTS).toEqual(["beforeCompact"]);
  });

  it("offer session.id, host, now and vars.* everywhere, and their own context beyond", () => {
    const common = ["session.id", "host", "now", "vars.*"];
    expect(hookVars("sessionStart")).toEqual([...common, "prompt"]);
    expect(hookVars("beforeTurn")).toEqual([...common, "prompt", "turn.index"]);
    expect(hookVars("afterTurn")).toEqual([
      ...common,
      "prompt",
      "reply",
      "turn.index",
      "turn.messages",
    ]);
    expect(hookVars("beforeCompact")).toEqual([
      ...common,
      "compacting",
      "range.from",
      "range.through",
    ]);
    expect(hookVars("sessionEnd")).toEqual([...common, "status", "reply"]);
    expect(hookVars("sessionDelete")).toEqual(common);
  });
});

describe("validateHooks", () => {
  const memoryHooks = [
    {
      id: "recall",
      on: "beforeTurn",
      tool: "zeromem_recall",
      inject: true,
      maxTokens: 800,
      args: { query: "{{prompt}}", exclude_session: "app:{{session.id}}", format: "text" },
    },
    {
      id: "remember",
      on: "afterTurn",
      tool: "zeromem_remember",
      args: { session_id: "app:{{session.id}}", turns: "{{turn.messages}}" },
    },
    { id: "hold", on: "beforeCompact", tool: "zeromem_status", veto: true, timeoutMs: 1500 },
  ];

  it("accepts memory hooks (recall and remember), absent hooks and an empty list", () => {
    expect(validateHooks(memoryHooks)).toEqual([]);
    expect(validateHooks(undefined)).toEqual([]);
    expect(validateHooks([])).toEqual([]);
  });

  it("reports an unknown event", () => {
    expect(validateHooks([{ id: "a", on: "beforeTrun", tool: "t" }])).toEqual([
      '`hooks[0].on` "beforeTrun" is not an event; it must be one of sessionStart, beforeTurn, afterTurn, beforeCompact, sessionEnd, sessionDelete',
    ]);
  });

  it("reports a placeholder the event does not offer, and accepts vars.* and paths inside offered values", () => {
    expect(
      validateHooks([
        { id: "a", on: "beforeTurn", tool: "t", args: { turns: "{{turn.messages}}" } },
      ]),
    ).toEqual([
      "`hooks[0].args` uses {{turn.messages}}, which beforeTurn does not offer (it offers session.id, host, now, vars.*, prompt, turn.index)",
    ]);
    expect(
      validateHooks([
        {
          id: "a",
          on: "afterTurn",
          tool: "t",
          args: {
            nested: { list: ["{{vars.user.name}}", "{{ now }}", "{{host}}"] },
            first: "{{turn.messages.0}}",
          },
        },
      ]),
    ).toEqual([]);
    expect(
      validateHooks([{ id: "a", on: "sessionDelete", tool: "t", args: { x: "{{vars}}" } }]),
    ).toHaveLength(1);
  });

  it("reports inject on an event that runs too late, and veto on one that announces nothing stoppable", () => {
    expect(validateHooks([{ id: "a", on: "afterTurn", tool: "t", inject: true }])).toEqual([
      "`hooks[0].inject` is set on afterTurn, which runs too late for the model to read it; only sessionStart, beforeTurn can inject",
    ]);
    expect(validateHooks([{ id: "a", on: "beforeTurn", tool: "t", veto: true }])).toEqual([
      "`hooks[0].veto` is set on beforeTurn, which announces nothing a hook can stop; only beforeCompact can veto",
    ]);
    // false is no claim at all.
    expect(
      validateHooks([{ id: "a", on: "afterTurn", tool: "t", inject: false, veto: false }]),
    ).toEqual([]);
  });

  it("reports duplicate ids", () => {
    expect(
      validateHooks([
        { id: "a", on: "beforeTurn", tool: "t" },
        { id: "b", on: "beforeTurn", tool: "t" },
        { id: "a", on: "afterTurn", tool: "u" },
      ]),
    ).toEqual(['`hooks[2].id` "a" is already used by `hooks[0]`']);
  });

  it("takes unknown and reports a hook's shape, as a form holds it", () => {
    expect(validateHooks({ id: "a" })).toEqual([
      "`hooks` must be an array of hooks, got an object",
    ]);
    expect(validateHooks(["recall"])).toEqual(['`hooks[0]` must be an object, got "recall"']);
    expect(
      validateHooks([{ tool: "", inject: "yes", veto: 1, args: [], maxTokens: 0, timeoutMs: 1.5 }]),
    ).toEqual([
      "`hooks[0].id` is missing; every hook needs one",
      "`hooks[0].on` is missing; it must be one of sessionStart, beforeTurn, afterTurn, beforeCompact, sessionEnd, sessionDelete",
      '`hooks[0].tool` must be a non-empty string, got ""',
      "`hooks[0].args` must be an object, got an array",
      '`hooks[0].inject` must be true or false, got "yes"',
      "`hooks[0].veto` must be true or false, got 1",
      "`hooks[0].maxTokens` must be a whole number of tokens > 0, got 0",
      "`hooks[0].timeoutMs` must be a whole number of milliseconds > 0, got 1.5",
    ]);
    expect(validateHooks([{ id: 7, on: "beforeTurn" }])).toEqual([
      "`hooks[0].id` must be a non-empty string, got 7",
      "`hooks[0].tool` is missing; name the tool to call",
    ]);
  });

  it("is how validateServerConfig reports a row's hooks", () => {
    const row = { id: "mem", transport: "stdio", command: "mem", hooks: memoryHooks };
    expect(validateServerConfig(row)).toEqual([]);
    expect(
      validateServerConfig({
        ...row,
        hooks: [{ id: "a", on: "afterTurn", tool: "t", inject: true }],
      }),
    ).toEqual([expect.stringContaining("`hooks[0].inject` is set on afterTurn")]);
  });
});

describe("renderTemplate", () => {
  const context = {
    session: { id: "s1" },
    prompt: "what did I say?",
    turn: { index: 3, messages: [{ role: "user", content: "hi" }] },
    vars: { tags: ["a", "b"], empty: "", nothing: null },
  };

  it("makes a string that is exactly one placeholder the value itself", () => {
    expect(
      renderTemplate(
        { turns: "{{turn.messages}}", index: "{{ turn.index }}", tags: "{{vars.tags}}" },
        context,
      ),
    ).toEqual({
      ok: true,
      value: { turns: context.turn.messages, index: 3, tags: ["a", "b"] },
    });
  });

  it("interpolates placeholders inside a longer string as text, through objects and arrays", () => {
    expect(
      renderTemplate(
        {
          session_id: "app:{{session.id}}",
          note: ["turn {{turn.index}} of {{session.id}}: {{vars.tags}}"],
          first: "{{turn.messages.0.content}}",
          empty: "[{{vars.empty}}]",
          literal: 5,
        },
        context,
      ),
    ).toEqual({
      ok: true,
      value: {
        session_id: "app:s1",
        note: ['turn 3 of s1: ["a","b"]'],
        first: "hi",
        empty: "[]",
        literal: 5,
      },
    });
  });

  it("fails on the first path the context has no value for, whole or interpolated, null included", () => {
    expect(renderTemplate({ a: "{{reply}}" }, context)).toEqual({ ok: false, missing: "reply" });
    expect(renderTemplate({ a: "app:{{session.name}}" }, context)).toEqual({
      ok: false,
      missing: "session.name",
    });
    expect(renderTemplate({ a: ["{{vars.nothing}}"] }, context)).toEqual({
      ok: false,
      missing: "vars.nothing",
    });
  });
});

describe("hookTimeoutMs", () => {
  it("is the hook's own, else 3 s where the user or a compaction waits, else the SDK's 60 s", () => {
    expect(hookTimeoutMs({ on: "afterTurn", timeoutMs: 250 })).toBe(250);
    expect(hookTimeoutMs({ on: "sessionStart" })).toBe(DEFAULT_WAITED_HOOK_TIMEOUT_MS);
    expect(hookTimeoutMs({ on: "beforeTurn" })).toBe(3000);
    expect(hookTimeoutMs({ on: "beforeCompact", veto: true })).toBe(3000);
    expect(hookTimeoutMs({ on: "beforeCompact" })).toBe(DEFAULT_HOOK_TIMEOUT_MS);
    expect(hookTimeoutMs({ on: "afterTurn", veto: true })).toBe(60_000);
    for (const on of ["afterTurn", "sessionEnd", "sessionDelete"] as const) {
      expect(hookTimeoutMs({ on })).toBe(60_000);
    }
  });
});

describe("readVeto", () => {
  it("is a JSON object whose veto is true, with a reason string when one is given", () => {
    expect(readVeto('{"veto": true}')).toEqual({ veto: true });
    expect(readVeto('{"veto": true, "reason": "pinned by the operator"}')).toEqual({
      veto: true,
      reason: "pinned by the operator",
    });
    expect(readVeto({ veto: true, reason: 5 })).toEqual({ veto: true });
  });

  it("is nothing else: prose, a list, a string true, false, or no veto key", () => {
    for (const output of [
      "please do not compact",
      "[true]",
      '[{"veto": true}]',
      '{"veto": "true"}',
      '{"veto": false}',
      '{"reason": "x"}',
      "true",
      "",
      null,
    ]) {
      expect(readVeto(output), String(output)).toBeUndefined();
    }
  });
});

describe("contextBlocks", () => {
  const outcome = (extra: Partial<HookOutcome>): HookOutcome => ({
    hook: "recall",
    serverId: "mem",
    label: "Memory",
    event: "beforeTurn",
    tool: "mem__recall",
    ok: true,
    inject: true,
    ms: 1,
    ...extra,
  });

  it("wraps each injected text in a context block named by its row's label, in outcome order", () => {
    const blocks = contextBlocks([
      outcome({ text: "  the user likes tea \n" }),
      outcome({ hook: "notes", serverId: "n", label: 'Notes "A" & <B>', text: "pinned" }),
    ]);
    expect(blocks.text).toBe(
      '<context source="Memory">\nthe user likes tea\n</context>\n<context source="Notes &quot;A&quot; &amp; &lt;B>">\npinned\n</context>',
    );
    expect(blocks.injected).toEqual([
      { hook: "recall", serverId: "mem", label: "Memory", tokens: 5, text: "the user likes tea" },
      { hook: "notes", serverId: "n", label: 'Notes "A" & <B>', tokens: 2, text: "pinned" },
    ]);
    expect(blocks.tokens).toBe(7);
  });

  it("leaves out failures, hooks that do not inject, and empty answers", () => {
    const blocks = contextBlocks([
      outcome({ ok: false, reason: "timeout", error: "slow" }),
      outcome({ inject: false, text: "not for the model" }),
      outcome({ text: "   " }),
    ]);
    expect(blocks).toEqual({ text: "", tokens: 0, injected: [] });
  });

  it("caps each block at its hook's maxTokens, 1000 by default, cutting with …", () => {
    const blocks = contextBlocks([
      outcome({ text: "a".repeat(5000) }),
      outcome({ hook: "small", text: "b".repeat(100), maxTokens: 10 }),
    ]);
    const [first, second] = blocks.injected;
    expect(first?.text).toHaveLength(4000);
    expect(first?.text.endsWith("a…")).toBe(true);
    expect(first?.tokens).toBe(1000);
    expect(second?.text).toBe(`${"b".repeat(39)}…`);
    expect(second?.tokens).toBe(10);
  });

  it("caps all blocks together at 2000 tokens by default, and leaves out a block with no room", () => {
    const blocks = contextBlocks([
      outcome({ hook: "one", text: "a".repeat(4000) }),
      outcome({ hook: "two", text: "b".repeat(4000) }),
      outcome({ hook: "three", text: "c".repeat(10) }),
    ]);
    expect(blocks.injected.map((b) => [b.hook, b.tokens])).toEqual([
      ["one", 1000],
      ["two", 1000],
    ]);
    expect(blocks.tokens).toBe(2000);
    expect(blocks.text).not.toContain("ccc");

    const tight = contextBlocks(
      [
        outcome({ hook: "one", text: "a".repeat(100) }),
        outcome({ hook: "two", text: "b".repeat(100) }),
      ],
      { maxTokens: 30 },
    );
    expect(tight.injected.map((b) => [b.hook, b.text.length])).toEqual([
      ["one", 100],
      ["two", 20],
    ]);
    expect(tight.injected[1]?.text.endsWith("…")).toBe(true);
  });

  it("never splits a surrogate pair when it cuts", () => {
    const blocks = contextBlocks([outcome({ text: "🎉".repeat(10), maxTokens: 2 })]);
    const text = blocks.injected[0]!.text;
    expect(text.length).toBeLessThanOrEqual(8);
    expect(text).toBe("🎉🎉🎉…");
  });
});
