/**
 * Passthrough through a real daemon and the client library, against
 * @modelcontextprotocol/server-everything (resources with subscriptions, prompts,
 * completion, logging) and the interactive fixture (tools and logging only).
 */
import { describe, expect, it } from "vitest";
import type { PoolClient, ServerNotification } from "mcpool-client";
import { type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, nextMatching, referenceServer, waitFor } from "../helpers/processes.js";

const BOUND_MS = 15_000;
const everythingBin = referenceServer("server-everything");
const ARCHITECTURE = "demo://resource/static/document/architecture.md";
const FEATURES = "demo://resource/static/document/features.md";

const fleet = useFleet();

async function setup(): Promise<TestHome> {
  const home = fleet.home("mcpool-passthrough-");
  home.writeConfig(
    {
      everything: { command: process.execPath, args: [everythingBin] },
      talk: { command: process.execPath, args: [fixture("interactive.mjs")] },
    },
    { mcpool: { connectTimeoutMs: 20_000 } },
  );
  await fleet.daemon(home);
  const probe = await fleet.agent(home, "probe");
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const state = await probe.state();
    if (state.length === 2 && state.every((s) => s.status === "ready")) return home;
    if (Date.now() > deadline) throw new Error(`not ready: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every resources/updated the agent hears, as `<serverId> <uri>`. */
function updates(c: PoolClient): string[] {
  const heard: string[] = [];
  c.onNotification((serverId, n) => {
    if (n.method === "notifications/resources/updated") heard.push(`${serverId} ${n.params?.uri}`);
  });
  return heard;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("passthrough through the daemon", () => {
  it("passes resources, prompts, completion, ping and the logging level to a server by id", async () => {
    const home = await setup();
    const c = await fleet.agent(home, "agent");

    const { resources } = await c.listResources("everything");
    expect(resources.map((r) => r.uri)).toContain(ARCHITECTURE);
    const { resourceTemplates } = await c.listResourceTemplates("everything");
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
      "demo://resource/dynamic/text/{resourceId}",
    );
    const read = await c.readResource("everything", "demo://resource/dynamic/text/7");
    expect(read.contents[0]?.uri).toBe("demo://resource/dynamic/text/7");
    expect(read.contents[0]?.text).toEqual(expect.any(String));

    const { prompts } = await c.listPrompts("everything");
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(["args-prompt"]));
    const prompt = await c.getPrompt("everything", "args-prompt", { city: "Lyon" });
    expect(JSON.stringify(prompt.messages)).toContain("Lyon");
    const completed = await c.complete("everything", {
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "Eng" },
    });
    expect(completed.completion.values).toEqual(["Engineering"]);

    await c.ping("everything");
    await c.setLoggingLevel("everything", "debug");
    // A server's refusal keeps its JSON-RPC code.
    const missing = await rejection(c.readResource("everything", "demo://nowhere"));
    expect(missing).toMatchObject({ detail: { serverId: "everything" } });
    expect((missing as { detail: { mcpCode?: number } }).detail.mcpCode).toEqual(
      expect.any(Number),
    );

    // The pool declared elicitation, so the reference server offers its elicitation tool,
    // and asks the agent whose call it is.
    const asked: string[] = [];
    const answer = await c.call(
      "everything__trigger-elicitation-request",
      {},
      {
        onElicit: (params, { serverId }) => {
          asked.push(`${serverId}: ${params.message}`);
          return { action: "decline" };
        },
      },
    );
    expect(asked).toEqual(["everything: Please provide inputs for the following fields:"]);
    expect(answer).toMatch(/decline/i);
  });

  it("refuses with not-offered what a server's capabilities lack", async () => {
    const home = await setup();
    const c = await fleet.agent(home, "agent");
    const refusals = await Promise.all([
      rejection(c.listResources("talk")),
      rejection(c.listResourceTemplates("talk")),
      rejection(c.readResource("talk", "x://y")),
      rejection(c.subscribeResource("talk", "x://y")),
      rejection(c.listPrompts("talk")),
      rejection(c.getPrompt("talk", "p")),
      rejection(
        c.complete("talk", {
          ref: { type: "ref/prompt", name: "p" },
          argument: { name: "a", value: "" },
        }),
      ),
    ]);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ code: "not-offered", detail: { serverId: "talk" } });
    }
    expect((refusals[0] as Error).message).toMatch(/does not offer resources\/list/);
    // What it does offer passes: ping always, logging because it declares it.
    await c.ping("talk");
    await c.setLoggingLevel("talk", "warning");
    expect(await rejection(c.ping("nowhere"))).toMatchObject({ code: "unknown-server" });
  });

  it("delivers resources/updated to the agents that subscribed to that uri only", async () => {
    const home = await setup();
    const [a, b, bystander] = [
      await fleet.agent(home, "a"),
      await fleet.agent(home, "b"),
      await fleet.agent(home, "bystander"),
    ];
    const [heardA, heardB, heardBystander] = [updates(a), updates(b), updates(bystander)];
    await a.subscribeResource("everything", ARCHITECTURE);
    await b.subscribeResource("everything", FEATURES);
    await bystander.status(); // its notification subscription is in place

    // The server sends an update for each subscribed uri at once, in subscription order.
    const fromB = nextMatching<ServerNotification>(
      (listener) => b.onNotification((_id, n) => listener(n)),
      (n) => n.method === "notifications/resources/updated",
      BOUND_MS,
    );
    await a.call("everything__toggle-subscriber-updates", {});
    await fromB;
    await waitFor(() => heardA.length > 0, BOUND_MS, "a's update");
    // Anything sent to the wrong agent was written before these answers.
    await Promise.all([a.status(), b.status(), bystander.status()]);
    expect(heardA).toEqual([`everything ${ARCHITECTURE}`]);
    expect(heardB).toEqual([`everything ${FEATURES}`]);
    expect(heardBystander).toEqual([]);

    // Once a has unsubscribed, the server no longer sends its uri at all.
    await a.unsubscribeResource("everything", ARCHITECTURE);
    await a.call("everything__toggle-subscriber-updates", {}); // off
    const again = nextMatching<ServerNotification>(
      (listener) => b.onNotification((_id, n) => listener(n)),
      (n) => n.method === "notifications/resources/updated",
      BOUND_MS,
    );
    await a.call("everything__toggle-subscriber-updates", {}); // on: sends at once
    await again;
    await Promise.all([a.status(), bystander.status()]);
    expect(heardA).toEqual([`everything ${ARCHITECTURE}`]);
    expect(heardB).toEqual([`everything ${FEATURES}`, `everything ${FEATURES}`]);
    expect(heardBystander).toEqual([]);
    await a.call("everything__toggle-subscriber-updates", {}); // off
  });
});
