/**
 * A host whose calls go to a child of its own (its capabilities or its roots differ from the
 * pool's) subscribes to a resource of server-everything, whose `toggle-subscriber-updates`
 * turns updates on for the session that calls it alone (it sends one at once, then one every
 * five seconds): direct, the host hears the update. Through the pool its subscription must be
 * held where its calls go, on that child, or the process that sends the updates never heard
 * the subscribe and the process that heard it never sends. SDK v1 hosts with no capabilities
 * and with roots, direct and through the lean bridge and `--http`; the updates are turned off
 * again at the end, so the shared child is left as found.
 */
import { describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { referenceServer, waitFor } from "../helpers/processes.js";
import { openHost, type Entry } from "./entries.js";
import type { CapabilitySet, Host } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";

const everythingBin = referenceServer("server-everything");

const server = nodeServer("everything", [everythingBin]);

const WATCHED = "demo://resource/static/document/architecture.md";
const TOGGLE = { name: "toggle-subscriber-updates", arguments: {} };
/** How long the first update may take to reach the host after the toggle's answer, ms. */
const UPDATE_BOUND_MS = 15_000;

/** The URIs `host` heard updated since `before`, once it heard one (bounded), each once. */
async function heard(host: Host, before: number): Promise<Step> {
  await waitFor(() => host.updated.length > before, UPDATE_BOUND_MS, "the resource update");
  return { op: "heard", result: [...new Set(host.updated.slice(before))] };
}

describe("a host served by a child of its own subscribes to a resource", () => {
  const home = testHome("mcpool-differential-subscribe-own-");
  pooling(home, [server]);

  async function session(capabilities: CapabilitySet, entry: Entry): Promise<Step[]> {
    const spec = { client: "v1" as const, capabilities, root: projectOf(home, "v1") };
    const host = await openHost(home, server, spec, entry);
    try {
      const steps: Step[] = [{ op: "era", result: host.era }];
      steps.push(await step(host, "resources/subscribe", { uri: WATCHED }));
      steps.push(await step(host, "tools/call", TOGGLE));
      steps.push(await heard(host, 0));
      steps.push(await step(host, "resources/unsubscribe", { uri: WATCHED }));
      steps.push(await step(host, "tools/call", TOGGLE));
      return steps;
    } finally {
      await host.close();
    }
  }

  it.each([
    ["none", "lean"],
    ["none", "http"],
    ["roots", "lean"],
    ["roots", "http"],
  ] as const)(
    "an SDK v1 host with capabilities %s through %s hears the update its call turned on, as direct",
    async (capabilities, entry) => {
      const direct = normalise(await session(capabilities, "direct"));
      expect(JSON.stringify(direct)).toContain(WATCHED);
      const pooled = normalise(await session(capabilities, entry));
      expect(compare(direct, pooled).join("\n")).toBe("");
    },
    120_000,
  );
});
