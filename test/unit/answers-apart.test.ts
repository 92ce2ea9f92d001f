/**
 * answersApart() over the SDK's own stdio transport and a stream whose writes finish only when
 * the test says: an answer waits for its own request's notification to be out of the stream,
 * whatever the clock says, and no other answer waits at all.
 */
import { PassThrough, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { answersApart, type Sending } from "../../src/bridge/fronts/answers-apart.js";

/** A stream that takes each write and finishes it only when `finish()` is called. */
function heldStream(): { stream: Writable; lines: string[]; finish(): void } {
  const lines: string[] = [];
  const unfinished: (() => void)[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (chunk.length > 0) lines.push(chunk.toString().trim());
      unfinished.push(() => done());
    },
  });
  // Each finished write lets the next buffered one through, which is held in its turn.
  const finish = (): void => {
    while (unfinished.length > 0) unfinished.shift()!();
  };
  return { stream, lines, finish };
}

function wrapped(stream: Writable): Sending {
  const transport = new StdioServerTransport(new PassThrough(), stream);
  answersApart(transport, stream);
  return transport;
}

/** Lets pending callbacks and a few turns of the event loop run. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

const progress = (token: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: token, progress: 1 },
});
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: {} });

describe("answersApart", () => {
  afterEach(() => void vi.useRealTimers());

  it("writes an answer only once its request's notification is out of the stream, whatever the time", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "performance", "Date"] });
    const { stream, lines, finish } = heldStream();
    const transport = wrapped(stream);
    await transport.send(progress(1), { relatedRequestId: 7 });
    let answered = false;
    const sent = transport.send(answer(7)).then(() => void (answered = true));
    vi.advanceTimersByTime(60_000);
    await turns();
    expect(answered).toBe(false);
    expect(lines).toHaveLength(1);
    for (let i = 0; i < 10 && !answered; i++) {
      finish();
      await turns();
    }
    await sent;
    finish();
    expect(lines.map((line) => JSON.parse(line) as JSONRPCMessage)).toEqual([
      progress(1),
      answer(7),
    ]);
  });

  it("writes at once an answer whose request had no notification, after another's or an unrelated one", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "performance", "Date"] });
    const { stream, lines, finish } = heldStream();
    const transport = wrapped(stream);
    await transport.send(progress(1), { relatedRequestId: 7 });
    await transport.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    let answered = false;
    const sent = transport.send(answer(8)).then(() => void (answered = true));
    await turns();
    expect(answered).toBe(true);
    await sent;
    finish();
    await turns();
    finish();
    expect(lines.map((line) => (JSON.parse(line) as { method?: string; id?: number }).id)).toEqual([
      undefined,
      undefined,
      8,
    ]);
  });

  it("lets a held answer go on when the stream closes before its notification is out", async () => {
    const { stream } = heldStream();
    const sent: JSONRPCMessage[] = [];
    const transport: Sending = {
      send: async (message: JSONRPCMessage): Promise<void> => {
        sent.push(message);
        stream.write(`${JSON.stringify(message)}\n`);
      },
    };
    answersApart(transport, stream);
    await transport.send(progress(1), { relatedRequestId: 7 });
    const answered = transport.send(answer(7));
    await turns();
    expect(sent).toEqual([progress(1)]);
    stream.on("error", () => undefined);
    stream.destroy();
    await answered;
    expect(sent).toEqual([progress(1), answer(7)]);
  });
});
