/**
 * Host profiles in the pool itself: a row whose listing does not
 * depend on its client's capabilities is served to every profile by its own connection —
 * found once, then remembered — and what such a host cannot answer is refused for it, never
 * answered on its behalf; a call without a profile is answered as before.
 */
import { describe, expect, it } from "vitest";
import { McpPool, type McpServerConfig } from "../../src/index.js";
import type { CachedTools, ToolsCacheStore } from "../../src/pool/catalog/tools-cache.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { childCountingPool } from "../helpers/stdio-pool.js";

const row: McpServerConfig = {
  id: "interactive",
  transport: "stdio",
  command: process.execPath,
  args: [fixture("interactive.mjs")],
};

describe("a row whose tools do not depend on the host's capabilities", () => {
  const { spawned, open: counted } = childCountingPool();

  const open = async (toolsCache?: ToolsCacheStore): Promise<McpPool> => {
    const pool = counted({
      ...(toolsCache ? { toolsCache } : {}),
      connectTimeoutMs: 20_000,
      onElicit: () => ({ action: "accept", content: { name: "the pool" } }),
      onSample: () => ({
        model: "pool",
        role: "assistant",
        content: { type: "text", text: "the pool's" },
      }),
    });
    await pool.sync([row]);
    return pool;
  };

  it("serves a host declaring nothing from the row's own child once its list is found the same", async () => {
    const pool = await open();
    const own = pool.tools().map((tool) => tool.function.name);
    expect(await pool.hostTools({})).toEqual(pool.tools());
    // The row's spare child that found its era, its own, and the profile's, which
    // takes the row's era and starts no spare of its own.
    expect(spawned).toHaveLength(3);
    // The child that found it out ends; the next listings and calls spawn nothing.
    await waitFor(() => alive(spawned[2] as number) === false, 15_000, "the probe child to end");
    expect((await pool.hostTools({})).map((tool) => tool.function.name)).toEqual(own);
    await pool.call("interactive__caps", {}, { profile: {} });
    expect(spawned).toHaveLength(3);
    expect(pool.state()[0]?.profiles).toBeUndefined();
  });

  it("refuses for a host without elicitation the question its server asks, as that host would", async () => {
    const pool = await open();
    await pool.hostTools({});
    const refused = await pool
      .call("interactive__ask", { tag: "bare" }, { profile: {} })
      .then(String, (error: Error) => error.message);
    expect(refused).not.toContain("the pool");
    expect(refused).not.toMatch(/"action":"(decline|cancel)"/);
    // A call that names no profile is the pool's own: its handler answers.
    expect(await pool.call("interactive__ask", { tag: "own" })).toContain("the pool");
  });

  it("refuses for a host without sampling the request its server sends", async () => {
    const pool = await open();
    await pool.hostTools({}, { servers: ["interactive"] });
    const refused = await pool.call("interactive__sample", { tag: "bare" }, { profile: {} });
    expect(refused).toMatch(/bare refused -32601/);
    expect(await pool.call("interactive__sample", { tag: "own" })).toContain("the pool's");
  });

  it("remembers in the tools cache that the list is the same, so a restarted pool finds it out no more", async () => {
    const stored = new Map<string, CachedTools>();
    const store: ToolsCacheStore = {
      load: (id) => stored.get(id),
      save: (id, cached) => void stored.set(id, structuredClone(cached)),
    };
    const first = await open(store);
    await first.hostTools({});
    await waitFor(() => stored.get("interactive")?.profiles !== undefined, 15_000, "the memo");
    expect(stored.get("interactive")?.profiles).toEqual({ same: ["none"] });
    await first.close();
    const before = spawned.length;
    const second = await open(store);
    await second.hostTools({});
    await second.call("interactive__caps", {}, { profile: {} });
    // The restarted pool's own child, and nothing to find out.
    expect(spawned.length - before).toBe(1);
  });
});

describe("a modern row whose list is public: no child per profile", () => {
  const { spawned, open: counted } = childCountingPool();

  it("serves every host profile from the row's own child, each request naming its host's capabilities", async () => {
    const pool = counted({
      connectTimeoutMs: 20_000,
      // What the daemon declares: a host without them is a profile of its own.
      onElicit: () => ({ action: "decline" }),
      onSample: () => ({ model: "pool", role: "assistant", content: { type: "text", text: "" } }),
    });
    // Pinned: the era is known at once, and no spare child is counted.
    await pool.sync([
      {
        id: "modern",
        transport: "stdio",
        command: process.execPath,
        args: [fixture("modern-stdio.mjs")],
        env: { MODERN_CACHE_SCOPE: "public" },
        protocol: "2026-07-28",
      },
    ]);
    expect(spawned).toHaveLength(1);
    const bare = await pool.hostTools({});
    const asking = await pool.hostTools({ sampling: true, elicitation: ["form"] });
    expect(bare.map((tool) => tool.function.name)).toContain("modern__whoami");
    expect(asking.map((tool) => tool.function.name)).toEqual(
      bare.map((tool) => tool.function.name),
    );
    const seen = async (profile: { sampling?: true }): Promise<unknown> =>
      (
        JSON.parse(String(await pool!.call("modern__whoami", {}, { profile }))) as {
          capabilities: unknown;
        }
      ).capabilities;
    expect(await seen({})).toEqual({});
    expect(await seen({ sampling: true })).toMatchObject({ sampling: {} });
    // One child served them all; none for a profile.
    expect(spawned).toHaveLength(1);
    expect(pool.state()[0]?.profiles).toBeUndefined();
  });
});

describe("a project's child whose server asks its roots a while after it starts", () => {
  const { open: counted } = childCountingPool();

  it("serves the first call once the server has taken the project's roots in, not before", async () => {
    const pool = counted({
      connectTimeoutMs: 20_000,
    });
    await pool.sync([
      {
        id: "late",
        transport: "stdio",
        command: process.execPath,
        args: [fixture("late-roots.mjs")],
        protocol: "legacy",
      },
    ]);
    // The first project's child finds out that the server asks, late (direct, a call made
    // before that meets "none yet" as well); the pool keeps it.
    const first = { roots: [{ uri: "file:///work/first" }] };
    await pool.hostTools(first);
    await waitFor(
      () => pool?.state()[0]?.profiles?.some((child) => child.asksRoots === true) === true,
      15_000,
      "the server to ask the first project's roots",
    );
    const project = { roots: [{ uri: "file:///work/alpha" }] };
    // The first use of the next project's child: listed, then called at once.
    expect((await pool.hostTools(project)).map((tool) => tool.function.name)).toEqual([
      "late__roots",
    ]);
    expect(await pool.call("late__roots", {}, { profile: project })).toBe("file:///work/alpha");
  });
});
