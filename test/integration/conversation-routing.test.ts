/**
 * Requests a per-conversation server sends back during a call, against
 * real children of test/fixtures/interactive.mjs, one per conversation: a conversation's
 * elicitations and sampling requests reach the callers of that conversation only, even
 * while another conversation's caller on the same row is in flight and free to answer.
 */
import type { CreateMessageResult, SamplingMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ElicitParams, SampleParams } from "../../src/index.js";
import { nodeRow, poolMaker } from "../helpers/stdio-pool.js";
import { alive } from "../helpers/processes.js";

const { pool, made: pools } = poolMaker();
const spawned: number[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const pid of spawned.splice(0)) expect(alive(pid)).toBe(false);
});

const conversation = (conversationId: string) => ({
  tenant: "acme",
  principal: "alice",
  conversationId,
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const said = (params: SampleParams | ElicitParams): string =>
  "messages" in params
    ? params.messages
        .map((m: SamplingMessage) => ("text" in m.content ? m.content.text : ""))
        .join()
    : params.message;

const reply = (text: string): CreateMessageResult => ({
  role: "assistant",
  content: { type: "text", text },
  model: "test",
});

describe("a per-conversation server's requests during a call", () => {
  it("go to the caller of their own conversation while another conversation's caller is in flight", async () => {
    const p = pool({
      // The pool's own handlers: what no caller of the conversation takes would reach.
      onElicit: () => ({ action: "decline" }),
      onSample: () => reply("from the pool"),
      onChild: (event) => {
        if (event.type === "spawn") spawned.push(event.pid);
      },
    });
    await p.sync([nodeRow("talk", "interactive.mjs", { session: "conversation" })]);
    const asked: Record<string, string[]> = { A: [], B: [] };
    const readyA = deferred();
    const goA = deferred();
    const waitingB = deferred();
    const stopB = new AbortController();

    // A's call asks whether it may go on, and waits there until B is in flight.
    const callA = p.call(
      "talk__sample",
      { tag: "A", ready: true },
      {
        identity: conversation("c1"),
        onElicit: async (params) => {
          asked.A.push(said(params));
          readyA.resolve();
          await goA.promise;
          return { action: "accept", content: {} };
        },
        onSample: (params) => {
          asked.A.push(said(params));
          return reply("from a");
        },
      },
    );
    await readyA.promise;
    // B's call, on its own conversation of the same row, is in flight and answering nothing.
    const callB = p.call(
      "talk__wait",
      { tag: "B" },
      {
        identity: conversation("c2"),
        signal: stopB.signal,
        onProgress: () => waitingB.resolve(),
        onElicit: (params) => {
          asked.B.push(said(params));
          return { action: "accept", content: {} };
        },
        onSample: (params) => {
          asked.B.push(said(params));
          return reply("from b");
        },
      },
    );
    await waitingB.promise;
    goA.resolve();
    try {
      expect(await callA).toBe("A sampled from a");
    } finally {
      stopB.abort(new Error("the test is over"));
    }
    // B's call was cancelled, never answered for A.
    await expect(callB).rejects.toThrow();
    expect(asked).toEqual({ A: ["A: ready?", "A: say something"], B: [] });
    // Each conversation's child, and the spare child that found the row's era once.
    expect(spawned).toHaveLength(3);
  });
});
