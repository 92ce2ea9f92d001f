/**
 * A raw call's result is the caller's to read: its flattened text, for a
 * structured result two JSON parses and canonicalisations, is made only when something
 * reads it — a `call` event's `chars` — and then agrees with what a non-raw call returns.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";

import type { McpPool, PoolEvent } from "../../src/index.js";
import { finishResult, resultText } from "../../src/pool/calls/results.js";
import { echoServer, makePool, memoryRow } from "../../src/testing/index.js";

/** A result that counts how often its content is read. */
function counted(): { result: CallToolResult; reads: () => number } {
  let reads = 0;
  const content = [{ type: "text" as const, text: '{\n  "b": 2,\n  "a": 1\n}' }];
  const result = {
    get content() {
      reads += 1;
      return content;
    },
    structuredContent: { a: 1, b: 2 },
  } as CallToolResult;
  return { result, reads: () => reads };
}

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

describe("a raw call's text", () => {
  it("is not made until it is read, and then once", () => {
    const { result, reads } = counted();
    const finished = finishResult(result, { serverId: "s", maxChars: 10, raw: true });
    expect(finished.result).toBe(result);
    expect(reads()).toBe(0);
    expect(finished.chars).toBe(resultText(result).length);
    expect(finished.text).toBe('{"a":1,"b":2}');
    expect(reads()).toBe(2); // once for the text, once by resultText() above
    expect(finished.truncated).toBe(false);
  });

  it("is made at once, and cut, for a call that is not raw", () => {
    const { result, reads } = counted();
    const finished = finishResult(result, { serverId: "s", maxChars: 0 });
    expect(reads()).toBe(1);
    expect(finished.text).toBe('{"a":1,"b":2}');
  });

  it("gives a raw call's event the chars of the text a plain call returns", async () => {
    const pool = makePool({ servers: { echo: () => echoServer() } });
    pools.push(pool);
    await pool.sync([memoryRow("echo")]);
    const events: PoolEvent[] = [];
    pool.onEvent((event) => events.push(event));
    const text = (await pool.call("echo__echo", { text: "héllo" })) as string;
    await pool.call("echo__echo", { text: "héllo" }, { raw: true });
    const calls = events.filter((event) => event.type === "call");
    expect(calls).toHaveLength(2);
    // As the daemon sends it to a watcher: the getter is read by JSON.stringify.
    const sent = calls.map((event) => JSON.parse(JSON.stringify(event)) as { chars: number });
    expect(sent.map((event) => event.chars)).toEqual([text.length, text.length]);
  });
});
