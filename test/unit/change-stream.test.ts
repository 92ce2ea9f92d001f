/** The modern change stream's filter and its reopening (src/pool/mcp/client-eras.ts). */
import { describe, expect, it } from "vitest";
import { ChangeStream, listenFilter, type ListenFilter } from "../../src/pool/mcp/client-eras.js";

describe("listenFilter", () => {
  it("asks for each list the server says changes, and the subscribed resources, sorted", () => {
    const capabilities = {
      tools: { listChanged: true },
      prompts: {},
      resources: { listChanged: true },
    };
    expect(listenFilter(capabilities, new Set(["b://2", "a://1"]))).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ["a://1", "b://2"],
    });
  });

  it("asks for nothing of a server that says nothing changes", () => {
    expect(listenFilter({ tools: {} }, new Set())).toBeUndefined();
  });
});

describe("ChangeStream", () => {
  function recorder() {
    const streams: { filter: ListenFilter; signal: AbortSignal }[] = [];
    const failures: unknown[] = [];
    const stream = new ChangeStream({
      listen: (filter, signal) => {
        streams.push({ filter, signal });
        return new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        );
      },
      capabilities: () => ({ tools: { listChanged: true } }),
      failed: (error) => failures.push(error),
    });
    return { stream, streams, failures };
  }

  it("opens a stream with a new filter before it cancels the old one, and reports no cancel as a failure", async () => {
    const { stream, streams, failures } = recorder();
    stream.start();
    stream.subscribe("a://1");
    expect(streams.map((s) => s.filter)).toEqual([
      { toolsListChanged: true },
      { toolsListChanged: true, resourceSubscriptions: ["a://1"] },
    ]);
    expect(streams.map((s) => s.signal.aborted)).toEqual([true, false]);
    stream.subscribe("a://1");
    expect(streams).toHaveLength(2);
    stream.unsubscribe("a://1");
    expect(streams.at(-1)?.filter).toEqual({ toolsListChanged: true });
    stream.stop();
    stream.start();
    expect(streams.every((s) => s.signal.aborted)).toBe(true);
    await Promise.resolve();
    expect(failures).toEqual([]);
  });

  it("reports a stream that fails by itself", async () => {
    const failures: unknown[] = [];
    const stream = new ChangeStream({
      listen: () => Promise.reject(new Error("server went away")),
      capabilities: () => ({ tools: { listChanged: true } }),
      failed: (error) => failures.push(error),
    });
    stream.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(failures).toHaveLength(1);
  });
});
