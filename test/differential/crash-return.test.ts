/**
 * A row's server that dies and is brought back by the pool: the pool goes on offering what
 * it listed meanwhile, so a host whose server comes back with the same lists has nothing to
 * be told — no list change at the crash nor at the return (direct, the host would have lost
 * its server; through the pool its lists never changed). A server back with other tools than
 * it listed before it died is a list change the host is told of, as any. An SDK v1 host of a
 * server with tools, resources and prompts (test/fixtures/roots-notices.mjs) lists and calls,
 * the server is killed, the pool brings it back, the host calls and lists again: through the
 * perl relay, the lean bridge, the full CLI's and `--http`.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { fixture, waitFor } from "../helpers/processes.js";
import { testHome } from "../helpers/daemon.js";
import { growOneTool, toolNames, withPlainHost, type Entry } from "./entries.js";
import { pooling } from "./run.js";
import { nodeServer } from "./servers.js";

const server = nodeServer("crasher", [fixture("roots-notices.mjs")]);
const ENTRIES: readonly Entry[] = ["perl", "lean", "cli", "http"];
/** A call that sends nothing unasked. */
const QUIET = { name: "roots", arguments: {} };

/** Kills row `id`'s server and resolves once the pool has another one up (bounded). */
async function crashAndReturn(pool: PoolClient, id: string): Promise<void> {
  const pid = (await pool.state()).find((s) => s.id === id)?.pid;
  expect(pid, `${id}'s pid`).toBeTypeOf("number");
  process.kill(pid as number, "SIGKILL");
  await waitFor(
    async () => {
      const state = (await pool.state()).find((s) => s.id === id);
      return state?.status === "ready" && state.pid !== undefined && state.pid !== pid;
    },
    30_000,
    `${id} to be back after its crash`,
  );
}

describe("a row's server that crashes and comes back", () => {
  const home = testHome("mcpool-differential-crash-return-");
  pooling(home, [server]);

  for (const entry of ENTRIES) {
    it(`a host through the ${entry} entry hears nothing of a server back with the same lists`, async () => {
      await withPlainHost(home, server, entry, async (host, pool) => {
        const tools = await host.request("tools/list", {});
        await host.request("tools/call", QUIET);
        await crashAndReturn(pool as PoolClient, server.id);
        await host.request("tools/call", QUIET);
        // A round trip after the return: a notice sent on it has come.
        expect(await host.request("tools/list", {})).toEqual(tools);
        expect(host.notices).toEqual([]);
      });
    });
  }

  it("tells the host when the server comes back with other tools than before it crashed", async () => {
    await withPlainHost(home, server, "lean", async (host, pool) => {
      const first = await growOneTool(host);
      await crashAndReturn(pool as PoolClient, server.id);
      // The new process lists its first tools again: the host is told, and lists them.
      await waitFor(() => host.notices?.length === 2, 15_000, "the returned server's change");
      expect(host.notices).toEqual([
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
      ]);
      expect(await toolNames(host)).toEqual(first);
    });
  });
});
