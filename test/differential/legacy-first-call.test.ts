/**
 * A 2025-11-25 host's first request on the whole pool is a call, before any listing, to a
 * server that speaks only 2026-07-28 with private lists (SDK v2's default), on a fresh
 * daemon: the pool first tries a legacy child for that host (as it serves a dual-era
 * server's legacy hosts), the server refuses its `initialize`, and the host is served by the
 * row's connection, bridged, from then on. The call that found it out is one of those: it is
 * answered as a dual-era host's call of the same tool is answered direct (once the modern
 * envelope, which a legacy host never meets, is left out), not with the refused child's
 * error. Direct, a legacy host cannot speak to such a server at all: the oracle is the call's
 * answer to a host that can.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";
import { openHost } from "./entries.js";
import { connectHost, type HostSpec } from "./host.js";
import { compare, normalise, withoutModernEnvelope } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers } from "./servers.js";
import { step, type Step } from "./session.js";

const CALL = { name: "echo", arguments: { text: "first" } };

describe("a legacy host's first call, before any listing, to a 2026-07-28-only server", () => {
  const home = testHome("mcpool-differential-first-call-");
  const server = matrixServers(home.dir).find((s) => s.id === "modern")!;
  pooling(home, [server]);

  it("is answered as the server answers it, not with the refused legacy child's error", async () => {
    const spec = (client: "v1" | "v2"): HostSpec => ({
      client,
      capabilities: "none",
      root: projectOf(home, client),
    });
    const direct = await openHost(home, server, spec("v2"), "direct");
    let want: Step[];
    try {
      want = withoutModernEnvelope([
        { op: "handshake", result: { era: "legacy" } },
        await step(direct, "tools/call", CALL),
      ]);
    } finally {
      await direct.close();
    }
    const args = ["--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the pool's MCP socket");
    const host = await connectHost(spec("v1"), {
      kind: "stdio",
      ...bridgeCommand(home, args, "lean"),
      env: stringEnv(home.env),
    });
    try {
      const named = { ...CALL, name: `${server.id}__${CALL.name}` };
      const first = await step(host, "tools/call", named);
      const again = await step(host, "tools/call", named);
      const got = (called: Step): Step[] => [
        { op: "handshake", result: { era: host.era } },
        { ...called, params: CALL },
      ];
      expect(compare(normalise(want), normalise(got(first)), false).join("\n")).toBe("");
      expect(compare(normalise(want), normalise(got(again)), false).join("\n")).toBe("");
    } finally {
      await host.close();
    }
  }, 120_000);
});
