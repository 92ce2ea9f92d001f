/**
 * Traffic back to the caller and passthrough in the pool, over in-memory
 * servers: progress, elicitation routing, cancellation upstream, and the requests beyond
 * tools, with the server's side of each observed directly.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  McpPool,
  McpPoolError,
  type CallProgress,
  type McpPoolOptions,
  type ElicitParams,
  type SampleParams,
  type ServerNotification,
} from "../../src/index.js";
import { makePool, memoryRow } from "../../src/testing/index.js";

const BOUND_MS = 5_000;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), BOUND_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** What the server side saw, across every connection built for it. */
interface Seen {
  aborted: string[];
  answers: Record<string, unknown>[];
  subscribes: string[];
  unsubscribes: string[];
  levels: string[];
  capabilities: Record<string, unknown>[];
  live: Server[];
  /** Resolves the next time a `hold` call reaches the server. */
  held: { promise: Promise<void>; resolve: () => void };
}

function interactive(capabilities: ServerCapabilities = { tools: {} }) {
  const seen: Seen = {
    aborted: [],
    answers: [],
    subscribes: [],
    unsubscribes: [],
    levels: [],
    capabilities: [],
    live: [],
    held: deferred(),
  };
  const build = (): Server => {
    const server = new Server({ name: "interactive", version: "1" }, { capabilities });
    seen.live.push(server);
    server.oninitialized = () => seen.capabilities.push(server.getClientCapabilities() ?? {});
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: ["steps", "ask", "ask-defaults", "hold", "chatter", "sample"].map((name) => ({
        name,
        inputSchema: { type: "object" as const },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
      const tag = String(params.arguments?.tag ?? "");
      const token = extra._meta?.progressToken;
      const progress = (n: number, message: string) =>
        token === undefined
          ? Promise.resolve()
          : extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: n, total: 2, message },
            });
      switch (params.name) {
        case "steps":
          await progress(1, `${tag} 1`);
          await progress(2, `${tag} 2`);
          return text(`${tag} done`);
        case "ask": {
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                message: `${tag}?`,
                requestedSchema: { type: "object", properties: { name: { type: "string" } } },
              },
            },
            ElicitResultSchema,
          );
          seen.answers.push({ tag, ...answer });
          return text(`${tag} got ${answer.action} ${JSON.stringify(answer.content ?? {})}`);
        }
        case "ask-defaults": {
          // A form whose fields have defaults, some nested in a oneOf (SEP-1034).
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                message: `${tag}?`,
                requestedSchema: {
                  type: "object",
                  properties: {
                    name: { type: "string", default: "anon" },
                    count: { type: "integer", default: 3 },
                    mood: { type: "string", enum: ["calm", "busy"], default: "calm" },
                    free: { type: "string" },
                  },
                },
              },
            },
            ElicitResultSchema,
          );
          return text(`${tag} got ${answer.action} ${JSON.stringify(answer.content ?? {})}`);
        }
        case "sample": {
          // The server's own createMessage: refused by the SDK where sampling is not declared.
          try {
            const answer = await server.createMessage({
              messages: [{ role: "user", content: { type: "text", text: `${tag}?` } }],
              maxTokens: 10,
            });
            const said = answer.content as { text?: string };
            return text(`${tag} sampled ${said.text ?? ""}`);
          } catch (error) {
            return text(`${tag} refused ${(error as { code?: unknown }).code ?? "-"}`);
          }
        }
        case "hold":
          seen.held.resolve();
          await new Promise<void>((resolve) =>
            extra.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
          seen.aborted.push(tag);
          return text("cancelled");
        case "chatter":
          // Progress every few ms and no answer: only the call timeout ends it.
          for (let i = 1; !extra.signal.aborted; i++) {
            await progress(i, "still here");
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          return text("never");
        default:
          return text("?");
      }
    });
    if (capabilities.resources) {
      server.setRequestHandler(ListResourcesRequestSchema, ({ params }) => ({
        resources: [{ uri: "mem://a", name: "a" }],
        ...(params?.cursor === undefined ? { nextCursor: "2" } : {}),
      }));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
        resourceTemplates: [{ uriTemplate: "mem://{x}", name: "x" }],
      }));
      server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => ({
        contents: [{ uri: params.uri, text: `contents of ${params.uri}` }],
      }));
      server.setRequestHandler(SubscribeRequestSchema, ({ params }) => {
        seen.subscribes.push(params.uri);
        return {};
      });
      server.setRequestHandler(UnsubscribeRequestSchema, ({ params }) => {
        seen.unsubscribes.push(params.uri);
        return {};
      });
    }
    if (capabilities.prompts) {
      server.setRequestHandler(ListPromptsRequestSchema, () => ({
        prompts: [{ name: "greet", arguments: [{ name: "who", required: true }] }],
      }));
      server.setRequestHandler(GetPromptRequestSchema, ({ params }) => ({
        messages: [
          {
            role: "user" as const,
            content: { type: "text" as const, text: `hello ${params.arguments?.who}` },
          },
        ],
      }));
    }
    if (capabilities.completions) {
      server.setRequestHandler(CompleteRequestSchema, ({ params }) => ({
        completion: { values: [`${params.argument.value}ice`], hasMore: false },
      }));
    }
    if (capabilities.logging) {
      server.setRequestHandler(SetLevelRequestSchema, ({ params }) => {
        seen.levels.push(params.level);
        return {};
      });
    }
    return server;
  };
  return { build, seen };
}

/**
 * A server that writes a call's progress and its answer in one go, the way a stdio child's
 * output arrives in one chunk: every message is delivered from the same call stack.
 */
class BurstTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message) || !("id" in message)) return;
    const { id, method, params } = message;
    const reply = (result: Record<string, unknown>) =>
      this.onmessage?.({ jsonrpc: "2.0", id, result });
    queueMicrotask(() => {
      if (method === "initialize") {
        reply({
          protocolVersion: params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "burst", version: "1" },
        });
      } else if (method === "tools/list") {
        reply({ tools: [{ name: "burst", inputSchema: { type: "object" } }] });
      } else if (method === "tools/call") {
        const progressToken = (params?._meta as { progressToken?: number } | undefined)
          ?.progressToken;
        for (let progress = 1; progress <= 3; progress++) {
          this.onmessage?.({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken, progress },
          });
        }
        reply({ content: [{ type: "text", text: "done" }] });
      }
    });
  }
}

const pools: McpPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(
  server: ReturnType<typeof interactive>,
  options: Partial<McpPoolOptions> = {},
): McpPool {
  const made = makePool({ servers: { s: server.build }, ...options });
  pools.push(made);
  return made;
}

describe("progress", () => {
  it("hands each call its own progress, and only its own", async () => {
    const server = interactive();
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    const a: CallProgress[] = [];
    const b: CallProgress[] = [];
    const [ra, rb] = await Promise.all([
      p.call("s__steps", { tag: "A" }, { onProgress: (x) => a.push(x) }),
      p.call("s__steps", { tag: "B" }, { onProgress: (x) => b.push(x) }),
    ]);
    expect([ra, rb]).toEqual(["A done", "B done"]);
    expect(a.map((x) => x.message)).toEqual(["A 1", "A 2"]);
    expect(b.map((x) => x.message)).toEqual(["B 1", "B 2"]);
    expect(a[0]).toMatchObject({ progress: 1, total: 2 });
  });

  it("keeps the progress a server sends in the same read as its answer", async () => {
    const p = makePool({ servers: {}, createTransport: async () => new BurstTransport() });
    pools.push(p);
    await p.sync([memoryRow("b")]);
    const heard: number[] = [];
    expect(await p.call("b__burst", {}, { onProgress: (x) => heard.push(x.progress) })).toBe(
      "done",
    );
    expect(heard).toEqual([1, 2, 3]);
  });

  it("never extends a call's timeout for progress", async () => {
    const server = interactive();
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    let heard = 0;
    const error = await p
      .call("s__chatter", {}, { timeoutMs: 150, onProgress: () => heard++ })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpPoolError);
    expect(error).toMatchObject({ code: "timeout" });
    expect(heard).toBeGreaterThan(0);
  });
});

describe("elicitation", () => {
  it("declares the capability only when the pool has onElicit: form by default, url on request", async () => {
    const plain = interactive();
    await pool(plain).sync([memoryRow("s")]);
    const form = interactive();
    await pool(form, { onElicit: () => ({ action: "decline" }) }).sync([memoryRow("s")]);
    const both = interactive();
    const decline = () => ({ action: "decline" as const });
    await pool(both, { onElicit: decline, elicitationModes: ["form", "url"] }).sync([
      memoryRow("s"),
    ]);
    expect(plain.seen.capabilities).toEqual([{}]);
    expect(form.seen.capabilities).toEqual([{ elicitation: { form: {} } }]);
    expect(both.seen.capabilities).toEqual([{ elicitation: { form: {}, url: {} } }]);
  });

  it("asks the caller whose call is in flight, the one not already answering first", async () => {
    const server = interactive();
    const fallback: string[] = [];
    const p = pool(server, {
      onElicit: (_id: string, params: ElicitParams) => {
        fallback.push(params.message);
        return { action: "decline" };
      },
    });
    await p.sync([memoryRow("s")]);
    const askedA = deferred<string>();
    const answerA = deferred();
    const a = p.call(
      "s__ask",
      { tag: "A" },
      {
        onElicit: async (params) => {
          askedA.resolve(params.message);
          await answerA.promise;
          return { action: "accept", content: { name: "ay" } };
        },
      },
    );
    expect(await within(askedA.promise, "A to be asked")).toBe("A?");
    // B starts after A and is asked its own question while A is still answering.
    const askedB: string[] = [];
    const b = await p.call(
      "s__ask",
      { tag: "B" },
      {
        onElicit: (params) => {
          askedB.push(params.message);
          return { action: "accept", content: { name: "bee" } };
        },
      },
    );
    expect(b).toBe('B got accept {"name":"bee"}');
    answerA.resolve();
    expect(await a).toBe('A got accept {"name":"ay"}');
    expect(askedB).toEqual(["B?"]);
    expect(fallback).toEqual([]);
  });

  it("falls back to the pool's handler; a pool without one declares nothing and asks no caller", async () => {
    const server = interactive();
    const p = pool(server, {
      onElicit: (serverId: string, params: ElicitParams) => ({
        action: "accept",
        content: { name: `${serverId}:${params.message}` },
      }),
    });
    await p.sync([memoryRow("s")]);
    expect(await p.call("s__ask", { tag: "F" })).toBe('F got accept {"name":"s:F?"}');

    // With no handler of the pool's own the capability is not declared, and a server that
    // asks anyway is refused by the SDK: nothing reaches a caller's handler.
    const bare = interactive();
    const q = pool(bare);
    await q.sync([memoryRow("s")]);
    const asked: string[] = [];
    const error = await q
      .call(
        "s__ask",
        { tag: "N" },
        { onElicit: (x) => (asked.push(x.message), { action: "accept" }) },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpPoolError);
    expect(asked).toEqual([]);
  });

  it("fills the fields an accepted form left out with the schema's defaults (SEP-1034), never what was given", async () => {
    const server = interactive();
    const p = pool(server, { onElicit: () => ({ action: "decline" }) });
    await p.sync([memoryRow("s")]);
    const untouched = await p.call(
      "s__ask-defaults",
      { tag: "U" },
      { onElicit: () => ({ action: "accept" }) },
    );
    expect(untouched).toBe('U got accept {"name":"anon","count":3,"mood":"calm"}');
    const given = await p.call(
      "s__ask-defaults",
      { tag: "G" },
      { onElicit: () => ({ action: "accept", content: { name: "bee", mood: "busy" } }) },
    );
    expect(given).toBe('G got accept {"name":"bee","mood":"busy","count":3}');
    const declined = await p.call("s__ask-defaults", { tag: "D" });
    expect(declined).toBe("D got decline {}");
  });

  it("answers cancel when the handler throws, answers nonsense, or its call ends first", async () => {
    const server = interactive();
    const errors: string[] = [];
    const p = pool(server, {
      onElicit: () => ({ action: "decline" }),
      log: { error: (m: string) => errors.push(m) },
    });
    await p.sync([memoryRow("s")]);
    const thrown = await p.call(
      "s__ask",
      { tag: "T" },
      {
        onElicit: () => {
          throw new Error("no person here");
        },
      },
    );
    expect(thrown).toBe("T got cancel {}");
    expect(errors.join("\n")).toMatch(
      /elicitation handler failed, answered cancel: no person here/,
    );
    const nonsense = await p.call(
      "s__ask",
      { tag: "X" },
      { onElicit: () => ({ action: "maybe" }) as never },
    );
    expect(nonsense).toBe("X got cancel {}");

    // The caller gives up while its handler is still thinking: the server hears cancel.
    const controller = new AbortController();
    const thinking = deferred();
    const call = p
      .call(
        "s__ask",
        { tag: "G" },
        {
          signal: controller.signal,
          onElicit: () => {
            thinking.resolve();
            return new Promise(() => undefined);
          },
        },
      )
      .catch((e: unknown) => e);
    await within(thinking.promise, "the handler to be asked");
    controller.abort();
    await call;
    await within(
      (async () => {
        while (!server.seen.answers.some((a) => a.tag === "G")) {
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
      "the server to hear an answer",
    );
    expect(server.seen.answers.find((a) => a.tag === "G")).toMatchObject({ action: "cancel" });
  });
});

describe("sampling", () => {
  const reply = (value: string) => ({
    role: "assistant" as const,
    content: { type: "text" as const, text: value },
    model: "test-model",
  });
  const said = (params: SampleParams): string =>
    (params.messages[0]?.content as { text?: string } | undefined)?.text ?? "";

  it("declares the capability only when the pool has onSample", async () => {
    const plain = interactive();
    await pool(plain).sync([memoryRow("s")]);
    const sampling = interactive();
    await pool(sampling, { onSample: () => reply("pool") }).sync([memoryRow("s")]);
    expect(plain.seen.capabilities).toEqual([{}]);
    expect(sampling.seen.capabilities).toEqual([{ sampling: {} }]);
  });

  it("asks the caller whose call is in flight: two concurrent callers each get their own", async () => {
    const server = interactive();
    const fallback: string[] = [];
    const p = pool(server, {
      onSample: (_id: string, params: SampleParams) => {
        fallback.push(said(params));
        return reply("pool");
      },
    });
    await p.sync([memoryRow("s")]);
    const askedA = deferred<string>();
    const answerA = deferred();
    const a = p.call(
      "s__sample",
      { tag: "A" },
      {
        onSample: async (params, { serverId }) => {
          askedA.resolve(`${serverId} ${said(params)}`);
          await answerA.promise;
          return reply("from A");
        },
      },
    );
    expect(await within(askedA.promise, "A to be asked")).toBe("s A?");
    // B starts after A and is asked its own while A is still answering.
    const askedB: string[] = [];
    const b = await p.call(
      "s__sample",
      { tag: "B" },
      {
        onSample: (params) => {
          askedB.push(said(params));
          return reply("from B");
        },
      },
    );
    expect(b).toBe("B sampled from B");
    answerA.resolve();
    expect(await a).toBe("A sampled from A");
    expect(askedB).toEqual(["B?"]);
    expect(fallback).toEqual([]);
    // A call without a handler of its own falls back to the pool's.
    expect(await p.call("s__sample", { tag: "F" })).toBe("F sampled pool");
    expect(fallback).toEqual(["F?"]);
  });

  it("refuses with a JSON-RPC error when nobody takes it or the handler fails", async () => {
    // No pool handler: nothing declared, and the SDK refuses the server's request itself.
    const bare = interactive();
    const q = pool(bare);
    await q.sync([memoryRow("s")]);
    const asked: string[] = [];
    const refused = await q.call(
      "s__sample",
      { tag: "N" },
      { onSample: (params) => (asked.push(said(params)), reply("never")) },
    );
    expect(refused).toMatch(/^N refused/);
    expect(asked).toEqual([]);

    // A pool handler that refuses: the server sees its McpError's code.
    const server = interactive();
    const p = pool(server, {
      onSample: () => {
        throw new McpError(ErrorCode.MethodNotFound, "sampling not available");
      },
    });
    await p.sync([memoryRow("s")]);
    expect(await p.call("s__sample", { tag: "R" })).toBe(`R refused ${ErrorCode.MethodNotFound}`);
    const thrown = await p.call(
      "s__sample",
      { tag: "T" },
      {
        onSample: () => {
          throw new Error("no model here");
        },
      },
    );
    expect(thrown).toBe(`T refused ${ErrorCode.InternalError}`);
    // An answer that is not a CreateMessageResult is refused by the SDK, not passed on.
    const nonsense = await p.call(
      "s__sample",
      { tag: "X" },
      { onSample: () => ({ role: "nobody" }) as never },
    );
    expect(nonsense).toBe(`X refused ${ErrorCode.InvalidParams}`);
  });
});

describe("cancellation", () => {
  it("sends notifications/cancelled upstream for an aborted call and forgets it", async () => {
    const server = interactive();
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    const controller = new AbortController();
    const call = p
      .call("s__hold", { tag: "H" }, { signal: controller.signal })
      .catch((e: unknown) => e);
    await within(server.seen.held.promise, "the call to reach the server");
    expect(p.state()[0]?.inflight).toBe(1);
    controller.abort(new Error("the agent changed its mind"));
    expect(await call).toBeInstanceOf(Error);
    expect(p.state()[0]?.inflight).toBeUndefined();
    await within(
      (async () => {
        while (!server.seen.aborted.includes("H")) {
          await new Promise((resolve) => setImmediate(resolve));
        }
      })(),
      "the server to see its request cancelled",
    );
  });
});

describe("passthrough", () => {
  const full: ServerCapabilities = {
    tools: {},
    resources: { subscribe: true },
    prompts: {},
    completions: {},
    logging: {},
  };

  it("passes resources, prompts, completion, ping and logging level through by server id", async () => {
    const server = interactive(full);
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    expect(await p.request("s", "resources/list")).toEqual({
      resources: [{ uri: "mem://a", name: "a" }],
      nextCursor: "2",
    });
    expect(await p.request("s", "resources/list", { cursor: "2" })).toEqual({
      resources: [{ uri: "mem://a", name: "a" }],
    });
    expect((await p.request("s", "resources/templates/list")).resourceTemplates).toHaveLength(1);
    expect(await p.request("s", "resources/read", { uri: "mem://b" })).toEqual({
      contents: [{ uri: "mem://b", text: "contents of mem://b" }],
    });
    expect((await p.request("s", "prompts/list")).prompts[0]?.name).toBe("greet");
    const prompt = await p.request("s", "prompts/get", { name: "greet", arguments: { who: "x" } });
    expect(prompt.messages[0]?.content).toEqual({ type: "text", text: "hello x" });
    const completed = await p.request("s", "completion/complete", {
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "al" },
    });
    expect(completed.completion.values).toEqual(["alice"]);
    expect(await p.request("s", "ping")).toEqual({});
    await p.request("s", "logging/setLevel", { level: "debug" });
    expect(server.seen.levels).toEqual(["debug"]);
  });

  it("refuses with not-offered what the server's capabilities lack, and unknown ids as such", async () => {
    const server = interactive({ tools: {} });
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    for (const method of ["resources/list", "prompts/list", "completion/complete"] as const) {
      const error = await p.request("s", method, undefined as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpPoolError);
      expect(error).toMatchObject({ code: "not-offered", detail: { serverId: "s", method } });
    }
    const level = await p.request("s", "logging/setLevel", { level: "info" }).catch((e) => e);
    expect(level).toMatchObject({ code: "not-offered" });
    const subscribe = await p.subscribeResource("s", "mem://a", () => undefined).catch((e) => e);
    expect(subscribe).toMatchObject({ code: "not-offered" });
    expect(await p.request("s", "ping")).toEqual({});
    expect(await p.request("nope", "ping").catch((e: unknown) => e)).toMatchObject({
      code: "unknown-server",
    });
  });

  it("subscribes once per uri, delivers updates to that uri's listeners only, and resubscribes after a reconnect", async () => {
    const server = interactive(full);
    const p = pool(server);
    await p.sync([memoryRow("s")]);
    const heard: string[] = [];
    const listen = (who: string) => (n: ServerNotification) =>
      heard.push(`${who} ${String(n.params?.uri)}`);
    const offA = await p.subscribeResource("s", "mem://a", listen("one"));
    const offA2 = await p.subscribeResource("s", "mem://a", listen("two"));
    const offB = await p.subscribeResource("s", "mem://b", listen("three"));
    expect(server.seen.subscribes).toEqual(["mem://a", "mem://b"]);

    const updated = async (uri: string): Promise<void> => {
      const before = heard.length;
      await server.seen.live.at(-1)!.sendResourceUpdated({ uri });
      await within(
        (async () => {
          while (heard.length === before) await new Promise((r) => setImmediate(r));
        })(),
        `an update of ${uri}`,
      );
    };
    await updated("mem://b");
    expect(heard).toEqual(["three mem://b"]);
    await updated("mem://a");
    expect(heard.slice(1).sort()).toEqual(["one mem://a", "two mem://a"]);

    await offA();
    expect(server.seen.unsubscribes).toEqual([]);
    await offA2();
    expect(server.seen.unsubscribes).toEqual(["mem://a"]);

    await p.reconnect("s");
    await within(
      (async () => {
        while (server.seen.subscribes.length < 3) await new Promise((r) => setImmediate(r));
      })(),
      "the subscription to be sent again",
    );
    expect(server.seen.subscribes).toEqual(["mem://a", "mem://b", "mem://b"]);
    await offB();
  });
});
