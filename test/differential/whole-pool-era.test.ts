/**
 * A dual-era host (SDK v2 on `auto`, as Claude Code negotiates) of an entry over the whole
 * pool, whose servers all speak only 2025-11-25 (server-everything): direct, its
 * `server/discover` fails and it talks 2025-11-25 — tools with their `execution`,
 * `resources/subscribe`, its tasks — so through the whole pool it must too: the same session
 * as direct, once the whole pool's own differences are read back (docs/bridge.md): tools and
 * prompts named `<slug>__<name>`, mcpool's serverInfo, capabilities and instructions — but
 * the `tasks` capability the server's own, and its tasks relayed.
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, httpBridge, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { openHost } from "./entries.js";
import { connectHost, type Host, type HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers } from "./servers.js";
import { runSession, type Step } from "./session.js";
import { asWholePool, named } from "./whole-pool.js";

describe("a dual-era host of the whole pool whose servers speak only 2025-11-25", () => {
  const home = testHome("mcpool-differential-whole-pool-");
  const server = matrixServers(home.dir).find((s) => s.id === "everything")!;
  let direct: Step[] = [];
  const spec = (): HostSpec => ({
    client: "v2",
    capabilities: "asks",
    root: projectOf(home, "v2"),
  });

  pooling(home, [server]);

  beforeAll(async () => {
    const host = await openHost(home, server, spec(), "direct");
    try {
      direct = normalise(asWholePool(await runSession(host, server.script), server.id));
    } finally {
      await host.close();
    }
  }, 120_000);

  async function pooled(open: () => Promise<Host>): Promise<Step[]> {
    const host = await open();
    try {
      const steps = await runSession(host, named(server.script, server.id));
      return normalise(asWholePool(steps, server.id));
    } finally {
      await host.close();
    }
  }

  it("is served 2025-11-25 through the lean bridge, as direct", async () => {
    const args = ["--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the pool's MCP socket");
    const steps = await pooled(() =>
      connectHost(spec(), {
        kind: "stdio",
        ...bridgeCommand(home, args, "lean"),
        env: stringEnv(home.env),
      }),
    );
    expect(direct[0]).toMatchObject({ op: "handshake", result: { era: "legacy" } });
    expect(direct.some((s) => s.op === "tasks/result")).toBe(true);
    expect(compare(direct, steps, false).join("\n")).toBe("");
  }, 180_000);

  it("is served 2025-11-25 through --http, as direct", async () => {
    const bridge = await httpBridge(home, ["--socket", home.socketPath]);
    try {
      const steps = await pooled(() =>
        connectHost(spec(), { kind: "http", url: bridge.url, token: bridge.token }),
      );
      expect(compare(direct, steps, false).join("\n")).toBe("");
    } finally {
      await bridge.stop();
    }
  }, 180_000);
});
