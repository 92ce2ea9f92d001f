/**
 * A host's resources, prompts and completion go where its calls go: to the connection its
 * profile picks (its project's child, when its server asks for roots), as direct they go to
 * the one session the host has. A 2025-11-25 server (test/fixtures/roots-complete.mjs) whose
 * completion, resource list and prompt answer from its client's roots and capabilities, for
 * SDK v1 and v2 hosts declaring roots, direct and through the lean bridge and `--http`.
 */
import { describe, expect, it } from "vitest";
import { fixture } from "../helpers/processes.js";
import { testHome } from "../helpers/daemon.js";
import { openHost, type Entry } from "./entries.js";
import type { ClientKind, HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";

const server = nodeServer("rootscomplete", [fixture("roots-complete.mjs")]);

describe("a host's resources, prompts and completion go where its calls go", () => {
  const home = testHome("mcpool-differential-passthrough-");
  pooling(home, [server]);

  async function session(client: ClientKind, entry: Entry): Promise<Step[]> {
    const spec: HostSpec = { client, capabilities: "roots", root: projectOf(home, client) };
    const host = await openHost(home, server, spec, entry);
    try {
      return [
        await step(host, "tools/call", { name: "whoami", arguments: {} }),
        await step(host, "resources/list", {}),
        await step(host, "prompts/get", { name: "project", arguments: { folder: "x" } }),
        await step(host, "completion/complete", {
          ref: { type: "ref/prompt", name: "project" },
          argument: { name: "folder", value: "" },
        }),
      ];
    } finally {
      await host.close();
    }
  }

  it.each([
    ["v1", "lean"],
    ["v1", "http"],
    ["v2", "lean"],
    ["v2", "http"],
  ] as const)(
    "for an SDK %s host with roots through %s, as direct",
    async (client, entry) => {
      const direct = normalise(await session(client, "direct"));
      const pooled = normalise(await session(client, entry));
      expect(compare(direct, pooled).join("\n")).toBe("");
    },
    120_000,
  );
});
