/**
 * The dual-era downstream side's pure parts: which era a host's opening message
 * is, and the input key the pool hands a call's handler and the bridge takes out again.
 */
import { describe, expect, it } from "vitest";
import { opensModern, serveEitherEra, type StdioLike } from "../../src/bridge/modern/era-switch.js";
import { splitInputKey } from "../../src/bridge/core/host-requests.js";
import { META } from "../../src/pool/core/era.js";
import { INPUT_KEY_META, keyed } from "../../src/pool/mcp/input-required.js";

const request = (method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0" as const,
  id: 1,
  method,
  ...(params ? { params } : {}),
});

describe("a host's era, from its opening message", () => {
  it("is legacy for initialize and for a request that names no revision", () => {
    expect(opensModern(request("initialize", { protocolVersion: "2025-11-25" }))).toBe(false);
    expect(opensModern(request("tools/list"))).toBe(false);
    expect(opensModern({ jsonrpc: "2.0", method: "notifications/initialized" })).toBe(false);
  });

  it("is modern for server/discover and for any request whose _meta names a revision", () => {
    expect(opensModern(request("server/discover"))).toBe(true);
    const meta = { _meta: { [META.protocolVersion]: "2026-07-28" } };
    expect(opensModern(request("tools/call", { name: "x", ...meta }))).toBe(true);
    // An initialize in the modern era's envelope is a modern host asking a removed method.
    expect(opensModern(request("initialize", meta))).toBe(true);
  });
});

/** A connection in memory: what the host sends in, and what was sent back out. */
function connection(): { transport: StdioLike; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const transport: StdioLike = {
    start: async () => undefined,
    send: async (message) => {
      sent.push(message as Record<string, unknown>);
    },
    close: async () => undefined,
  };
  return { transport, sent };
}

describe("a host that probes with server/discover and falls back to initialize", () => {
  it("has its server/discover answered even when the modern server was not up yet", async () => {
    const { transport, sent } = connection();
    let modernUp: (server: { close(): Promise<void> }) => void = () => undefined;
    const legacyGot: string[] = [];
    await serveEitherEra(transport, {
      // The modern side is still loading when the host gives up on its probe.
      modern: () => new Promise((resolve) => (modernUp = resolve)),
      legacy: async (proxy) => {
        proxy.onmessage = (message) => {
          if ("method" in message) legacyGot.push(message.method);
        };
        await proxy.start();
        return { close: async () => undefined };
      },
    });
    transport.onmessage!(request("server/discover") as never);
    transport.onmessage!({ ...request("initialize"), id: 2 } as never);
    await expect.poll(() => legacyGot).toEqual(["initialize"]);
    // The probe is owed its answer: a lean entry waits for every one before it exits.
    await expect
      .poll(() => sent.find((m) => m.id === 1))
      .toMatchObject({ error: { code: -32601 } });
    modernUp({ close: async () => undefined });
    expect(sent.filter((m) => m.id === 1)).toHaveLength(1);
  });

  it("keeps the answer a started modern server gave, and answers only once", async () => {
    const { transport, sent } = connection();
    let modernProxy: StdioLike | undefined;
    let closing: Promise<void> | undefined;
    await serveEitherEra(transport, {
      modern: async (proxy) => {
        // It answers server/discover, a little later than the host's fallback.
        proxy.onmessage = (message) => {
          if ("id" in message) {
            setTimeout(() => {
              void proxy.send({ jsonrpc: "2.0", id: message.id, result: { late: true } } as never);
            }, 20);
          }
        };
        await proxy.start();
        modernProxy = proxy;
        return { close: () => (closing = new Promise((resolve) => setTimeout(resolve, 50))) };
      },
      legacy: async (proxy) => {
        await proxy.start();
        return { close: async () => undefined };
      },
    });
    transport.onmessage!(request("server/discover") as never);
    await expect.poll(() => modernProxy).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    transport.onmessage!({ ...request("initialize"), id: 2 } as never);
    await expect.poll(() => sent.filter((m) => m.id === 1).length).toBe(1);
    // Once the retired server has closed, nothing it owed is answered a second time.
    await expect.poll(() => closing !== undefined).toBe(true);
    await closing;
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.filter((m) => m.id === 1)).toEqual([
      { jsonrpc: "2.0", id: 1, result: { late: true } },
    ]);
  });
});

describe("a host reaching a server that speaks only the legacy era", () => {
  it("has its server/discover answered by the legacy side, as that server answers it, and is served legacy", async () => {
    const { transport } = connection();
    const opened: string[] = [];
    const legacyGot: string[] = [];
    let legacyOnly = true;
    const servers = {
      legacyOnly: () => legacyOnly,
      modern: async () => {
        opened.push("modern");
        return { close: async () => undefined };
      },
      legacy: async (proxy: StdioLike) => {
        opened.push("legacy");
        proxy.onmessage = (message) => {
          if ("method" in message) legacyGot.push(message.method);
        };
        await proxy.start();
        return { close: async () => undefined };
      },
    };
    await serveEitherEra(transport, servers);
    transport.onmessage!(request("server/discover") as never);
    transport.onmessage!({ ...request("initialize"), id: 2 } as never);
    // One legacy session from the probe on (SDK v1 answers a method it lacks "Method not
    // found"), no modern server made for it.
    await expect.poll(() => legacyGot).toEqual(["server/discover", "initialize"]);
    expect(opened).toEqual(["legacy"]);

    // Asked at each opening: once the servers are found to speak both eras, the next
    // connection's probe is served modern.
    legacyOnly = false;
    const next = connection();
    await serveEitherEra(next.transport, servers);
    next.transport.onmessage!(request("server/discover") as never);
    await expect.poll(() => opened).toEqual(["legacy", "modern"]);
  });
});

describe("a modern server's input key, on its way to the host", () => {
  it("rides in the question's _meta and comes out again, the rest untouched", () => {
    const asked = keyed(
      { method: "elicitation/create", params: { message: "Name?", _meta: { trace: "t" } } },
      "user_name",
    );
    expect(asked.params?._meta).toEqual({ trace: "t", [INPUT_KEY_META]: "user_name" });
    expect(splitInputKey(asked.params)).toEqual({
      key: "user_name",
      params: { message: "Name?", _meta: { trace: "t" } },
    });
  });

  it("leaves a question without one as it is", () => {
    const params = { message: "Name?" };
    expect(splitInputKey(params)).toEqual({ key: undefined, params });
    const onlyKey = keyed({ method: "sampling/createMessage", params: { maxTokens: 5 } }, "k");
    expect(splitInputKey(onlyKey.params)).toEqual({ key: "k", params: { maxTokens: 5 } });
  });
});
