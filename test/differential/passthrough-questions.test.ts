/**
 * Questions a server asks inside `prompts/get` and `resources/read` are learnt as those it
 * asks inside calls (questions-learnt.test.ts): a 2025-11-25 server that asks for sampling
 * there, checking first that its client declared it (test/fixtures/prompt-asks.mjs), met
 * first by a host that answers sampling, then by hosts that do not, of both eras: each
 * session as direct — the first host's questions answered by it, the others refused by the
 * server itself (-32603), never by the pool for a host sharing the row's connection.
 */
import { describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";
import { openHost, type Entry } from "./entries.js";
import type { CapabilitySet, ClientKind, HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";

const server = nodeServer("promptasks", [fixture("prompt-asks.mjs")]);

describe("a server's questions inside prompts and resources are learnt as those inside calls", () => {
  const home = testHome("mcpool-differential-passthrough-questions-");
  pooling(home, [server]);

  async function session(client: ClientKind, capabilities: CapabilitySet, entry: Entry) {
    const spec: HostSpec = { client, capabilities, root: projectOf(home, client) };
    const host = await openHost(home, server, spec, entry);
    try {
      const out: Step[] = [await step(host, "tools/list", {})];
      out.push(await step(host, "prompts/get", { name: "ask" }));
      out.push(await step(host, "resources/read", { uri: "asks://sample" }));
      return normalise(out);
    } finally {
      await host.close();
    }
  }

  it("gives each host, the one that answers first, then those that do not, what it gets direct", async () => {
    const sessions = [
      ["v1", "asks", "lean"],
      ["v1", "none", "lean"],
      ["v1", "none", "lean"],
      ["v1", "none", "http"],
      ["v2", "none", "lean"],
    ] as const;
    const found: string[] = [];
    for (const [client, capabilities, entry] of sessions) {
      const direct = await session(client, capabilities, "direct");
      const pooled = await session(client, capabilities, entry);
      found.push(...compare(direct, pooled).map((d) => `${client} ${capabilities} ${entry}: ${d}`));
    }
    expect(found.join("\n")).toBe("");
  }, 300_000);
});
