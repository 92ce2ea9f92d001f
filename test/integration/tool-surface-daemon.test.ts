/**
 * The agent's tool surface through a real daemon and the client library: search,
 * describe, alwaysLoaded, calls with coercion and hiding, and hooks — the echo fixture for
 * the rules, and the reference memory server for the case hooks were written for.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPoolError, type HookOutcome, type PoolClient } from "mcpool-client";

import { contextBlocks } from "../../src/config/hooks.js";
import {
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
  runCli,
} from "../helpers/daemon.js";
import { fixture, referenceServer } from "../helpers/processes.js";

const memoryBin = referenceServer("server-memory");

let home: TestHome;
let daemon: RunningDaemon;
let agent: PoolClient;

const mcpool = (...args: string[]) => runCli(home, ...args);

beforeAll(async () => {
  home = testHome("mcpool-surface-");
  home.writeConfig({
    echo: {
      command: process.execPath,
      args: [fixture("echo.mjs")],
      hiddenTools: ["pid"],
      alwaysLoad: ["echo", "pid", "nothing"],
      hooks: [
        {
          id: "recall",
          on: "beforeTurn",
          tool: "echo",
          inject: true,
          args: { text: "recalled for {{session.id}}: {{prompt}}" },
        },
        { id: "whoami", on: "beforeTurn", tool: "pid" },
        { id: "needs-var", on: "beforeTurn", tool: "echo", args: { text: "{{vars.topic}}" } },
        {
          id: "hold",
          on: "beforeCompact",
          tool: "echo",
          veto: true,
          args: { text: "{{vars.answer}}" },
        },
      ],
    },
    memory: {
      command: process.execPath,
      args: [memoryBin],
      env: { MEMORY_FILE_PATH: join(home.dir, "memory.jsonl") },
      label: "Memory",
      hiddenTools: ["create_entities"],
      hooks: [
        {
          id: "remember",
          on: "afterTurn",
          tool: "create_entities",
          args: {
            entities: [
              { name: "{{session.id}}", entityType: "session", observations: ["{{reply}}"] },
            ],
          },
        },
        {
          id: "recall",
          on: "beforeTurn",
          tool: "search_nodes",
          inject: true,
          maxTokens: 200,
          args: { query: "{{session.id}}" },
        },
      ],
    },
  });
  daemon = await startDaemon(home);
  agent = await client(home, "surface-test");
  // A call waits for its server to be up: both are indexed once these answer.
  await agent.call("echo__echo", { text: "up" });
  await agent.call("memory__read_graph", {});
  // A daemon and two servers to start: more than the default hook bound on a loaded machine.
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await daemon?.stop();
  home?.remove();
});

describe("the tool surface over the socket", () => {
  it("searches the catalog, best first, with scope and limit", async () => {
    const found = await agent.search("search the knowledge graph nodes");
    expect(found[0]?.id).toBe("memory");
    expect(found[0]?.tools[0]?.name).toBe("memory__search_nodes");
    expect(found[0]?.tools[0]?.tokens).toBeGreaterThan(0);
    expect((await agent.search("sleep", { servers: ["echo"] })).map((s) => s.id)).toEqual(["echo"]);
    expect(await agent.search("sleep", { servers: [] })).toEqual([]);
    const limited = await agent.search("delete entities relations observations", { limit: 2 });
    expect(limited.flatMap((s) => s.tools)).toHaveLength(2);
    // A hidden tool is not found.
    expect(
      (await agent.search("create entities")).flatMap((s) => s.tools.map((t) => t.name)),
    ).not.toContain("memory__create_entities");
  });

  it("describes a tool's schema and refuses what a call would", async () => {
    expect(await agent.describe("echo__sleep")).toMatchObject({
      name: "echo__sleep",
      serverId: "echo",
      toolName: "sleep",
      inputSchema: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
    });
    expect(await agent.describe("echo__pid")).toBeUndefined();
    expect(await agent.describe("echo__pid", { hidden: true })).toMatchObject({ hidden: true });
    expect(await agent.describe("echo__sleep", { servers: ["memory"] })).toBeUndefined();
    expect(await agent.describe("nobody__nothing")).toBeUndefined();
  });

  it("answers alwaysLoaded with what tools() would hand out", async () => {
    expect(await agent.alwaysLoaded()).toEqual(["echo__echo"]);
    expect(await agent.alwaysLoaded(["memory"])).toEqual([]);
  });

  it("coerces arguments by default, sends them as given when asked, and refuses what does not fit", async () => {
    expect(await agent.call("echo__sleep", { ms: "5" })).toBe("slept 5");
    expect(await agent.call("echo__add", { a: "1", b: "2" })).toBe('add({"a":1,"b":2})');
    expect(await agent.call("echo__add", { a: "1", b: "2" }, { coerce: false })).toBe(
      'add({"a":"1","b":"2"})',
    );
    const refused = await agent.call("echo__sleep", { ms: "soon" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpPoolError);
    expect(refused).toMatchObject({
      code: "invalid-arguments",
      message: 'invalid arguments for "echo__sleep": `ms` must be an integer, got "soon"',
    });
  });

  it("refuses a hidden tool as one that does not exist, unless the call asks for it", async () => {
    await expect(agent.call("echo__pid", {})).rejects.toMatchObject({ code: "unknown-tool" });
    expect(await agent.call("echo__pid", {}, { hidden: true })).toMatch(/^\d+$/);
  });
});

describe("hooks over the socket", () => {
  it("runs an event's hooks in configuration order, hidden tools included, and skips what lacks a value", async () => {
    const notices: HookOutcome[] = [];
    const outcomes = await agent.runHooks(
      "beforeTurn",
      { session: { id: "s1" }, prompt: "hello" },
      { onNotice: (o) => notices.push(o) },
    );
    expect(outcomes.map((o) => [o.serverId, o.hook, o.ok])).toEqual([
      ["echo", "recall", true],
      ["echo", "whoami", true],
      ["echo", "needs-var", false],
      ["memory", "recall", true],
    ]);
    expect(outcomes[0]?.text).toBe("recalled for s1: hello");
    expect(outcomes[1]?.text).toMatch(/^\d+$/);
    expect(notices).toEqual([outcomes[2]]);
    expect(notices[0]).toMatchObject({
      reason: "skipped",
      error: "the context has no value for {{vars.topic}}",
    });
    const blocks = contextBlocks(outcomes);
    expect(blocks.text).toContain('<context source="echo">\nrecalled for s1: hello\n</context>');
    expect(blocks.injected.map((b) => b.hook)).toEqual(["recall", "recall"]);
  });

  it("remembers after a turn and recalls it before the next, through the memory server", async () => {
    const session = { id: "tea-session" };
    const after = await agent.runHooks("afterTurn", {
      session,
      prompt: "what do I like?",
      reply: "the user likes green tea",
      turn: { index: 0, messages: [] },
    });
    expect(after.map((o) => [o.hook, o.ok, o.error])).toEqual([["remember", true, undefined]]);
    const before = await agent.runHooks(
      "beforeTurn",
      { session, prompt: "drinks?" },
      {
        servers: ["memory"],
      },
    );
    expect(before).toHaveLength(1);
    expect(before[0]?.text).toContain("the user likes green tea");
    const { injected } = contextBlocks(before);
    expect(injected[0]?.label).toBe("Memory");
    expect(injected[0]!.tokens).toBeLessThanOrEqual(200);
  });

  it("carries a veto only from a beforeCompact hook the row grants it to", async () => {
    const ask = (answer: string) =>
      agent.runHooks("beforeCompact", {
        session: { id: "s1" },
        compacting: 10,
        range: { from: 0, through: 9 },
        vars: { answer },
      });
    expect(await ask('{"veto": true, "reason": "pinned"}')).toMatchObject([
      { hook: "hold", ok: true, veto: true, text: "pinned" },
    ]);
    const [prose] = await ask("fine by me");
    expect(prose).toMatchObject({ ok: true, text: "fine by me" });
    expect(prose).not.toHaveProperty("veto");
  });

  it("resolves with no outcomes for an event that is not one, instead of rejecting", async () => {
    expect(await agent.runHooks("beforeLunch" as "beforeTurn", { session: { id: "s" } })).toEqual(
      [],
    );
  });
});

describe("the CLI", () => {
  it("mcpool search prints the best matches, and --json the catalog shape", () => {
    const human = mcpool("search", "search", "the", "graph", "--limit", "2");
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")[0]).toMatch(/^TOOL\s+SERVER\s+DESCRIPTION/);
    expect(human.stdout.split("\n")[1]).toMatch(/^memory__search_nodes\s+memory\s+Search/);
    expect(human.stdout.trim().split("\n")).toHaveLength(3);
    const json = JSON.parse(mcpool("search", "sleep", "--server", "echo", "--json").stdout) as {
      id: string;
      tools: { name: string }[];
    }[];
    expect(json.map((s) => [s.id, s.tools.map((t) => t.name)])).toEqual([
      ["echo", ["echo__sleep"]],
    ]);
    expect(mcpool("search").code).toBe(2);
    expect(mcpool("search", "x", "--limit", "0").code).toBe(2);
  });

  it("mcpool describe prints a tool's schema, and fails for one nobody offers", () => {
    const described = mcpool("describe", "echo__sleep");
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^echo__sleep\s+\(server echo, tool sleep\)/);
    expect(described.stdout).toContain('"ms": {');
    expect(JSON.parse(mcpool("describe", "echo__sleep", "--json").stdout)).toMatchObject({
      toolName: "sleep",
    });
    const missing = mcpool("describe", "echo__pid");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no server offers the tool "echo__pid"');
  });
});
