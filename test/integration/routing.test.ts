/**
 * Traffic back to the caller through a real daemon (test/faults.ts, "The wire"): agents
 * on their own connections, one shared stdio server (test/fixtures/interactive.mjs) that
 * tags everything it sends with the call's own argument, so a crossed wire shows.
 */
import { describe, expect, it } from "vitest";
import type {
  CreateMessageRequestParams,
  ElicitRequestParams,
  PoolClient,
  Progress,
  ServerNotification,
} from "mcpool-client";
import { client, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, nextMatching, waitFor } from "../helpers/processes.js";

const BOUND_MS = 10_000;

const fleet = useFleet();

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A daemon serving the interactive fixture as `talk`, and a watcher agent hearing its logs. */
async function setup(): Promise<{ home: TestHome; watcher: PoolClient }> {
  const home = fleet.home("mcpool-routing-");
  home.writeConfig({ talk: { command: process.execPath, args: [fixture("interactive.mjs")] } });
  await fleet.daemon(home);
  const watcher = await fleet.agent(home, "watcher");
  await waitFor(() => watcher.daemon !== undefined, BOUND_MS, "hello");
  const deadline = Date.now() + BOUND_MS;
  while ((await watcher.state()).find((s) => s.id === "talk")?.status !== "ready") {
    if (Date.now() > deadline) throw new Error("talk never became ready");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { home, watcher };
}

/**
 * Listens for the fixture's logging/message whose data is `data`; resolves once the daemon
 * has the subscription, with the wait for that message.
 */
async function logged(
  watcher: PoolClient,
  data: string,
): Promise<{ heard: Promise<ServerNotification> }> {
  const heard = nextMatching<ServerNotification>(
    (listener) => watcher.onNotification((_id, n) => listener(n)),
    (n) => n.method === "notifications/message" && n.params?.data === data,
    BOUND_MS,
  );
  await watcher.status(); // the subscription is handled before this answer is written
  return { heard };
}

async function inflight(watcher: PoolClient): Promise<number> {
  return (await watcher.state()).find((s) => s.id === "talk")?.inflight ?? 0;
}

async function settled(watcher: PoolClient): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while ((await inflight(watcher)) > 0) {
    if (Date.now() > deadline) throw new Error("a call is still in flight");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("routing back to the caller through the daemon", () => {
  it("cancels upstream a call whose AbortSignal fires, and one whose agent disconnects", async () => {
    const { home, watcher } = await setup();
    const aborter = await fleet.agent(home, "aborter");
    const controller = new AbortController();
    const waiting = deferred();
    const cancelled = await logged(watcher, "cancelled aborted");
    const aborted = aborter
      .call(
        "talk__wait",
        { tag: "aborted" },
        { signal: controller.signal, onProgress: () => waiting.resolve() },
      )
      .catch((e: unknown) => e);
    await waiting.promise; // the server is running it
    controller.abort();
    expect(await aborted).toMatchObject({ name: "AbortError" });
    await cancelled.heard; // the server saw notifications/cancelled for it
    await settled(watcher);
    // The aborting agent's connection is unharmed.
    expect(await aborter.call("talk__steps", { tag: "after", count: 1 })).toBe("after done");

    const leaver = await client(home, "leaver");
    const started = deferred();
    const left = await logged(watcher, "cancelled left");
    const pending = leaver
      .call("talk__wait", { tag: "left" }, { onProgress: () => started.resolve() })
      .catch((e: unknown) => e);
    await started.promise;
    await leaver.close();
    expect(await pending).toMatchObject({ code: "closed" });
    await left.heard;
    await settled(watcher);
  });

  it("gives two agents with the same request ids each their own answers, progress and elicitations, interleaved", async () => {
    const { home } = await setup();
    // Same steps on both connections: hello, then the calls, so the JSON-RPC ids coincide.
    const [a, b] = [await fleet.agent(home, "a"), await fleet.agent(home, "b")];
    const progressOf = { A: [] as string[], B: [] as string[] };
    const track = (tag: "A" | "B") => (p: Progress) => progressOf[tag].push(p.message ?? "");

    // Progress: both calls are in flight together (the fixture holds each until both arrive).
    const [doneA, doneB] = await Promise.all([
      a.call("talk__steps", { tag: "A", count: 3, meet: 2 }, { onProgress: track("A") }),
      b.call("talk__steps", { tag: "B", count: 3, meet: 2 }, { onProgress: track("B") }),
    ]);
    expect([doneA, doneB]).toEqual(["A done", "B done"]);
    expect(progressOf.A).toEqual(["A 1", "A 2", "A 3"]);
    expect(progressOf.B).toEqual(["B 1", "B 2", "B 3"]);

    // Elicitation: A's question is still open when B calls and is asked its own.
    const asked = { A: [] as string[], B: [] as string[] };
    const askedA = deferred();
    const answerA = deferred();
    progressOf.A = [];
    progressOf.B = [];
    const callA = a.call(
      "talk__ask",
      { tag: "A" },
      {
        onProgress: track("A"),
        onElicit: async (params: ElicitRequestParams, { serverId }) => {
          asked.A.push(`${serverId} ${params.message}`);
          askedA.resolve();
          await answerA.promise;
          return { action: "accept", content: { name: "ay" } };
        },
      },
    );
    await askedA.promise;
    const callB = b.call(
      "talk__ask",
      { tag: "B" },
      {
        onProgress: track("B"),
        onElicit: (params, { serverId }) => {
          asked.B.push(`${serverId} ${params.message}`);
          return { action: "accept", content: { name: "bee" } };
        },
      },
    );
    expect(await callB).toBe('B got {"action":"accept","content":{"name":"bee"}}');
    answerA.resolve();
    expect(await callA).toBe('A got {"action":"accept","content":{"name":"ay"}}');
    expect(asked).toEqual({ A: ["talk A: your name?"], B: ["talk B: your name?"] });
    expect(progressOf).toEqual({ A: ["A asking", "A answered"], B: ["B asking", "B answered"] });
  });

  it("declines a question no agent takes, answers cancel for a handler that throws or disconnects", async () => {
    const { home, watcher } = await setup();
    const capabilities = JSON.parse(await watcher.call("talk__caps", {})) as Record<
      string,
      unknown
    >;
    expect(capabilities).toEqual({ elicitation: { form: {} }, sampling: {} });

    const nobody = await fleet.agent(home, "nobody");
    expect(await nobody.call("talk__ask", { tag: "N" })).toBe('N got {"action":"decline"}');

    // A handler given to onElicit() answers the calls that brought none of their own.
    const helper = await fleet.agent(home, "helper");
    const off = helper.onElicit((params) => ({
      action: "accept",
      content: { name: params.message },
    }));
    expect(await helper.call("talk__ask", { tag: "W" })).toBe(
      'W got {"action":"accept","content":{"name":"W: your name?"}}',
    );
    off();

    const thrower = await fleet.agent(home, "thrower");
    const thrown = await thrower.call(
      "talk__ask",
      { tag: "T" },
      {
        onElicit: () => {
          throw new Error("no person at this keyboard");
        },
      },
    );
    expect(thrown).toBe('T got {"action":"cancel"}');

    const leaver = await client(home, "leaver");
    const asked = deferred();
    const answered = await logged(watcher, "answered L cancel");
    const pending = leaver
      .call(
        "talk__ask",
        { tag: "L" },
        {
          onElicit: () => {
            asked.resolve();
            return new Promise(() => undefined);
          },
        },
      )
      .catch((e: unknown) => e);
    await asked.promise;
    await leaver.close();
    expect(await pending).toMatchObject({ code: "closed" });
    await answered.heard;
    await settled(watcher);
  });

  it("routes sampling to the agent whose call is in flight, and refuses it where no agent takes it", async () => {
    const { home } = await setup();
    const [a, b] = [await fleet.agent(home, "a"), await fleet.agent(home, "b")];
    const said = (params: CreateMessageRequestParams): string => {
      const content = params.messages[0]?.content as { text?: string } | undefined;
      return content?.text ?? "";
    };
    const reply = (value: string) => ({
      role: "assistant" as const,
      content: { type: "text", text: value },
      model: "test-model",
    });

    // A's request is still open when B calls and is asked its own.
    const askedA = deferred();
    const answerA = deferred();
    const asked = { A: [] as string[], B: [] as string[] };
    const callA = a.call(
      "talk__sample",
      { tag: "A" },
      {
        onSample: async (params, { serverId }) => {
          asked.A.push(`${serverId} ${said(params)}`);
          askedA.resolve();
          await answerA.promise;
          return reply("from a");
        },
      },
    );
    await askedA.promise;
    const callB = b.call(
      "talk__sample",
      { tag: "B" },
      {
        onSample: (params, { serverId }) => {
          asked.B.push(`${serverId} ${said(params)}`);
          return reply("from b");
        },
      },
    );
    expect(await callB).toBe("B sampled from b");
    answerA.resolve();
    expect(await callA).toBe("A sampled from a");
    expect(asked).toEqual({ A: ["talk A: say something"], B: ["talk B: say something"] });

    // A handler given to onSample() answers the calls that brought none of their own.
    const helper = await fleet.agent(home, "helper");
    const off = helper.onSample((params) => reply(`echo ${said(params)}`));
    expect(await helper.call("talk__sample", { tag: "W" })).toBe("W sampled echo W: say something");
    off();

    // Nobody to ask: the server is refused with method-not-found, as by a host without sampling.
    const nobody = await fleet.agent(home, "nobody");
    expect(await nobody.call("talk__sample", { tag: "N" })).toBe("N refused -32601");
    // A handler that throws: the server gets a JSON-RPC error it can handle.
    const thrower = await fleet.agent(home, "thrower");
    const thrown = await thrower.call(
      "talk__sample",
      { tag: "T" },
      {
        onSample: () => {
          throw new Error("no model here");
        },
      },
    );
    expect(thrown).toBe("T refused -32603");
  });
});
