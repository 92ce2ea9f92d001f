/**
 * A row's server that goes idle and is woken by the host's next call is the pool's own
 * business: direct the host's server never sleeps, so the host hears nothing of it — no list
 * change (its lists are what they were: the pool offers the last-known tools while the row
 * sleeps, and says a list changed when the woken server lists something else). An SDK v1 host
 * of a server with tools, resources and prompts (test/fixtures/roots-notices.mjs) calls, the
 * row's server ends idle, the host calls again: its notices as direct (none), through the perl
 * relay, the lean bridge, the full CLI's and `--http`. And a woken server that lists other
 * tools than it did before it slept is a list change the host is told of.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { fixture, waitFor } from "../helpers/processes.js";
import { testHome } from "../helpers/daemon.js";
import { growOneTool, toolNames, withPlainHost, type Entry } from "./entries.js";
import { pooling } from "./run.js";
import { nodeServer } from "./servers.js";

const server = nodeServer("sleeper", [fixture("roots-notices.mjs")]);
const ENTRIES: readonly Entry[] = ["perl", "lean", "cli", "http"];
/** How long the row's server stays up with nothing to do, ms. */
const IDLE_MS = 1_500;
/** A call that sends nothing unasked. */
const QUIET = { name: "roots", arguments: {} };

/** Resolves once row `id`'s status is `status` (bounded). */
async function rowIs(pool: PoolClient, id: string, status: string): Promise<void> {
  await waitFor(
    async () => (await pool.state()).find((s) => s.id === id)?.status === status,
    20_000,
    `${id} to be ${status}`,
  );
}

describe("a row's server that sleeps and is woken, against direct", () => {
  const home = testHome("mcpool-differential-idle-wake-");
  pooling(home, [server], () => ({ idleTimeoutMs: IDLE_MS }));

  /** The host's calls and what it heard unasked, the row put to sleep between them when pooled. */
  async function session(entry: Entry): Promise<Record<string, unknown>> {
    return withPlainHost(home, server, entry, async (host, pool) => {
      const tools = await host.request("tools/list", {});
      const first = await host.request("tools/call", QUIET);
      if (pool !== undefined) await rowIs(pool, server.id, "idle");
      const second = await host.request("tools/call", QUIET);
      if (pool !== undefined) await rowIs(pool, server.id, "ready");
      // A round trip after the wake-up: a notice sent on it has come.
      const again = await host.request("tools/list", {});
      return { tools, first, second, again, notices: host.notices };
    });
  }

  for (const entry of ENTRIES) {
    it(`a host through the ${entry} entry hears of no sleep or wake-up`, async () => {
      const direct = await session("direct");
      expect(direct.notices).toEqual([]);
      expect(await session(entry)).toEqual(direct);
    });
  }

  it("tells the host when the woken server lists other tools than before it slept", async () => {
    await withPlainHost(home, server, "lean", async (host, pool) => {
      const first = await growOneTool(host);
      await rowIs(pool as PoolClient, server.id, "idle");
      await host.request("tools/call", QUIET);
      // The woken process lists its first tools again: the host is told, and lists them.
      await waitFor(() => host.notices?.length === 2, 15_000, "the woken server's list change");
      expect(host.notices).toEqual([
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
      ]);
      expect(await toolNames(host)).toEqual(first);
    });
  });
});
