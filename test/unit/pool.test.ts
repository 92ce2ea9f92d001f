import { afterEach, describe, expect, it, vi } from "vitest";
import {
  httpStatusFor,
  McpPool,
  McpPoolError,
  POOL_ERROR_CODES,
  type PoolEvent,
} from "../../src/index.js";
import { echoServer, makePool, memoryRow } from "../../src/testing/index.js";
import { scriptedServer, tool } from "../helpers/tool-server.js";

const pools: McpPool[] = [];
function track(pool: McpPool): McpPool {
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function refusal(promise: Promise<unknown>): Promise<McpPoolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpPoolError);
  return error as McpPoolError;
}

describe("McpPool over in-memory servers", () => {
  it("calls the echo server with no process started", async () => {
    const pool = track(makePool({ servers: { echo: () => echoServer() } }));
    await pool.sync([memoryRow("echo")]);
    expect(await pool.call("echo__add", { a: 1, b: 2 })).toBe('add({"a":1,"b":2})');
  });

  it("orders tools by configuration, then the server's own order, and keeps a slot across a re-list", async () => {
    const a = scriptedServer([tool("one"), tool("two")]);
    const b = scriptedServer([tool("zeta"), tool("alpha")]);
    const pool = track(makePool({ servers: { a: a.build, b: b.build } }));
    await pool.sync([memoryRow("b"), memoryRow("a")]);
    expect(pool.tools().map((t) => t.function.name)).toEqual([
      "b__zeta",
      "b__alpha",
      "a__one",
      "a__two",
    ]);
    expect(pool.state().map((s) => s.id)).toEqual(["b", "a"]);

    b.setTools([tool("zeta"), tool("alpha"), tool("beta")]);
    const changed = new Promise<PoolEvent>((resolve) =>
      pool.onEvent((e) => e.type === "tools-changed" && resolve(e)),
    );
    await b.listChanged();
    const event = await changed;
    expect(event).toMatchObject({
      type: "tools-changed",
      serverId: "b",
      added: ["beta"],
      removed: [],
      tools: 3,
    });
    expect(pool.tools().map((t) => t.function.name)).toEqual([
      "b__zeta",
      "b__alpha",
      "b__beta",
      "a__one",
      "a__two",
    ]);
    expect(b.spawns).toBe(1);
  });

  it("forwards server notifications with the server id, list_changed once the new list is read", async () => {
    const s = scriptedServer([tool("one")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    const seen: [string, string][] = [];
    pool.onNotification((id, n) => seen.push([id, n.method]));
    await pool.sync([memoryRow("s")]);
    await s.live[0]!.sendLoggingMessage({ level: "info", data: "hello" });
    s.setTools([tool("one"), tool("two")]);
    await s.listChanged();
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual([
      ["s", "notifications/message"],
      ["s", "notifications/tools/list_changed"],
    ]);
    // Said after the list was read again: whoever lists on hearing it gets the new tools.
    expect(pool.tools().map((t) => t.function.name)).toEqual(["s__one", "s__two"]);
  });

  it("hands out frozen definitions with the label prefix and the server's schema", async () => {
    const pool = track(makePool({ servers: { echo: () => echoServer() } }));
    await pool.sync([memoryRow("echo", "echo", { label: "Echo" })]);
    const [definition] = pool.tools({ names: ["echo__echo"] });
    expect(definition?.function.description).toBe("[Echo] Answers with the given text.");
    expect(definition?.function.parameters).toMatchObject({ required: ["text"] });
    expect(Object.isFrozen(definition)).toBe(true);
    expect(Object.isFrozen(definition?.function)).toBe(true);
    expect(() => {
      (definition as { type: string }).type = "other";
    }).toThrow();
  });

  it("scopes: absent means every server, empty means none, and call re-checks the scope", async () => {
    const pool = track(
      makePool({
        servers: { a: scriptedServer([tool("x")]).build, b: scriptedServer([tool("y")]).build },
      }),
    );
    await pool.sync([memoryRow("a"), memoryRow("b")]);
    expect(pool.tools().map((t) => t.function.name)).toEqual(["a__x", "b__y"]);
    expect(pool.tools({ servers: [] })).toEqual([]);
    expect(pool.tools({ servers: ["b"] }).map((t) => t.function.name)).toEqual(["b__y"]);
    expect(pool.catalog([]).length).toBe(0);
    const outOfScope = await refusal(pool.call("a__x", {}, { servers: ["b"] }));
    const unknown = await refusal(pool.call("a__nothing", {}, { servers: ["a"] }));
    expect(outOfScope.code).toBe("out-of-scope");
    expect(unknown.code).toBe("unknown-tool");
    // The two refusals must not tell a run which servers exist.
    expect(outOfScope.message.replace("a__x", "NAME")).toBe(
      unknown.message.replace("a__nothing", "NAME"),
    );
    expect(await pool.call("a__x", {}, ["a"])).toBe("x({})");
  });

  it("gives a clashing namespace to the lower id, leaves the other's tools out everywhere and logs once", async () => {
    const errors: string[] = [];
    const low = scriptedServer([tool("read")]);
    const high = scriptedServer([tool("read"), tool("write")]);
    const pool = track(
      makePool({
        servers: { low: low.build, high: high.build },
        log: { error: (m) => errors.push(m) },
      }),
    );
    await pool.sync([
      memoryRow("zz", "high", { slug: "fs" }),
      memoryRow("aa", "low", { slug: "fs" }),
    ]);
    expect(pool.tools().map((t) => t.function.name)).toEqual(["fs__read"]);
    expect(await pool.call("fs__read", {})).toBe("read({})");
    expect(low.spawns + high.spawns).toBe(2);
    expect(await refusal(pool.call("fs__write", {}))).toMatchObject({ code: "unknown-tool" });
    expect(
      pool
        .state()
        .find((s) => s.id === "zz")
        ?.tools.every((t) => t.clashed),
    ).toBe(true);
    // The loser says so where status shows what is wrong, though its child is up.
    expect(pool.state().find((s) => s.id === "zz")?.error).toMatch(
      /its tools are left out: server "aa" has a tool name one of them needs/,
    );
    expect(pool.state().find((s) => s.id === "aa")?.error).toBeUndefined();
    pool.tools();
    pool.state();
    await pool.reconnect("zz");
    pool.tools();
    expect(errors.filter((m) => m.includes("both want"))).toHaveLength(1);
  });

  it("sanitises and shortens names, and dispatches a long name to its own tool", async () => {
    const long = "x".repeat(70);
    const s = scriptedServer([tool("fs.read"), tool(`${long}a`), tool(`${long}b`)]);
    const pool = track(makePool({ servers: { s: s.build } }));
    await pool.sync([memoryRow("s")]);
    const names = pool.tools().map((t) => t.function.name);
    expect(names[0]).toBe("s__fs_read");
    expect(names[1]).toHaveLength(64);
    expect(names[1]).not.toBe(names[2]);
    expect(await pool.call(names[2]!, {})).toBe(`${long}b({})`);
  });

  it("hides hiddenTools from tools() and catalog(), refuses them unless asked, and marks them in state()", async () => {
    const pool = track(
      makePool({ servers: { s: scriptedServer([tool("open"), tool("secret")]).build } }),
    );
    await pool.sync([memoryRow("s", "s", { hiddenTools: ["secret"] })]);
    expect(pool.tools().map((t) => t.function.name)).toEqual(["s__open"]);
    expect(pool.catalog()[0]?.tools.map((t) => t.name)).toEqual(["s__open"]);
    expect((await refusal(pool.call("s__secret", {}))).code).toBe("unknown-tool");
    expect(await pool.call("s__secret", {}, { hidden: true })).toBe("secret({})");
    expect(pool.state()[0]?.tools.map((t) => [t.name, t.hidden])).toEqual([
      ["open", false],
      ["secret", true],
    ]);
    // Read at call time: an edit that unhides applies without a reconnect.
    await pool.sync([memoryRow("s")]);
    expect(pool.tools().map((t) => t.function.name)).toEqual(["s__open", "s__secret"]);
  });

  it("reports state in configuration order with secrets left out unless asked for, as a copy", async () => {
    const pool = track(
      makePool({ servers: { s: scriptedServer([tool("t")], { instructions: "use t" }).build } }),
    );
    const row = memoryRow("s", "s", {
      headers: { authorization: "Bearer canary-123" },
      label: "S",
    });
    await pool.sync([row]);
    const [state] = pool.state();
    expect(state).toMatchObject({
      id: "s",
      slug: "s",
      label: "S",
      status: "ready",
      instructions: "use t",
    });
    expect(state?.startedAt).toBeTypeOf("number");
    expect(state?.capabilities).toHaveProperty("tools");
    expect(state?.tools).toEqual([
      {
        name: "t",
        qualified: "s__t",
        description: "The t tool.",
        hidden: false,
        tokens: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(pool.state())).not.toContain("canary-123");
    expect(pool.state({ secrets: true })[0]?.config).toMatchObject({
      headers: { authorization: "Bearer canary-123" },
    });
    (
      pool.state({ secrets: true })[0]!.config as { headers: Record<string, string> }
    ).headers.authorization = "x";
    expect(pool.state({ secrets: true })[0]?.config).toMatchObject({
      headers: { authorization: "Bearer canary-123" },
    });
  });

  it("refuses sync() and reconnect() with nothing to reconcile against, and sync([]) closes everything", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    expect((await refusal(pool.sync())).code).toBe("no-configs");
    expect((await refusal(pool.reconnect("s"))).code).toBe("no-configs");
    await pool.sync([memoryRow("s")]);
    const closes: PoolEvent[] = [];
    pool.onEvent((e) => e.type === "close" && closes.push(e));
    await pool.sync([]);
    expect(pool.state()).toEqual([]);
    expect(pool.tools()).toEqual([]);
    expect(closes).toEqual([{ type: "close", serverId: "s", reason: "removed" }]);
  });

  it("says on each close whether the row's lists stay offered: a reconnect or stop keeps them, an edit does not", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    await pool.sync([memoryRow("s")]);
    const closes: PoolEvent[] = [];
    pool.onEvent((e) => e.type === "close" && closes.push(e));
    await pool.reconnect("s");
    await pool.sync([memoryRow("s", "s", { headers: { "x-edited": "1" } })]);
    await pool.ready();
    await pool.stop("s");
    expect(pool.tools()).toHaveLength(1);
    expect(closes).toEqual([
      { type: "close", serverId: "s", reason: "reconnect", kept: true },
      { type: "close", serverId: "s", reason: "changed" },
      { type: "close", serverId: "s", reason: "stop", kept: true },
    ]);
  });

  it("reads rows from load() when sync() is given none, and debounces syncSoon()", async () => {
    const s = scriptedServer([tool("t")]);
    let loads = 0;
    const pool = track(
      makePool({
        servers: { s: s.build },
        load: () => {
          loads += 1;
          return [memoryRow("s")];
        },
      }),
    );
    await pool.sync();
    expect(loads).toBe(1);
    const soon = [pool.syncSoon(), pool.syncSoon(), pool.syncSoon()];
    await pool.flush();
    await Promise.all(soon);
    expect(loads).toBe(2);
    expect(s.spawns).toBe(1);
  });

  it("never spawns an edited server twice when two syncs race", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { one: s.build, two: s.build } }));
    await pool.sync([memoryRow("s", "one")]);
    expect(s.spawns).toBe(1);
    await Promise.all([pool.sync([memoryRow("s", "two")]), pool.sync([memoryRow("s", "two")])]);
    expect(s.spawns).toBe(2);
    expect(pool.state()[0]?.status).toBe("ready");
  });

  it("restarts a server only when its connection fields change", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { one: s.build, two: s.build } }));
    await pool.sync([memoryRow("s", "one", { headers: { a: "1" } })]);
    await pool.sync([
      memoryRow("s", "one", {
        headers: { a: "1" },
        label: "New",
        callTimeoutMs: 5,
        hiddenTools: ["t"],
      }),
    ]);
    expect(s.spawns).toBe(1);
    expect(pool.state()[0]?.label).toBe("New");
    await pool.sync([memoryRow("s", "one", { headers: { a: "2" } })]);
    expect(s.spawns).toBe(2);
  });

  it("never starts a disabled row, and starts it once enabled", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    await pool.sync([memoryRow("s", "s", { enabled: false })]);
    expect(pool.state()[0]?.status).toBe("disabled");
    expect((await refusal(pool.call("s__t", {}))).code).toBe("unknown-tool");
    expect(s.spawns).toBe(0);
    await pool.sync([memoryRow("s")]);
    expect(pool.state()[0]?.status).toBe("ready");
  });

  it("stop() leaves a server idle with its last-known tools, and a call brings it back", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    await pool.sync([memoryRow("s")]);
    await pool.stop("s");
    expect(pool.state()[0]).toMatchObject({ status: "idle", stale: true });
    expect(pool.state()[0]?.pid).toBeUndefined();
    expect(pool.catalog()[0]).toMatchObject({ id: "s", stale: true });
    // Reconcile steps over a stopped server.
    await pool.sync([memoryRow("s")]);
    expect(s.spawns).toBe(1);
    expect(await pool.call("s__t", {})).toBe("t({})");
    expect(s.spawns).toBe(2);
    expect(pool.state()[0]?.stale).toBeUndefined();
  });

  it("reconnect() dials again, and refuses an unknown id", async () => {
    const s = scriptedServer([tool("t")]);
    const pool = track(makePool({ servers: { s: s.build } }));
    await pool.sync([memoryRow("s")]);
    await pool.reconnect("s");
    expect(s.spawns).toBe(2);
    expect(pool.state()[0]?.status).toBe("ready");
    expect((await refusal(pool.reconnect("nope"))).code).toBe("unknown-server");
  });

  it("backs off exponentially after failures and says crash-loop when a server keeps failing", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const pool = track(
      new McpPool({
        clientName: "t",
        log: {},
        crashBackoffMs: 1000,
        createTransport: () => {
          throw new Error("cannot start");
        },
      }),
    );
    await pool.sync([memoryRow("s")]);
    const first = pool.state()[0]!;
    expect(first).toMatchObject({ status: "error", retryAt: Date.now() + 1000 });
    expect(first.error).toMatch(/cannot start/);
    const held = await refusal(pool.call("s__t", {}));
    expect(held.code).toBe("backoff");
    vi.advanceTimersByTime(1000);
    expect((await refusal(pool.call("s__t", {}))).code).toBe("connect-failed");
    expect(pool.state()[0]).toMatchObject({ status: "error", retryAt: Date.now() + 2000 });
    vi.advanceTimersByTime(2000);
    await pool.sync([memoryRow("s")]);
    expect(pool.state()[0]).toMatchObject({ status: "crash-loop", retryAt: Date.now() + 4000 });
  });

  it("retries by itself when the backoff timer fires before the wall clock reaches retryAt", async () => {
    // Timers run on libuv's monotonic clock, truncated to the ms; Date.now() may still be a
    // ms short of retryAt when the revive fires. A wall clock that stands still is the far
    // end of that: each revive must dial anyway, so the third failure says crash-loop.
    vi.useFakeTimers({ toFake: ["Date"] });
    const pool = track(
      new McpPool({
        clientName: "t",
        log: {},
        crashBackoffMs: 5,
        createTransport: () => {
          throw new Error("cannot start");
        },
      }),
    );
    const third = new Promise<void>((resolve) => {
      let failures = 0;
      pool.onEvent((event) => {
        if (event.type === "connect-failed" && ++failures === 3) resolve();
      });
    });
    await pool.sync([memoryRow("s")]);
    await third;
    expect(pool.state()[0]?.status).toBe("crash-loop");
  });

  it("retries a trusted read-only call once when the connection dies under it", async () => {
    let calls = 0;
    const crashOnce = {
      annotations: { readOnlyHint: true },
      call: async (
        _args: Record<string, unknown>,
        server: import("@modelcontextprotocol/sdk/server/index.js").Server,
      ) => {
        calls += 1;
        if (calls === 1) {
          await server.close();
          return { content: [] };
        }
        return { content: [{ type: "text" as const, text: "second try" }] };
      },
    };
    const trusted = scriptedServer([tool("read", crashOnce)]);
    const pool = track(makePool({ servers: { s: trusted.build }, crashBackoffMs: 60_000 }));
    await pool.sync([memoryRow("s", "s", { trustAnnotations: true })]);
    expect(await pool.call("s__read", {})).toBe("second try");
    expect(trusted.spawns).toBe(2);

    calls = 0;
    const untrusted = scriptedServer([tool("read", crashOnce)]);
    const other = track(makePool({ servers: { s: untrusted.build }, crashBackoffMs: 60_000 }));
    await other.sync([memoryRow("s")]);
    expect((await refusal(other.call("s__read", {}))).code).toBe("server-crashed");
    expect(untrusted.spawns).toBe(1);
  });

  it("caps results at call, row and pool level, and returns the raw result uncut", async () => {
    const big = "a".repeat(600) + "z".repeat(300);
    const s = scriptedServer([
      tool("big", { call: () => ({ content: [{ type: "text", text: big }] }) }),
    ]);
    const pool = track(makePool({ servers: { s: s.build }, maxResultChars: 300 }));
    await pool.sync([memoryRow("s")]);
    const pooled = await pool.call("s__big", {});
    expect(pooled.length).toBeLessThanOrEqual(300);
    expect(pooled).toMatch(/\n\[truncated: kept \d+ of 900 chars\]\n/);
    expect(pooled.startsWith("aaa")).toBe(true);
    expect(pooled.endsWith("zzz")).toBe(true);
    expect(await pool.call("s__big", {}, { maxResultChars: 0 })).toBe(big);
    await pool.sync([memoryRow("s", "s", { maxResultChars: 100 })]);
    expect((await pool.call("s__big", {})).length).toBeLessThanOrEqual(100);
    expect(await pool.call("s__big", {}, { maxResultChars: 2000 })).toBe(big);
    const raw = await pool.call("s__big", {}, { raw: true });
    expect(raw.content).toEqual([{ type: "text", text: big }]);
  });

  it("throws a tool's isError result as tool-error, and returns it when raw", async () => {
    const pool = track(makePool({ servers: { echo: () => echoServer() } }));
    await pool.sync([memoryRow("echo")]);
    const error = await refusal(pool.call("echo__fail", { message: "nope" }));
    expect(error).toMatchObject({ code: "tool-error", message: "nope" });
    const raw = await pool.call("echo__fail", { message: "nope" }, { raw: true });
    expect(raw.isError).toBe(true);
  });

  it("emits call events with timing, size and refusal codes", async () => {
    const pool = track(makePool({ servers: { echo: () => echoServer() } }));
    const events: PoolEvent[] = [];
    pool.onEvent((e) => events.push(e));
    await pool.sync([memoryRow("echo")]);
    await pool.call("echo__echo", { text: "abc" });
    await refusal(pool.call("echo__missing", {}));
    const calls = events.filter((e) => e.type === "call");
    expect(calls[0]).toMatchObject({
      qualified: "echo__echo",
      serverId: "echo",
      toolName: "echo",
      ok: true,
      chars: 3,
      truncated: false,
    });
    expect(calls[1]).toMatchObject({ qualified: "echo__missing", ok: false, code: "unknown-tool" });
    expect(events.find((e) => e.type === "connect")).toMatchObject({ serverId: "echo", tools: 5 });
  });

  it("keeps a throwing listener from failing a call", async () => {
    const pool = track(makePool({ servers: { echo: () => echoServer() } }));
    pool.onEvent(() => {
      throw new Error("tracer bug");
    });
    await pool.sync([memoryRow("echo")]);
    expect(await pool.call("echo__echo", { text: "ok" })).toBe("ok");
  });

  it("caps descriptions at maxDescriptionChars, prefix included, and warns once per larger tool set", async () => {
    const info: string[] = [];
    const s = scriptedServer([tool("long", { description: "d".repeat(5000) }), tool("short")]);
    const pool = track(
      makePool({
        servers: { s: s.build },
        maxDescriptionChars: 1024,
        toolsTokenWarning: 100,
        log: { info: (m) => info.push(m) },
      }),
    );
    await pool.sync([memoryRow("s")]);
    const [long] = pool.tools();
    expect(long!.function.description.length).toBeLessThanOrEqual(1024);
    expect(long!.function.description).toMatch(/^\[s\] d+\n\[truncated/);
    expect(pool.state()[0]?.tools[0]?.description).toHaveLength(5000);
    pool.tools();
    pool.tools({ names: ["s__long"] });
    expect(info.filter((m) => m.includes("toolsTokenWarning"))).toHaveLength(1);
  });

  it("probes a row without keeping it, with a -probe client name, and reports failures instead of throwing", async () => {
    let clientName: string | undefined;
    const builder = () => {
      const server = echoServer({ instructions: "say hi" });
      server.oninitialized = () => (clientName = server.getClientVersion()?.name);
      return server;
    };
    const pool = track(makePool({ servers: { echo: builder }, clientName: "gateway" }));
    const ok = await pool.probe(memoryRow("echo"));
    expect(ok).toMatchObject({ ok: true, instructions: "say hi" });
    expect(ok.tools.map((t) => t.name)).toEqual(["echo", "add", "sleep", "fail", "pid"]);
    expect(ok.toolsFingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(clientName).toBe("gateway-probe");
    expect(pool.state()).toEqual([]);
    const bad = await pool.probe(memoryRow("missing"));
    expect(bad).toMatchObject({ ok: false, tools: [] });
    expect(bad.error).toMatch(/no server "missing"/);
  });

  it("refuses everything once closed", async () => {
    const pool = makePool({ servers: { echo: () => echoServer() } });
    await pool.sync([memoryRow("echo")]);
    await pool.close();
    expect((await refusal(pool.call("echo__echo", { text: "x" }))).code).toBe("closed");
    await expect(pool.sync([])).rejects.toMatchObject({ code: "closed" });
  });

  it("maps every error code to an HTTP status", () => {
    for (const code of POOL_ERROR_CODES) expect(httpStatusFor(code)).toBeGreaterThanOrEqual(400);
    expect(httpStatusFor("unknown-tool")).toBe(404);
    expect(httpStatusFor("invalid-arguments")).toBe(400);
    expect(httpStatusFor("backoff")).toBe(503);
    expect(httpStatusFor("timeout")).toBe(504);
    expect(httpStatusFor("connect-failed")).toBe(502);
  });
});
