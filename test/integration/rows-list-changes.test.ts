/**
 * What a host of the whole pool lists follows `mcp.json`: a row taken out of it takes its
 * tools out of the host's list, and the host is told (`notifications/tools/list_changed`),
 * whether the row's server was running (its connection closes) or asleep (a lazy row: no
 * connection, so no close — only the reconcile says so); a row put in is told as well, once
 * its tools are there. Through the lean bridge, as `mcpool wire` writes the pool's entry.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connect, type PoolClient } from "mcpool-client";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { startDaemon, testHome, type TestHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { connectHost } from "../differential/host.js";

const BOUND_MS = 20_000;
const echo = { command: process.execPath, args: [fixture("echo.mjs")] };

/** Resolves once `test` holds of the pool's rows (bounded). */
async function rowsAre(
  pool: PoolClient,
  test: (ids: Map<string, string>) => boolean,
  what: string,
): Promise<void> {
  await waitFor(
    async () => test(new Map((await pool.state()).map((s) => [s.id, s.status]))),
    BOUND_MS,
    what,
  );
}

describe("a row taken out of mcp.json, or put in, on the whole pool", () => {
  it.each([
    ["running", {}],
    ["asleep (lazy)", { lazy: true }],
  ] as const)("is a list change the host is told of: a row %s", async (_, row) => {
    const home: TestHome = testHome("mcpool-rows-list-changes-");
    const rows = { stays: echo, goes: { ...echo, ...row } };
    home.writeConfig(rows);
    const daemon = await startDaemon(home);
    const pool = await connect({ socketPath: home.socketPath, clientName: "rows-watch" });
    try {
      // The lazy row's tools are learnt once (its server started, listed and let go).
      await rowsAre(
        pool,
        (ids) =>
          ids.get("stays") === "ready" && ids.get("goes") === ("lazy" in row ? "idle" : "ready"),
        "both rows settled",
      );
      await waitFor(() => existsSync(scopeSocket(home, [])), BOUND_MS, "the pool's MCP socket");
      const host = await connectHost(
        { client: "v1", capabilities: "none", root: home.dir },
        { kind: "stdio", ...bridgeCommand(home, [], "lean"), env: stringEnv(home.env) },
      );
      const told = (): number =>
        host.notices?.filter((n) => n === "notifications/tools/list_changed").length ?? 0;
      const listed = async (): Promise<string[]> =>
        ((await host.request("tools/list", {})) as { tools: { name: string }[] }).tools
          .map((tool) => tool.name.split("__")[0]!)
          .filter((id, i, all) => all.indexOf(id) === i);
      try {
        expect(await listed()).toEqual(["stays", "goes"]);
        home.writeConfig({ stays: echo });
        await waitFor(() => told() >= 1, BOUND_MS, "the host to be told the row went");
        expect(await listed()).toEqual(["stays"]);
        const before = told();
        home.writeConfig(rows);
        await waitFor(() => told() > before, BOUND_MS, "the host to be told the row came");
        await waitFor(
          async () => (await listed()).includes("goes"),
          BOUND_MS,
          "the row's tools listed again",
        );
      } finally {
        await host.close();
      }
    } finally {
      await pool.close();
      await daemon.stop();
      home.remove();
    }
  });
});
