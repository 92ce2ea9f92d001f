import { describe, expect, it } from "vitest";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import {
  cappedFetch,
  cappedResponse,
  unmarkTooLarge,
  type CapStats,
} from "../../src/pool/transport/http-transport.js";
import { AnswerTooLarge } from "../../src/pool/transport/line-reader.js";

const CAP = 1024 * 1024;
const TOTAL = 40_000_000;
const CHUNK = 64 * 1024;
const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** `prefix`, then `TOTAL` bytes of filler in 64 KiB chunks made as they are read, then `suffix`. */
function bigStream(prefix: string, suffix: string, after = ""): ReadableStream<Uint8Array> {
  const filler = new Uint8Array(CHUNK).fill(0x78);
  let sent = 0;
  let stage = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (stage === 0) {
        stage = 1;
        return controller.enqueue(encode(prefix));
      }
      if (stage === 1 && sent < TOTAL) {
        const size = Math.min(CHUNK, TOTAL - sent);
        sent += size;
        return controller.enqueue(filler.subarray(0, size));
      }
      if (stage === 1) {
        stage = 2;
        return controller.enqueue(encode(suffix + after));
      }
      controller.close();
    },
  });
}

const respond = (
  body: string | ReadableStream<Uint8Array>,
  type: string,
  headers: Record<string, string> = {},
) => new Response(body, { headers: { "content-type": type, ...headers } });

/** The error of an answer the SDK would read, with its data as the pool sees it. */
function refusal(message: unknown): { id: unknown; data: unknown } {
  const unmarked = unmarkTooLarge(message as JSONRPCMessage) as {
    id: unknown;
    error: { data: unknown };
  };
  return { id: unmarked.id, data: unmarked.error.data };
}

describe("an http answer over the frame cap", () => {
  it("drops a 40 MB JSON body as it arrives, holding no more than the cap, and answers its id", async () => {
    const stats: CapStats = { maxHeldBytes: 0 };
    const body = bigStream(
      '{"result":{"content":[{"type":"text","text":"',
      '"}]},"jsonrpc":"2.0","id":7}',
    );
    const response = cappedResponse(respond(body, "application/json"), 7, CAP, () => {}, stats);
    const answer = (await response.json()) as unknown;
    expect(stats.maxHeldBytes).toBeLessThanOrEqual(CAP);
    const { id, data } = refusal(answer);
    expect(id).toBe(7);
    expect(data).toBeInstanceOf(AnswerTooLarge);
    expect((data as AnswerTooLarge).bytes).toBeGreaterThan(TOTAL);
    expect((data as AnswerTooLarge).maxBytes).toBe(CAP);
  }, 60_000);

  it("drops one 40 MB event and passes the next event whole", async () => {
    const stats: CapStats = { maxHeldBytes: 0 };
    const next = `event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n`;
    const body = bigStream(
      'event: message\ndata: {"result":{"content":[{"type":"text","text":"',
      '"}]},"jsonrpc":"2.0","id":8}\n\n',
      next,
    );
    const response = cappedResponse(respond(body, "text/event-stream"), 8, CAP, () => {}, stats);
    const text = await response.text();
    expect(stats.maxHeldBytes).toBeLessThanOrEqual(CAP);
    const events = text.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(2);
    const { id, data } = refusal(JSON.parse(events[0]!.replace(/^event: message\ndata: /, "")));
    expect(id).toBe(8);
    expect((data as AnswerTooLarge).bytes).toBeGreaterThan(TOTAL);
    expect(`${events[1]}\n\n`).toBe(next);
  }, 60_000);

  it("drops an oversize notification of the server's, telling why, and answers nothing for it", async () => {
    const notes: string[] = [];
    const body = bigStream(
      'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"',
      '"}}\r\n\r\n',
      'data: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n',
    );
    const response = cappedResponse(respond(body, "text/event-stream"), 1, CAP, (note) =>
      notes.push(note),
    );
    expect(await response.text()).toBe('data: {"jsonrpc":"2.0","id":1,"result":{}}\r\n\r\n');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /"notifications\/message" message, over the 1048576-byte cap, dropped unread/,
    );
  }, 60_000);

  it("refuses a body whose Content-Length is over the cap without reading it, by the request's id", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(CHUNK));
      },
    });
    const fetch = cappedFetch(
      async () => respond(body, "application/json", { "content-length": String(TOTAL) }),
      CAP,
      () => {},
    );
    const request = JSON.stringify({ jsonrpc: "2.0", id: "call-3", method: "tools/call" });
    const response = await fetch("http://127.0.0.1/mcp", { method: "POST", body: request });
    const { id, data } = refusal(await response.json());
    expect(id).toBe("call-3");
    expect((data as AnswerTooLarge).bytes).toBe(TOTAL);
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it("passes answers under the cap, and other content types, as they are", async () => {
    const small = '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}';
    const json = cappedResponse(respond(small, "application/json"), 2, CAP, () => {});
    expect(await json.text()).toBe(small);
    const plain = cappedResponse(respond("x".repeat(2 * CAP), "text/plain"), 2, CAP, () => {});
    expect((await plain.text()).length).toBe(2 * CAP);
  });

  it("leaves a server's error that only looks like the refusal as the server sent it", () => {
    const forged = {
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32603,
        message: "x",
        data: { bytes: 1, maxBytes: 1, "mcpool/answerTooLarge": "guess" },
      },
    };
    expect(unmarkTooLarge(forged as JSONRPCMessage)).toBe(forged);
  });
});
