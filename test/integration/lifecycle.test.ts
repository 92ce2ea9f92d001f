import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient, PoolEvent } from "mcpool-client";
import { type RunningDaemon, type TestHome } from "../helpers/daemon.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import { alive, childrenOf, fixture, nextMatching, waitFor } from "../helpers/processes.js";

async function up(
  fleet: Fleet,
  h: TestHome,
): Promise<{ daemon: RunningDaemon; agent: PoolClient }> {
  const daemon = await fleet.daemon(h);
  const agent = await fleet.agent(h);
  return { daemon, agent };
}

const echo = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [fixture("echo.mjs")],
  ...extra,
});

/**
 * A row running a server in plain JSON-RPC lines: no SDK to load, a start costs about
 * 0.08 CPU-s against 0.28 for echo.mjs, where fifty rows each start twice (a spare child
 * finds the era first) and the servers are not what is tested.
 */
const plain = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [fixture("strict-legacy.mjs")],
  ...extra,
});

async function pidsWhenReady(agent: PoolClient, count: number): Promise<Map<string, number>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await agent.state();
    const ready = state.filter((s) => s.status === "ready" && s.pid !== undefined);
    if (ready.length === count) return new Map(ready.map((s) => [s.id, s.pid!]));
    if (Date.now() > deadline) throw new Error(`only ${ready.length} of ${count} ready`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent("lifecycle through the daemon", { timeout: 90_000 }, () => {
  it("answers a lazy daemon's first catalog from a warm tools cache with no child spawned", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig(
      {
        one: echo(),
        two: echo({ env: { FIXTURE_TOOLS: "3", SECRET_TOKEN: "canary-tools-cache" } }),
      },
      { mcpool: { lazy: true } },
    );
    // The first daemon learns each lazy row's tools (start, list, stop) into the cache.
    const first = await up(fleet, h);
    await first.agent.call("one__echo", { text: "warm" });
    await first.agent.call("two__echo", { text: "warm" });
    const cacheDir = join(h.env.XDG_DATA_HOME!, "mcpool", "tools-cache");
    await waitFor(
      () => {
        try {
          return readdirSync(cacheDir).filter((f) => f.endsWith(".json")).length === 2;
        } catch {
          return false;
        }
      },
      10_000,
      "the tools cache to be written",
    );
    for (const file of readdirSync(cacheDir)) {
      expect(statSync(join(cacheDir, file)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(cacheDir, file), "utf8")).not.toContain("canary-tools-cache");
    }
    await first.agent.close();
    expect(await first.daemon.stop()).toBe(0);

    const second = await up(fleet, h);
    const catalog = await second.agent.catalog();
    expect(childrenOf(second.daemon.pid)).toEqual([]);
    expect(catalog.map((s) => [s.id, s.stale, s.tools.length])).toEqual([
      ["one", true, 4],
      ["two", true, 7],
    ]);
    expect(await second.agent.call("two__tool_2", {})).toBe("tool_2");
    expect(childrenOf(second.daemon.pid)).toHaveLength(1);
  });

  it("restarts exactly the edited row of fifty, leaving 49 pids unchanged", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    const rows = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`s${i}`, plain()]));
    h.writeConfig(rows);
    const { agent } = await up(fleet, h);
    const before = await pidsWhenReady(agent, 50);
    const reconnected = nextMatching<PoolEvent>(
      (l) => agent.onEvent(l),
      (e) => e.type === "connect" && e.serverId === "s17",
      30_000,
    );
    await waitFor(() => agent.daemon !== undefined, 5000, "hello");
    h.writeConfig({ ...rows, s17: plain({ env: { EDITED: "yes" } }) });
    await reconnected;
    const after = await pidsWhenReady(agent, 50);
    const changed = [...before].filter(([id, pid]) => after.get(id) !== pid).map(([id]) => id);
    expect(changed).toEqual(["s17"]);
    await waitFor(() => !alive(before.get("s17")!), 10_000, "the old s17 child to go");
  }, 120_000);

  it("finishes a slow call started before an edit that restarts its server", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    const gate = { command: process.execPath, args: [fixture("gate.mjs")] };
    h.writeConfig({ echo: gate });
    const { agent } = await up(fleet, h);
    const [oldPid] = (await pidsWhenReady(agent, 1)).values();
    // The call is held until the test opens the gate: however slow the machine, it is still
    // in flight when the new generation is up.
    const open = join(h.dir, "gate-open");
    const slow = agent.call("echo__wait", { path: open });
    await waitFor(async () => ((await agent.state())[0]?.inflight ?? 0) > 0, 10_000, "the call");
    const reconnected = nextMatching<PoolEvent>(
      (l) => agent.onEvent(l),
      (e) => e.type === "connect" && e.serverId === "echo",
      20_000,
    );
    h.writeConfig({ echo: { ...gate, env: { GENERATION: "2" } } });
    await reconnected;
    const newPid = Number(await agent.call("echo__pid", {}));
    expect(newPid).not.toBe(oldPid);
    // The old generation drains: alive while its call runs, gone once it is answered.
    expect(alive(oldPid!)).toBe(true);
    writeFileSync(open, "");
    expect(await slow).toBe(`opened ${open}`);
    await waitFor(() => !alive(oldPid!), 10_000, "the old generation to go");
    expect(alive(newPid)).toBe(true);
  });
});
