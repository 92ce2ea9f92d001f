/**
 * The dual-era downstream side: a 2026-07-28 host — SDK v2's
 * Client pinned to the modern era, so it sends no `initialize` — through `mcpool bridge`
 * (stdio, the lean bridge on the daemon's MCP socket, `--http`) to a legacy server and to a
 * modern-only one; a legacy server's elicitation during a modern host's call comes back as
 * `input_required` to that host alone while another host calls at once, and the host's
 * retry completes it; a tampered requestState is refused.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MODERN,
  bridgeCommand,
  httpBridge,
  stringEnv,
  type HttpBridgeProcess,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** A call's text, as an SDK Client has it. */
function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

interface ModernHost {
  client: Client;
  close(): Promise<void>;
}

describe("a modern host through mcpool bridge", () => {
  const home = testHome("mcpool-modern-host-");
  /** The `modern` row's server logs each request it receives here (its method). */
  const modernLog = (): string => join(home.dir, "modern-requests.log");
  const modernCalls = (): number =>
    existsSync(modernLog())
      ? readFileSync(modernLog(), "utf8")
          .split("\n")
          .filter((l) => l === "tools/call").length
      : 0;
  let daemon: RunningDaemon | undefined;
  let http: HttpBridgeProcess | undefined;
  const pids: number[] = [];

  /** SDK v2's Client, modern only, over the stdio entry `via` (sdk: the full CLI; lean). */
  async function stdioHost(
    args: string[],
    via: "sdk" | "lean",
    capabilities: Record<string, unknown> = {},
  ): Promise<ModernHost> {
    const transport = new StdioClientTransport({
      ...bridgeCommand(home, args, via),
      env: stringEnv(home.env),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client(
      { name: "modern-host", version: "1.0.0" },
      { ...MODERN, capabilities },
    );
    try {
      await client.connect(transport);
    } catch (error) {
      await transport.close().catch(() => undefined);
      throw new Error(`the bridge did not serve: ${(error as Error).message}\n${stderr}`);
    }
    const pid = transport.pid;
    if (pid !== null) pids.push(pid);
    expect(client.getProtocolEra()).toBe("modern");
    return {
      client,
      async close() {
        await client.close().catch(() => undefined);
        if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
      },
    };
  }

  async function httpHost(capabilities: Record<string, unknown> = {}): Promise<ModernHost> {
    const transport = new StreamableHTTPClientTransport(new URL(http!.url), {
      requestInit: { headers: { authorization: `Bearer ${http!.token}` } },
    });
    const client = new Client(
      { name: "modern-http-host", version: "1.0.0" },
      { ...MODERN, capabilities },
    );
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    return { client, close: () => client.close().catch(() => undefined) };
  }

  beforeAll(async () => {
    home.writeConfig({
      echo: { command: process.execPath, args: [fixture("echo.mjs")] },
      interactive: { command: process.execPath, args: [fixture("interactive.mjs")] },
      modern: {
        command: process.execPath,
        args: [fixture("modern-stdio.mjs")],
        env: { MODERN_LOG: modernLog() },
      },
      conf: { command: process.execPath, args: [fixture("conformance-server.mjs")] },
      // 2026-07-28 only, its lists public: beside it, a legacy server is met in the modern
      // era (a bridge whose servers all speak only legacy serves a modern host as they do).
      cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
    });
    daemon = await startDaemon(home);
    const pool = await poolClient(home);
    await waitFor(
      async () => (await pool.state()).every((s) => s.status === "ready" || s.status === "idle"),
      30_000,
      "the servers to settle",
    );
    await pool.close();
    http = await httpBridge(home, []);
  }, 60_000);

  afterAll(async () => {
    await http?.stop();
    await daemon?.stop();
    for (const pid of pids) await waitFor(() => !alive(pid), 15_000, "every bridge to exit");
    home.remove();
  });

  for (const via of ["sdk", "lean"] as const) {
    it(`lists and calls a legacy and a modern-only server over the ${via} stdio bridge`, async () => {
      const host = await stdioHost([], via);
      try {
        const names = (await host.client.listTools()).tools.map((t) => t.name);
        expect(names).toContain("echo__echo");
        expect(names).toContain("modern__add");
        const legacy = await host.client.callTool({
          name: "echo__echo",
          arguments: { text: "hi" },
        });
        expect(text(legacy)).toContain("hi");
        const modern = await host.client.callTool({
          name: "modern__add",
          arguments: { a: 2, b: 3 },
        });
        expect(text(modern)).toBe("5");
      } finally {
        await host.close();
      }
    }, 60_000);
  }

  it("says a resource is not found as 2026-07-28 does (SEP-2164): -32602 with its URI, on stdio and over HTTP", async () => {
    const hosts = [await stdioHost([], "sdk"), await httpHost()];
    // A bridge over the legacy server and a modern one: a bridge whose servers all speak only
    // legacy refuses a pinned modern host, as such a server does direct.
    const single = await stdioHost(["--servers", "conf,cached"], "sdk");
    try {
      // No server in the pool's scope has it: the pool's own answer.
      for (const host of hosts) {
        await expect(host.client.readResource({ uri: "nowhere://x" })).rejects.toMatchObject({
          code: -32602,
          data: { uri: "nowhere://x" },
        });
      }
      // A legacy server's own -32002 (conformance-server.mjs) reaches a modern host as -32602,
      // with the URI even when the server's error named none.
      for (const uri of ["test://not-there", "test://bare/not-there"]) {
        await expect(single.client.readResource({ uri })).rejects.toMatchObject({
          code: -32602,
          data: { uri },
        });
      }
    } finally {
      await Promise.all([...hosts, single].map((host) => host.close()));
    }
  });

  it("says a list is public when every server in scope says so, private when one says it is its caller's", async () => {
    const legacy = await stdioHost(["--servers", "echo,cached"], "sdk");
    const modern = await stdioHost(["--server", "modern"], "lean");
    const pool = await stdioHost([], "sdk");
    const conf = await stdioHost(["--servers", "conf,cached"], "sdk");
    try {
      expect(await legacy.client.listTools()).toMatchObject({ cacheScope: "public" });
      // One server's entry: that server's own hint, as direct (SDK v2's default, ttlMs 0).
      expect(await modern.client.listTools()).toMatchObject({ cacheScope: "private", ttlMs: 0 });
      // The passthrough lists too: the whole pool's prompts include the modern server's.
      expect(await pool.client.listPrompts()).toMatchObject({ cacheScope: "private" });
      expect(await conf.client.listPrompts()).toMatchObject({ cacheScope: "public" });
    } finally {
      await Promise.all([legacy.close(), modern.close(), pool.close(), conf.close()]);
    }
    // Four bridges, each a process of its own: on a busy machine that is past the default.
  }, 60_000);

  it("lists and calls both over bridge --http, with cache hints on the listing", async () => {
    const host = await httpHost();
    try {
      const listed = await host.client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain("modern__echo");
      // The modern fixture's list is private (SDK v2's default): the pool's list says so too.
      expect(listed).toMatchObject({ ttlMs: expect.any(Number), cacheScope: "private" });
      expect((listed as unknown as { ttlMs: number }).ttlMs).toBeGreaterThan(0);
      const result = await host.client.callTool({ name: "echo__echo", arguments: { text: "web" } });
      expect(text(result)).toContain("web");
    } finally {
      await host.close();
    }
  }, 60_000);

  it("turns a legacy server's elicitation into input_required for the calling host alone, while another host calls at once", async () => {
    // Beside a modern server, so the bridge serves its modern hosts in their era.
    const scope = ["--servers", "interactive,cached"];
    const asking = await stdioHost(scope, "sdk", { elicitation: {} });
    const other = await stdioHost(scope, "sdk", { elicitation: {} });
    const asked: string[] = [];
    const otherAsked: string[] = [];
    asking.client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      return { action: "accept", content: { name: "Ada" } };
    });
    other.client.setRequestHandler("elicitation/create", async (request) => {
      otherAsked.push(String((request.params as { message?: string }).message));
      return { action: "decline" };
    });
    try {
      // The other host's call is in flight first, and stays so until the first one's ends.
      // In flight means at the server: it says "B waiting" (a legacy server's question names
      // no call, so it goes to the most recent caller in flight — README Status).
      let bWaiting = false;
      const waiting = other.client.callTool(
        { name: "interactive__wait", arguments: { tag: "B" } },
        { onprogress: () => void (bWaiting = true) },
      );
      await waitFor(() => bWaiting, 30_000, "the other host's call to reach the server");
      const result = await asking.client.callTool({
        name: "interactive__ask",
        arguments: { tag: "A" },
      });
      expect(asked).toEqual(["A: your name?"]);
      expect(text(result)).toMatch(/^A got .*"accept".*Ada/);
      expect(otherAsked).toEqual([]);
      await other.close();
      await waiting.catch(() => undefined);
    } finally {
      await asking.close();
      await other.close();
    }
  }, 90_000);

  it("puts a modern server's input_required to the host whose call it is, while a later host's call is in flight", async () => {
    const first = await stdioHost(["--server", "modern"], "sdk", { elicitation: {} });
    const second = await stdioHost(["--server", "modern"], "lean", { elicitation: {} });
    const seen: Record<string, string[]> = { first: [], second: [] };
    const answering = (who: "first" | "second") => async (request: { params: unknown }) => {
      seen[who]!.push(String((request.params as { message?: string }).message));
      return { action: "accept" as const, content: { answer: `from ${who}` } };
    };
    first.client.setRequestHandler("elicitation/create", answering("first"));
    second.client.setRequestHandler("elicitation/create", answering("second"));
    try {
      // The second host's call starts once the first's reached the server, and the first
      // call's question comes once the second began (the server waits for it): the most
      // recent caller in flight is the second host's, which is not whose question it is.
      const before = modernCalls();
      const asking = first.client.callTool({
        name: "confirm",
        arguments: { question: "first?", waitFor: "slow 4000" },
      });
      await waitFor(() => modernCalls() > before, 30_000, "the first call to reach the server");
      const sleeping = second.client.callTool({ name: "slow", arguments: { ms: 4_000 } });
      expect(text(await asking)).toBe("answered: from first");
      expect(text(await sleeping)).toBe("slept 4000");
      expect(seen).toEqual({ first: ["first?"], second: [] });
    } finally {
      await first.close();
      await second.close();
    }
  }, 90_000);

  it("refuses a tampered requestState, and answers the untouched one", async () => {
    // By hand over HTTP: the retry is ours to forge (the SDK Client retries by itself).
    const first = await rawCall(http!, 1, { name: "interactive__ask", arguments: { tag: "T" } });
    const asked = first.result as {
      resultType?: string;
      inputRequests?: Record<string, { method: string; params: { message: string } }>;
      requestState?: string;
    };
    expect(asked.resultType, JSON.stringify(asked)).toBe("input_required");
    const [key, question] = Object.entries(asked.inputRequests ?? {})[0]!;
    expect(question).toMatchObject({
      method: "elicitation/create",
      params: { message: "T: your name?" },
    });
    const state = asked.requestState!;
    const flipped = state.at(-3) === "A" ? "B" : "A";
    const tampered = `${state.slice(0, -3)}${flipped}${state.slice(-2)}`;
    const retry = (requestState: string, id: number) =>
      rawCall(http!, id, {
        name: "interactive__ask",
        arguments: { tag: "T" },
        inputResponses: { [key]: { action: "accept", content: { name: "Eve" } } },
        requestState,
      });
    const refused = await retry(tampered, 2);
    expect(refused.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/requestState/),
    });
    const done = await retry(state, 3);
    expect(done.result).toMatchObject({ resultType: "complete" });
    expect(text(done.result)).toMatch(/^T got .*Eve/);
    // Once answered, the same state is spent.
    const again = await retry(state, 4);
    expect(again.error).toMatchObject({ code: -32602 });
  }, 60_000);

  for (const via of ["sdk", "lean"] as const) {
    it(`serves a host that probed with server/discover and then sent initialize in the legacy era, over the ${via} stdio bridge`, async () => {
      // A dual-era host whose probe it gave up on (ai-sdk under load): the stdio binding's
      // fallback is initialize on the same connection, which must be served, not refused.
      const { command, args } = bridgeCommand(home, ["--server", "echo"], via);
      const child = spawn(command, args, {
        env: stringEnv(home.env),
        stdio: ["pipe", "pipe", "pipe"],
      });
      pids.push(child.pid!);
      const lines: Record<string, unknown>[] = [];
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        for (let at = out.indexOf("\n"); at !== -1; at = out.indexOf("\n")) {
          lines.push(JSON.parse(out.slice(0, at)) as Record<string, unknown>);
          out = out.slice(at + 1);
        }
      });
      const send = (message: Record<string, unknown>) =>
        child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
      const answerTo = (id: number) =>
        waitFor(() => lines.some((l) => l.id === id), 30_000, `the answer to ${id}`).then(
          () =>
            lines.find((l) => l.id === id) as { result?: Record<string, unknown>; error?: unknown },
        );
      try {
        const meta = {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "dual-host", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        };
        send({ id: 1, method: "server/discover", params: { _meta: meta } });
        send({
          id: 2,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "dual-host", version: "1.0.0" },
          },
        });
        const initialized = await answerTo(2);
        expect(initialized.error).toBeUndefined();
        expect(initialized.result?.protocolVersion).toBe("2025-11-25");
        send({ method: "notifications/initialized" });
        send({
          id: 3,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "legacy after all" } },
        });
        expect(JSON.stringify((await answerTo(3)).result)).toContain("legacy after all");
      } finally {
        child.stdin!.end();
        await waitFor(() => !alive(child.pid!), 15_000, "the bridge to exit");
      }
    }, 60_000);
  }

  // Last: it changes the pool's servers.
  it("tells a listening modern host, on stdio and over HTTP, that the tools changed", async () => {
    const stdio = await stdioHost([], "lean");
    const web = await httpHost();
    try {
      const changed = [stdio, web].map(
        (host) =>
          new Promise<void>((resolve) =>
            host.client.setNotificationHandler("notifications/tools/list_changed", () => resolve()),
          ),
      );
      for (const host of [stdio, web]) {
        const subscription = await host.client.listen({ toolsListChanged: true });
        expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
      }
      home.writeConfig({
        echo: { command: process.execPath, args: [fixture("echo.mjs")] },
        interactive: { command: process.execPath, args: [fixture("interactive.mjs")] },
        modern: { command: process.execPath, args: [fixture("modern-stdio.mjs")] },
        echo2: { command: process.execPath, args: [fixture("echo.mjs")] },
      });
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(changed),
        new Promise((_, reject) => {
          bound = setTimeout(() => reject(new Error("no tools/list_changed in 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(bound));
      await waitFor(
        async () => (await web.client.listTools()).tools.some((t) => t.name === "echo2__echo"),
        30_000,
        "echo2's tools to be listed",
      );
    } finally {
      await stdio.close();
      await web.close();
    }
  }, 90_000);
});

/** One modern tools/call by hand: the envelope in _meta, the HTTP binding's headers. */
async function rawCall(
  http: HttpBridgeProcess,
  id: number,
  params: Record<string, unknown>,
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "raw-host", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  };
  const response = await fetch(http.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${http.token}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { ...params, _meta: meta },
    }),
  });
  const body = await response.text();
  const messages = response.headers.get("content-type")?.includes("text/event-stream")
    ? body
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5)) as { id?: number })
    : [JSON.parse(body) as { id?: number }];
  const answer = messages.find((m) => m.id === id);
  if (answer === undefined)
    throw new Error(`no answer to request ${id}: ${response.status} ${body}`);
  return answer as { result?: unknown; error?: { code: number; message: string } };
}
