/**
 * Lazy rows an agent can find: in a 200-row config where 190 rows are lazy, the daemon
 * learns each lazy row's tools once (it starts the server, lists it, and stops it again),
 * keeps them in the tools cache, and `mcpool tools`, `mcpool search` and an agent's catalog
 * show them with nothing of theirs left running; a call to one starts its server. A daemon
 * started again over the same cache starts none of them to know their tools.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import {
  client as poolClient,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { childrenOf, fixture, waitFor } from "../helpers/processes.js";

const EAGER = 10;
const LAZY = 190;
/** Bound on learning 190 servers a few at a time on a busy two-core machine. */
const LEARN_BOUND_MS = 240_000;
/**
 * Between two looks at the catalog or the state of 200 rows while the daemon learns: each
 * look is work for the daemon that is doing the learning, on the same two cores.
 */
const LOOK_EVERY_MS = 250;

/**
 * Each row a server in plain JSON-RPC lines (no SDK to load: a start costs about 0.08 CPU-s
 * against 0.28 for an SDK server, and each row starts twice, its era found on a spare child
 * first): 200 of them are what this file spends its time on, not what it tests.
 */
function rows(): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  const row = { command: process.execPath, args: [fixture("strict-legacy.mjs")] };
  for (let i = 0; i < EAGER; i++) servers[`eager-${i}`] = row;
  for (let i = 0; i < LAZY; i++) servers[`lazy-${i}`] = { ...row, lazy: true };
  return servers;
}

/** The rows whose `echo` tool the agent's catalog offers. */
async function offered(pool: PoolClient): Promise<Set<string>> {
  const catalog = await pool.catalog();
  return new Set(
    catalog.filter((s) => s.tools.some((t) => t.name === `${s.id}__echo`)).map((s) => s.id),
  );
}

describe("a 200-row config with 190 lazy rows", () => {
  it("learns every lazy row's tools once, shows them everywhere, stops them, and a call starts one", async () => {
    const home = testHome("mcpool-lazy-");
    let daemon: RunningDaemon | undefined;
    let pool: PoolClient | undefined;
    try {
      home.writeConfig(rows());
      daemon = await startDaemon(home);
      pool = await poolClient(home, "agent");
      const agent = pool;
      await waitFor(
        async () => (await offered(agent)).size === EAGER + LAZY,
        LEARN_BOUND_MS,
        "every row's tools in the catalog",
        LOOK_EVERY_MS,
      );
      // Learned and stopped: only the eager rows' servers run.
      await waitFor(
        async () =>
          (await agent.state()).filter((s) => s.id.startsWith("lazy-") && s.pid).length === 0,
        LEARN_BOUND_MS,
        "the lazy rows' servers to stop",
        LOOK_EVERY_MS,
      );
      const states = await agent.state();
      for (const s of states.filter((s) => s.id.startsWith("lazy-"))) {
        expect(s.status, s.id).toBe("idle");
      }

      const tools = runCli(home, "tools");
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toContain("lazy-189__echo");
      const search = runCli(home, "search", "echo", "--server", "lazy-42", "--json");
      expect(search.code, search.stderr).toBe(0);
      expect(search.stdout).toContain("lazy-42__echo");

      const call = runCli(home, "call", "lazy-100__echo", '{"text":"woken"}');
      expect(call.code, call.stderr).toBe(0);
      expect(call.stdout.trim()).toBe("woken");
      expect((await agent.state()).find((s) => s.id === "lazy-100")?.status).toBe("ready");
      await pool.close();
      pool = undefined;
      await daemon.stop();

      // Learned once: a new daemon over the same cache knows them at once, starting none.
      daemon = await startDaemon(home);
      pool = await poolClient(home, "again");
      expect((await offered(pool)).size).toBe(EAGER + LAZY);
      expect((await pool.state()).filter((s) => s.id.startsWith("lazy-") && s.pid)).toEqual([]);
      expect(childrenOf(daemon.pid).length).toBeLessThanOrEqual(EAGER);
    } finally {
      await pool?.close();
      await daemon?.stop();
      home.remove();
    }
  }, 600_000);
});
