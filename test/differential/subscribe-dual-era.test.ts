/**
 * A 2025-11-25 host subscribing to a resource of a server that speaks both eras, its row on
 * `auto` (the pool holds the row's own connection in 2026-07-28, whose face offers no
 * `resources/subscribe`): direct, the host's `initialize` opens a 2025-11-25 session that
 * does, and it hears the server's `notifications/resources/updated` there. Through the pool
 * the subscription is held on the host's own 2025-11-25 child, the one its calls go to, so
 * the same call that touches the resource makes the same update reach it, and after its
 * unsubscribe none. SDK v1 hosts with no capabilities and with sampling + elicitation, direct
 * and through the lean bridge and `--http`. test/fixtures/conformance-eras.mjs: the
 * conformance fixture in 2025-11-25, conformance-modern.mjs in 2026-07-28.
 */
import { describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { openHost, type Entry } from "./entries.js";
import type { CapabilitySet, Host } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";

const server = nodeServer("eras", [fixture("conformance-eras.mjs")]);

const WATCHED = "test://watched-resource";
/** The fixture's tool that sends the update to a subscribed session, and says whether it did. */
const TOUCH = { name: "touch_watched_resource", arguments: {} };
/** How long an update may take to reach the host after the call's answer, ms. */
const UPDATE_BOUND_MS = 15_000;

/** The updates `host` heard: once the call said it sent one, it is awaited (bounded). */
async function heard(host: Host, touched: Step, before: number): Promise<Step> {
  const sent = JSON.stringify(touched.result ?? null).includes('"updated"');
  if (sent) {
    await waitFor(() => host.updated.length > before, UPDATE_BOUND_MS, "the resource update");
  }
  return { op: "heard", result: host.updated.slice(before) };
}

describe("a 2025-11-25 host subscribes to a dual-era server's resource, its row on auto", () => {
  const home = testHome("mcpool-differential-subscribe-");
  pooling(home, [server]);

  async function session(capabilities: CapabilitySet, entry: Entry): Promise<Step[]> {
    const spec = { client: "v1" as const, capabilities, root: projectOf(home, "v1") };
    const host = await openHost(home, server, spec, entry);
    try {
      const steps: Step[] = [{ op: "era", result: host.era }];
      steps.push(await step(host, "resources/subscribe", { uri: WATCHED }));
      const touched = await step(host, "tools/call", TOUCH);
      steps.push(touched, await heard(host, touched, 0));
      steps.push(await step(host, "resources/unsubscribe", { uri: WATCHED }));
      const after = host.updated.length;
      const again = await step(host, "tools/call", TOUCH);
      steps.push(again, await heard(host, again, after));
      return steps;
    } finally {
      await host.close();
    }
  }

  it.each([
    ["none", "lean"],
    ["none", "http"],
    ["asks", "lean"],
    ["asks", "http"],
  ] as const)(
    "an SDK v1 host with capabilities %s through %s hears the update as direct",
    async (capabilities, entry) => {
      const direct = normalise(await session(capabilities, "direct"));
      expect(JSON.stringify(direct)).toContain(WATCHED);
      const pooled = normalise(await session(capabilities, entry));
      expect(compare(direct, pooled).join("\n")).toBe("");
    },
    120_000,
  );
});
