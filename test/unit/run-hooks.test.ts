import { afterEach, describe, expect, it, vi } from "vitest";

import {
  contextBlocks,
  McpPool,
  type HookOutcome,
  type HttpServerConfig,
  type McpServerConfig,
  type ToolHook,
} from "../../src/index.js";
import { makePool, memoryRow, memoryTransport } from "../../src/testing/index.js";
import { scriptedServer, tool, type FakeTool } from "../helpers/tool-server.js";

const pools: McpPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const session = { session: { id: "s1" } };

/** A tool answering a fixed text, recording the arguments it was called with. */
function answering(name: string, text: string, seen: unknown[] = []): FakeTool {
  return tool(name, {
    call: (args) => {
      seen.push(args);
      return { content: [{ type: "text", text }] };
    },
  });
}

/** A tool that answers only once released, and says when it was called. */
function gated(name: string) {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const called = new Promise<void>((resolve) => (started = resolve));
  const fake = tool(name, {
    call: async () => {
      started();
      await gate;
      return { content: [{ type: "text", text: `${name} done` }] };
    },
  });
  return { fake, release, called };
}

async function poolOf(servers: Record<string, FakeTool[]>, rows: McpServerConfig[]) {
  const builders = Object.fromEntries(
    Object.entries(servers).map(([id, tools]) => [id, scriptedServer(tools).build]),
  );
  const pool = makePool({ servers: builders });
  pools.push(pool);
  await pool.sync(rows);
  return pool;
}

const withHooks = (id: string, hooks: ToolHook[], extra: Partial<HttpServerConfig> = {}) =>
  memoryRow(id, id, { hooks, ...extra });

describe("runHooks", () => {
  it("calls each hook's tool, hidden or not, with the context filled into its args", async () => {
    const seen: unknown[] = [];
    const pool = await poolOf({ mem: [answering("recall", "the user likes tea", seen)] }, [
      withHooks(
        "mem",
        [
          {
            id: "recall",
            on: "beforeTurn",
            tool: "recall",
            inject: true,
            args: { query: "{{prompt}}", session: "app:{{session.id}}", at: "{{now}}" },
          },
        ],
        { label: "Memory", hiddenTools: ["recall"] },
      ),
    ]);
    const outcomes = await pool.runHooks("beforeTurn", { ...session, prompt: "drinks?" });
    expect(outcomes).toEqual([
      {
        hook: "recall",
        serverId: "mem",
        label: "Memory",
        event: "beforeTurn",
        tool: "mem__recall",
        ok: true,
        text: "the user likes tea",
        inject: true,
        ms: expect.any(Number),
      },
    ]);
    expect(seen).toEqual([
      { query: "drinks?", session: "app:s1", at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    ]);
    expect(contextBlocks(outcomes).text).toBe(
      '<context source="Memory">\nthe user likes tea\n</context>',
    );
    // The model is still not offered the hidden tool.
    expect(pool.tools()).toEqual([]);
  });

  it("runs only the event's hooks, of enabled rows in scope, and none for an event nobody hooked", async () => {
    const pool = await poolOf({ a: [answering("t", "a")], b: [answering("t", "b")] }, [
      withHooks("a", [
        { id: "one", on: "beforeTurn", tool: "t" },
        { id: "two", on: "afterTurn", tool: "t" },
      ]),
      withHooks("b", [{ id: "three", on: "beforeTurn", tool: "t" }]),
      withHooks("c", [{ id: "four", on: "beforeTurn", tool: "t" }], { enabled: false }),
    ]);
    expect((await pool.runHooks("beforeTurn", session)).map((o) => o.hook)).toEqual([
      "one",
      "three",
    ]);
    expect(
      (await pool.runHooks("beforeTurn", session, { servers: ["b"] })).map((o) => o.hook),
    ).toEqual(["three"]);
    expect(await pool.runHooks("beforeTurn", session, { servers: [] })).toEqual([]);
    expect(await pool.runHooks("sessionDelete", session)).toEqual([]);
  });

  it("runs an event's hooks at once and returns their outcomes in configuration order", async () => {
    const slow = gated("slow");
    const fast = gated("fast");
    const pool = await poolOf({ a: [slow.fake], b: [fast.fake] }, [
      withHooks("a", [{ id: "first", on: "afterTurn", tool: "slow" }]),
      withHooks("b", [{ id: "second", on: "afterTurn", tool: "fast" }]),
    ]);
    const running = pool.runHooks("afterTurn", session);
    // Both tools are called before either answers: the hooks run in parallel.
    await Promise.all([slow.called, fast.called]);
    fast.release();
    slow.release();
    expect((await running).map((o) => [o.hook, o.text])).toEqual([
      ["first", "slow done"],
      ["second", "fast done"],
    ]);
  });

  it("skips a hook whose template names a path the context has no value for, without calling it", async () => {
    const seen: unknown[] = [];
    const notices: HookOutcome[] = [];
    const pool = await poolOf({ mem: [answering("remember", "ok", seen)] }, [
      withHooks("mem", [
        {
          id: "remember",
          on: "afterTurn",
          tool: "remember",
          args: { session_id: "app:{{session.id}}", turns: "{{turn.messages}}" },
        },
      ]),
    ]);
    const [outcome] = await pool.runHooks(
      "afterTurn",
      { ...session, turn: { index: 1 } },
      { onNotice: (o) => notices.push(o) },
    );
    expect(outcome).toMatchObject({
      ok: false,
      reason: "skipped",
      error: "the context has no value for {{turn.messages}}",
    });
    expect(seen).toEqual([]);
    expect(notices).toEqual([outcome]);
  });

  it("bounds a hook by 3 s on beforeTurn unless it names its own timeoutMs, and moves on", async () => {
    const stuck = gated("stuck");
    const pool = await poolOf({ a: [stuck.fake, answering("quick", "fine")] }, [
      withHooks("a", [
        { id: "stuck", on: "beforeTurn", tool: "stuck" },
        { id: "own", on: "beforeTurn", tool: "stuck", timeoutMs: 10_000 },
        { id: "quick", on: "beforeTurn", tool: "quick" },
      ]),
    ]);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const notices: HookOutcome[] = [];
    let settled: HookOutcome[] | undefined;
    const running = pool
      .runHooks("beforeTurn", session, { onNotice: (o) => notices.push(o) })
      .then((outcomes) => (settled = outcomes));
    await stuck.called;
    await vi.advanceTimersByTimeAsync(2999);
    expect(notices).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(notices.map((o) => [o.hook, o.reason])).toEqual([["stuck", "timeout"]]);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(7000);
    await running;
    expect(settled?.map((o) => [o.hook, o.ok, o.reason])).toEqual([
      ["stuck", false, "timeout"],
      ["own", false, "timeout"],
      ["quick", true, undefined],
    ]);
    expect(settled?.[0]?.error).toBe('"stuck" did not answer within 3000 ms');
    stuck.release();
  });

  it("bounds waking a server that is down as well as the call", async () => {
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    const pool = makePool({
      servers: {},
      createTransport: async (row, context) => {
        await blocked;
        return memoryTransport({ a: scriptedServer([answering("t", "x")]).build })(row, context);
      },
      lazy: true,
    });
    pools.push(pool);
    await pool.sync([withHooks("a", [{ id: "h", on: "sessionStart", tool: "t", timeoutMs: 20 }])]);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const running = pool.runHooks("sessionStart", session);
    await vi.advanceTimersByTimeAsync(20);
    const [outcome] = await running;
    // A lazy row with no last-known list has no index entry: the name is resolved by
    // waking the server, and that wait is inside the hook's bound.
    expect(outcome).toMatchObject({ ok: false, reason: "timeout" });
    vi.useRealTimers();
    unblock();
  });

  it("ends every running hook as aborted when the signal aborts, and runs none once aborted", async () => {
    const stuck = gated("stuck");
    const pool = await poolOf({ a: [stuck.fake] }, [
      withHooks("a", [
        { id: "one", on: "afterTurn", tool: "stuck" },
        { id: "two", on: "afterTurn", tool: "stuck" },
      ]),
    ]);
    const controller = new AbortController();
    const running = pool.runHooks("afterTurn", session, { signal: controller.signal });
    await stuck.called;
    controller.abort();
    expect((await running).map((o) => [o.hook, o.ok, o.reason])).toEqual([
      ["one", false, "aborted"],
      ["two", false, "aborted"],
    ]);
    const again = await pool.runHooks("afterTurn", session, { signal: controller.signal });
    expect(again.map((o) => o.reason)).toEqual(["aborted", "aborted"]);
    stuck.release();
  });

  it("never rejects: a missing tool, a server in backoff and a throwing onNotice are outcomes", async () => {
    const pool = makePool({
      servers: {},
      crashBackoffMs: 60_000,
      createTransport: () => {
        throw new Error("cannot start");
      },
    });
    pools.push(pool);
    await pool.sync([withHooks("down", [{ id: "h", on: "afterTurn", tool: "t" }])]);
    const up = await poolOf({ a: [answering("t", "x")] }, [
      withHooks("a", [{ id: "gone", on: "afterTurn", tool: "nothing" }]),
    ]);
    const throwing = {
      onNotice: () => {
        throw new Error("host bug");
      },
    };
    expect(await pool.runHooks("afterTurn", session, throwing)).toMatchObject([
      { hook: "h", ok: false, reason: "failed", code: "backoff" },
    ]);
    expect(await up.runHooks("afterTurn", session, throwing)).toMatchObject([
      { hook: "gone", ok: false, reason: "failed", code: "unknown-tool" },
    ]);
  });

  it("counts inject only on the events that allow it, even for a row that skipped validation", async () => {
    const pool = await poolOf({ a: [answering("t", "late")] }, [
      withHooks("a", [{ id: "late", on: "afterTurn", tool: "t", inject: true }]),
    ]);
    const outcomes = await pool.runHooks("afterTurn", session);
    expect(outcomes[0]).toMatchObject({ ok: true, text: "late", inject: false });
    expect(contextBlocks(outcomes).text).toBe("");
  });
});

describe("runHooks and vetoes", () => {
  const asking = (text: string) => answering("status", text);
  const vetoRow = (hook: Partial<ToolHook>) =>
    withHooks("mem", [{ id: "hold", on: "beforeCompact", tool: "status", ...hook }]);
  const compacting = { ...session, compacting: 12, range: { from: 0, through: 11 } };

  it("carries veto: true, with the reason as its text, when the row grants it and the tool asks", async () => {
    const pool = await poolOf({ mem: [asking('{"veto": true, "reason": "mid-write"}')] }, [
      vetoRow({ veto: true }),
    ]);
    expect(await pool.runHooks("beforeCompact", compacting)).toMatchObject([
      { ok: true, veto: true, text: "mid-write" },
    ]);
  });

  it("is only an answer when the row does not grant it", async () => {
    const pool = await poolOf({ mem: [asking('{"veto": true}')] }, [vetoRow({})]);
    const [outcome] = await pool.runHooks("beforeCompact", compacting);
    expect(outcome).toMatchObject({ ok: true, text: '{"veto": true}' });
    expect(outcome).not.toHaveProperty("veto");
  });

  it("is never read from prose, a list or a string true", async () => {
    for (const text of ["do not compact", '[{"veto": true}]', '{"veto": "true"}']) {
      const pool = await poolOf({ mem: [asking(text)] }, [vetoRow({ veto: true })]);
      const [outcome] = await pool.runHooks("beforeCompact", compacting);
      expect(outcome, text).toMatchObject({ ok: true, text });
      expect(outcome, text).not.toHaveProperty("veto");
    }
  });

  it("is no opinion from a failure: a hook that failed, timed out or was skipped leaves it unset", async () => {
    const failing = tool("status", {
      call: () => ({ isError: true, content: [{ type: "text", text: '{"veto": true}' }] }),
    });
    const pool = await poolOf({ mem: [failing] }, [
      withHooks("mem", [
        { id: "failed", on: "beforeCompact", tool: "status", veto: true },
        {
          id: "skipped",
          on: "beforeCompact",
          tool: "status",
          veto: true,
          args: { x: "{{vars.none}}" },
        },
      ]),
    ]);
    const outcomes = await pool.runHooks("beforeCompact", compacting);
    expect(outcomes.map((o) => [o.hook, o.ok, o.reason, o.veto])).toEqual([
      ["failed", false, "failed", undefined],
      ["skipped", false, "skipped", undefined],
    ]);
  });

  it("is held to beforeCompact even for a row that never went through the validator", async () => {
    const pool = await poolOf({ mem: [asking('{"veto": true}')] }, [
      withHooks("mem", [{ id: "hold", on: "sessionEnd", tool: "status", veto: true }]),
    ]);
    const [outcome] = await pool.runHooks("sessionEnd", { ...session, status: "done" });
    expect(outcome).toMatchObject({ ok: true, text: '{"veto": true}' });
    expect(outcome).not.toHaveProperty("veto");
  });
});
