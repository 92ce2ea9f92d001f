/**
 * A dual-era host (SDK v2 on `auto`, as Claude Code negotiates) of the whole pool, or of a
 * bridge over several servers, whose servers speak different eras: server-everything only 2025-11-25, the modern fixture only
 * 2026-07-28. Direct, the host talks 2025-11-25 with server-everything and 2026-07-28 with
 * the other; one connection speaks one era, and serving it in 2025-11-25 would shut a host
 * that speaks only 2026-07-28 out of the bridge, so the pool serves it the era it opens with.
 * Against server-everything it then gets what it gets direct, once the whole pool's own
 * names and face are read back (whole-pool.ts) and the era's envelope set aside
 * (normalise.ts ERA_ENVELOPE), less exactly what 2026-07-28 has no place for
 * (normalise.ts MODERN_ERA_LOSSES: the tools' `execution`, the `tasks` capability and the
 * task steps, a url elicitation's `elicitationId`). Its subscription to a resource is the era's own — a listen naming the URI —
 * and the server's update reaches it there as the subscribed update reaches it direct.
 */
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, httpBridge, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { openHost } from "./entries.js";
import { connectHost, type Host, type HostSpec, type Target } from "./host.js";
import { compare, normalise, withoutLegacyOnly } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers, nodeServer } from "./servers.js";
import { runSession, step, type Step } from "./session.js";
import { asWholePool, named, oneServerOf } from "./whole-pool.js";

/** How long a server's update may take to reach a subscriber (it sends one at once). */
const UPDATE_BOUND_MS = 20_000;

/**
 * A server that sends an update of a resource as it takes a subscription to it
 * (test/fixtures/log-levels.mjs): the update is the server's, whichever of the pool's
 * connections holds the subscription.
 */
const notes = nodeServer("notes", [fixture("log-levels.mjs"), "--update-on-subscribe"]);

/**
 * The first resource subscribed to, the server's update of it awaited (bounded: what came is
 * the step), the subscription let go.
 */
async function updateReaches(host: Host): Promise<Step[]> {
  const listed = (await host.request("resources/list", {})) as { resources: { uri: string }[] };
  const uri = listed.resources[0]!.uri;
  const steps = [await step(host, "resources/subscribe", { uri })];
  const seen = await waitFor(() => host.updated.includes(uri), UPDATE_BOUND_MS, "").then(
    () => ({ uri }),
    () => `none within ${UPDATE_BOUND_MS} ms`,
  );
  steps.push({ op: "notifications/resources/updated", result: seen });
  steps.push(await step(host, "resources/unsubscribe", { uri }));
  return steps;
}

describe("a dual-era host of the whole pool whose servers speak different eras", () => {
  const home = testHome("mcpool-differential-mixed-era-");
  const servers = matrixServers(home.dir);
  const everything = servers.find((s) => s.id === "everything")!;
  const modern = servers.find((s) => s.id === "modern")!;
  const slug = everything.id;
  let direct: Step[] = [];
  let directUpdate: Step[] = [];
  const spec = (): HostSpec => ({
    client: "v2",
    capabilities: "asks",
    root: projectOf(home, "v2"),
  });

  pooling(home, [everything, modern, notes]);

  beforeAll(async () => {
    const host = await openHost(home, everything, spec(), "direct");
    try {
      direct = normalise(
        withoutLegacyOnly(asWholePool(await runSession(host, everything.script), slug)),
      );
    } finally {
      await host.close();
    }
    const subscriber = await openHost(home, notes, spec(), "direct");
    try {
      expect(subscriber.era).toBe("legacy");
      directUpdate = normalise(await updateReaches(subscriber));
    } finally {
      await subscriber.close();
    }
  }, 180_000);

  /** The session and the subscription through `target`, each compared with direct. */
  async function asDirect(target: Target): Promise<void> {
    const host = await connectHost(spec(), target);
    try {
      expect(host.era).toBe("modern");
      const steps = await runSession(oneServerOf(host, slug), named(everything.script, slug));
      expect(compare(direct, normalise(asWholePool(steps, slug))).join("\n")).toBe("");
      const update = normalise(await updateReaches(oneServerOf(host, notes.id)));
      expect(compare(directUpdate, update).join("\n")).toBe("");
    } finally {
      await host.close();
    }
  }

  it("is served 2026-07-28 through the lean bridge: as direct, less what 2026-07-28 has no place for", async () => {
    const args = ["--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the pool's MCP socket");
    expect(direct[0]).toMatchObject({ op: "handshake", result: { era: "legacy" } });
    await asDirect({
      kind: "stdio",
      ...bridgeCommand(home, args, "lean"),
      env: stringEnv(home.env),
    });
  }, 240_000);

  it("is served 2026-07-28 through --servers a,b,c (the SDK bridge): as direct, less what 2026-07-28 has no place for", async () => {
    const scope = [everything.id, modern.id, notes.id].join(",");
    const args = ["--servers", scope, "--socket", home.socketPath];
    await asDirect({
      kind: "stdio",
      ...bridgeCommand(home, args, "sdk"),
      env: stringEnv(home.env),
    });
  }, 240_000);

  it("is served 2026-07-28 through --http: as direct, less what 2026-07-28 has no place for", async () => {
    const bridge = await httpBridge(home, ["--socket", home.socketPath]);
    try {
      await asDirect({ kind: "http", url: bridge.url, token: bridge.token });
    } finally {
      await bridge.stop();
    }
  }, 240_000);
});
