/** An http session's GET stream watcher (src/pool/transport/listen-stream.ts). */
import { describe, expect, it } from "vitest";
import { ListenStream } from "../../src/pool/transport/listen-stream.js";

/** A fetch whose GETs answer a stream that stays open, counting what reached it. */
function server(): {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  gets: number;
} {
  const seen = { gets: 0 };
  return {
    get gets() {
      return seen.gets;
    },
    fetch: async () => {
      seen.gets += 1;
      return new Response(new ReadableStream<Uint8Array>({}), {
        status: 200,
        headers: { "content-type": "text/event-stream" },
      });
    },
  };
}

describe("ListenStream", () => {
  it("answers a second listening GET itself, but passes a resumption naming its last event", async () => {
    const upstream = server();
    const listen = new ListenStream();
    const fetch = listen.wrap(upstream.fetch);
    expect((await fetch("http://x/", { method: "GET" })).status).toBe(200);
    expect(listen.open).toBe(true);
    expect((await fetch("http://x/", { method: "GET" })).status).toBe(405);
    expect(upstream.gets).toBe(1);
    const resumed = await fetch("http://x/", {
      method: "GET",
      headers: { "last-event-id": "event-2" },
    });
    expect(resumed.status).toBe(200);
    expect(upstream.gets).toBe(2);
  });

  it("while held, answers every GET itself, resumptions too", async () => {
    const upstream = server();
    const listen = new ListenStream();
    const fetch = listen.wrap(upstream.fetch);
    await listen.hold();
    expect((await fetch("http://x/", { method: "GET" })).status).toBe(405);
    expect(
      (await fetch("http://x/", { method: "GET", headers: { "last-event-id": "e" } })).status,
    ).toBe(405);
    expect(upstream.gets).toBe(0);
    listen.resume();
    expect((await fetch("http://x/", { method: "GET" })).status).toBe(200);
  });
});
