/**
 * What a 2025-11-25 host is told it talks to, of a server that speaks both eras whose row is
 * on `auto` (the pool holds the row's own connection in 2026-07-28, and serves such a host
 * from a 2025-11-25 child of its own): direct, its `initialize` opens a 2025-11-25 session,
 * and the answer names that face's serverInfo, capabilities and instructions — where they
 * differ from the 2026-07-28 face's (here `resources.subscribe`, and the server's name), a host
 * that reads them before it asks sees less than direct if it is told the row's. Compared
 * direct and through the SDK bridge (`mcpool bridge --server ID`), the lean bridge and the
 * perl relay; and again after a restart of the daemon, when what the 2025-11-25 face declares
 * is known from the tools cache before any child of that era runs.
 * test/fixtures/conformance-eras.mjs: the conformance fixture in 2025-11-25,
 * conformance-modern.mjs in 2026-07-28.
 */
import { describe, expect, it } from "vitest";
import { connect } from "mcpool-client";
import { testHome } from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";
import { openHost, type Entry } from "./entries.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { nodeServer } from "./servers.js";
import type { Step } from "./session.js";

const server = nodeServer("eras", [fixture("conformance-eras.mjs")]);

describe("a 2025-11-25 host's handshake with a dual-era server, its row on auto", () => {
  const home = testHome("mcpool-differential-legacy-face-");
  const pooled = pooling(home, [server]);

  async function handshake(entry: Entry): Promise<Step[]> {
    const spec = {
      client: "v1" as const,
      capabilities: "none" as const,
      root: projectOf(home, "v1"),
    };
    const host = await openHost(home, server, spec, entry);
    try {
      const told = {
        serverInfo: host.serverInfo,
        capabilities: host.serverCapabilities,
        instructions: host.instructions,
      };
      return [
        { op: "era", result: host.era },
        { op: "initialize", result: told },
      ];
    } finally {
      await host.close();
    }
  }

  it.each(["cli", "lean", "perl"] as const)(
    "an SDK v1 host through %s is told what the server declares in its era, as direct",
    async (entry) => {
      const direct = normalise(await handshake("direct"));
      expect(JSON.stringify(direct)).toContain('"subscribe":true');
      const through = normalise(await handshake(entry));
      expect(compare(direct, through).join("\n")).toBe("");
    },
    120_000,
  );

  it("after a restart the 2025-11-25 face is known from the tools cache, and told as direct", async () => {
    const direct = normalise(await handshake("direct"));
    // Learnt by this daemon (if no case before did it), then kept across its restart.
    await handshake("lean");
    await pooled.restart();
    const client = await connect({
      socketPath: home.socketPath,
      clientName: "differential",
      autoStart: false,
    });
    try {
      const state = (await client.state()).find((s) => s.id === server.id);
      expect(state?.era).toBe("modern");
      expect(state?.legacyFace?.known).toBe(true);
      expect(state?.profiles ?? []).toEqual([]);
    } finally {
      await client.close();
    }
    const through = normalise(await handshake("lean"));
    expect(compare(direct, through).join("\n")).toBe("");
  }, 120_000);
});
