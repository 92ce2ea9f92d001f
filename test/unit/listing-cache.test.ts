/**
 * Passthrough listings and reads a modern server calls public, kept until their ttlMs: what
 * is kept, for which request, and what drops it (calls/listing-cache.ts).
 */
import { describe, expect, it } from "vitest";

import { ListingCache } from "../../src/pool/calls/listing-cache.js";
import { markAnsweredAfterInput } from "../../src/pool/mcp/input-required.js";

/** A server answering prompts/list with `hint`, each answer numbered. */
function server(hint: Record<string, unknown>): { send(): Promise<object>; sent: number } {
  const counter = {
    sent: 0,
    async send(): Promise<object> {
      counter.sent += 1;
      return { prompts: [{ name: `p${counter.sent}` }], ...hint };
    },
  };
  return counter;
}

describe("the passthrough listing cache", () => {
  it("keeps a public answer per method and params, and a list change or a new connection drops it", async () => {
    const cache = new ListingCache();
    const up = server({ ttlMs: 60_000, cacheScope: "public" });
    const ask = (params?: Record<string, unknown>) =>
      cache.answer("s", "prompts/list", params, () => up.send(), true);
    expect(await ask()).toMatchObject({ prompts: [{ name: "p1" }] });
    expect(await ask({ _meta: { traceparent: "x" } })).toMatchObject({ prompts: [{ name: "p1" }] });
    expect(await ask({ cursor: "2" })).toMatchObject({ prompts: [{ name: "p2" }] });
    expect(up.sent).toBe(2);

    cache.drop("s", "notifications/resources/list_changed");
    expect(await ask()).toMatchObject({ prompts: [{ name: "p1" }] });
    cache.drop("s", "notifications/prompts/list_changed");
    expect(await ask()).toMatchObject({ prompts: [{ name: "p3" }] });
    cache.drop("s");
    expect(await ask({ cursor: "2" })).toMatchObject({ prompts: [{ name: "p4" }] });
  });

  it("keeps nothing private, nothing without a lifetime, and no other method", async () => {
    const cache = new ListingCache();
    for (const hint of [
      { ttlMs: 60_000, cacheScope: "private" },
      { ttlMs: 0, cacheScope: "public" },
      {},
    ]) {
      const up = server(hint);
      await cache.answer("s", "prompts/list", undefined, () => up.send(), true);
      await cache.answer("s", "prompts/list", undefined, () => up.send(), true);
      expect(up.sent, JSON.stringify(hint)).toBe(2);
    }
    const call = server({ ttlMs: 60_000, cacheScope: "public" });
    await cache.answer("s", "tools/call", { name: "a" }, () => call.send(), true);
    await cache.answer("s", "tools/call", { name: "a" }, () => call.send(), true);
    expect(call.sent).toBe(2);
  });

  it("keeps a public read per URI until that URI is updated or the resources change, never one given after input", async () => {
    const cache = new ListingCache();
    const up = server({ ttlMs: 60_000, cacheScope: "public" });
    const read = (uri: string) =>
      cache.answer("s", "resources/read", { uri }, () => up.send(), true);
    expect(await read("a")).toMatchObject({ prompts: [{ name: "p1" }] });
    expect(await read("b")).toMatchObject({ prompts: [{ name: "p2" }] });
    expect(await read("a")).toMatchObject({ prompts: [{ name: "p1" }] });
    // Another URI's update leaves it; its own drops it.
    cache.drop("s", "notifications/resources/updated", { uri: "b" });
    expect(await read("a")).toMatchObject({ prompts: [{ name: "p1" }] });
    expect(await read("b")).toMatchObject({ prompts: [{ name: "p3" }] });
    cache.drop("s", "notifications/resources/updated", { uri: "a" });
    expect(await read("a")).toMatchObject({ prompts: [{ name: "p4" }] });
    cache.drop("s", "notifications/resources/list_changed");
    expect(await read("a")).toMatchObject({ prompts: [{ name: "p5" }] });
    expect(await read("b")).toMatchObject({ prompts: [{ name: "p6" }] });

    // Given only after the server asked for input: not kept (SEP-2549).
    const asked = async (): Promise<object> => {
      const result = await up.send();
      markAnsweredAfterInput(result);
      return result;
    };
    await cache.answer("s", "resources/read", { uri: "c" }, asked, true);
    await cache.answer("s", "resources/read", { uri: "c" }, asked, true);
    expect(up.sent).toBe(8);
  });

  it("sends a read for each caller until one is kept: a read may ask its own caller", async () => {
    const cache = new ListingCache();
    const up = server({ ttlMs: 60_000, cacheScope: "public" });
    await Promise.all([
      cache.answer("s", "resources/read", { uri: "a" }, () => up.send(), true),
      cache.answer("s", "resources/read", { uri: "a" }, () => up.send(), true),
    ]);
    expect(up.sent).toBe(2);
  });

  it("shares the request on its way only with requests that cannot be aborted", async () => {
    const cache = new ListingCache();
    const up = server({ ttlMs: 0, cacheScope: "public" });
    const shared = await Promise.all([
      cache.answer("s", "prompts/list", undefined, () => up.send(), true),
      cache.answer("s", "prompts/list", undefined, () => up.send(), true),
      cache.answer("s", "prompts/list", undefined, () => up.send(), false),
    ]);
    expect(shared.map((r) => (r as { prompts: { name: string }[] }).prompts[0]?.name)).toEqual([
      "p1",
      "p1",
      "p2",
    ]);
  });
});
