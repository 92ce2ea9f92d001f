/**
 * A server that checks its client's capabilities itself before it asks (the conformance
 * suite's server: direct, a host without sampling or elicitation gets its own refusal,
 * -32603), pooled for hosts that declare neither. On a fresh daemon whose row's server was
 * never seen to ask, such a host shares the row's connection, which declared both: the
 * server asks, and the host's first question is answered -32601 ("Method not found"), as an
 * SDK client without it answers — the one time it differs from direct. From then on the
 * row is known to ask (kept with the tools cache): those hosts get a child that declared
 * what they declare, and the server refuses by itself, as direct — the rest of that
 * session, every later host of either era, with roots or without, and after a restart.
 */
import { describe, expect, it } from "vitest";
import { testHome } from "../helpers/daemon.js";
import { openHost, type Entry } from "./entries.js";
import type { CapabilitySet, ClientKind, HostSpec } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers } from "./servers.js";
import { step, type Step } from "./session.js";

/**
 * The conformance server's tools that ask their client, in the order a session calls them:
 * the elicitation first, whose capability the server checks itself (its sampling it asks
 * of any client, which answers -32601 without it, direct as through the pool).
 */
const QUESTIONS = [
  { name: "test_elicitation", arguments: { message: "a question" } },
  { name: "test_sampling", arguments: { prompt: "a question" } },
  { name: "test_elicitation_sep1034_defaults", arguments: {} },
];

describe("a server seen to ask a question never asks it of a host that lacks it", () => {
  const home = testHome("mcpool-differential-questions-");
  const server = matrixServers(home.dir).find((s) => s.id === "conformance")!;
  const daemon = pooling(home, [server]);

  /** The question tools called by a host of `client` and `capabilities` on `entry`. */
  async function questions(
    client: ClientKind,
    capabilities: CapabilitySet,
    entry: Entry,
  ): Promise<Step[]> {
    const spec: HostSpec = { client, capabilities, root: projectOf(home, client) };
    const host = await openHost(home, server, spec, entry);
    try {
      const out: Step[] = [];
      for (const call of QUESTIONS) out.push(await step(host, "tools/call", call));
      return out;
    } finally {
      await host.close();
    }
  }

  /** What a session through `entry` differs in from direct. */
  async function differences(
    client: ClientKind,
    capabilities: CapabilitySet,
    entry: Entry,
  ): Promise<{ direct: Step[]; pooled: Step[]; found: string[] }> {
    const direct = normalise(await questions(client, capabilities, "direct"));
    const pooled = normalise(await questions(client, capabilities, entry));
    return { direct, pooled, found: compare(direct, pooled) };
  }

  it("differs from direct on one question once, then never, nor after a restart", async () => {
    // A first host without either gets a child, which lists the row's own tools: the next
    // such host shares the row's connection, and its first question is the first meeting.
    const sessions = [
      ["v1", "none", "lean"],
      ["v1", "none", "http"],
      ["v1", "roots", "http"],
      ["v2", "none", "http"],
      ["v2", "roots", "lean"],
    ] as const;
    const met: { direct: Step; pooled: Step }[] = [];
    const found: string[] = [];
    for (const [client, capabilities, entry] of sessions) {
      const run = await differences(client, capabilities, entry);
      found.push(...run.found.map((d) => `${client} ${capabilities} ${entry}: ${d}`));
      run.pooled.forEach((pooled, at) => {
        const direct = run.direct[at]!;
        if (JSON.stringify(pooled) !== JSON.stringify(direct)) met.push({ direct, pooled });
      });
    }
    // Exactly one question differed: answered as by a client without it, not by the server.
    expect(found).toHaveLength(1);
    expect(met).toHaveLength(1);
    expect(met[0]?.direct.error?.code).toBe(-32603);
    expect(met[0]?.pooled.error?.code).toBe(-32601);

    // Kept with the tools cache: a new daemon's hosts without it meet it as direct at once
    // (its first such host gets a child, which would have lent them the row's connection).
    await daemon.restart();
    const again: string[] = [];
    for (const [client, capabilities, entry] of sessions.slice(0, 3)) {
      const run = await differences(client, capabilities, entry);
      again.push(...run.found.map((d) => `${client} ${capabilities} ${entry}: ${d}`));
    }
    expect(again.join("\n")).toBe("");
  }, 300_000);
});
