/**
 * Both eras upstream: servers that speak only 2026-07-28 (SDK v2 with
 * `legacy: 'reject'`, test/fixtures/modern-*.mjs) served through the real daemon to legacy
 * hosts — the SDK v1 Client through `mcpool bridge`, and our client library — listed,
 * called and answered; the era found once and kept with the tools cache, so a restarted
 * daemon sends no probe (the fixture's log of request methods shows it); a pinned row
 * that does not match fails naming both eras.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { client, runCli, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { stdioBridge } from "../helpers/bridge.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const ECHO = fixture("echo.mjs");
const MODERN_STDIO = fixture("modern-stdio.mjs");

/** The request methods a modern fixture logged, in order. */
function methods(log: string): string[] {
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

/** The modern HTTP fixture, once it says where it listens. */
async function modernHttp(log: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fixture("modern-http.mjs")], {
    env: { ...process.env, MODERN_LOG: log },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await waitFor(() => /listening \S+/.test(out), 10_000, "the modern HTTP fixture to listen");
  return { url: /listening (\S+)/.exec(out)![1] as string, child };
}

async function stopChild(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  if (pid !== undefined) await waitFor(() => !alive(pid), 10_000, "the fixture to exit");
}

/** A call's text: pool.call() answers it as a string, an SDK Client as content. */
function text(result: unknown): string {
  if (typeof result === "string") return result;
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

describe("a modern-only server, served through the pool to a legacy host", () => {
  const home = testHome("mcpool-eras-");
  const stdioLog = join(home.dir, "modern-stdio.log");
  const httpLog = join(home.dir, "modern-http.log");
  let http: { url: string; child: ChildProcess };
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;

  const servers = (): Record<string, unknown> => ({
    modern: { command: process.execPath, args: [MODERN_STDIO], env: { MODERN_LOG: stdioLog } },
    remote: { type: "http", url: http.url },
    echo: { command: process.execPath, args: [ECHO] },
  });

  async function ready(ids: string[]): Promise<void> {
    await waitFor(
      async () => {
        const state = await pool!.state();
        return ids.every((id) => state.find((s) => s.id === id)?.status === "ready");
      },
      20_000,
      `${ids.join(", ")} to be ready`,
    );
  }

  beforeAll(async () => {
    http = await modernHttp(httpLog);
    home.writeConfig(servers());
    daemon = await startDaemon(home);
    pool = await client(home);
    await ready(["modern", "remote", "echo"]);
  });

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    if (http) await stopChild(http.child);
    home.remove();
  });

  it("lists and calls a modern-only stdio and HTTP server through our client library, and says their era", async () => {
    const tools = (await pool!.tools()).map((t) => t.function.name);
    for (const name of ["modern__echo", "modern__add", "remote__echo", "remote__whoami"]) {
      expect(tools).toContain(name);
    }
    expect(text(await pool!.call("modern__echo", { text: "over stdio" }))).toBe("over stdio");
    expect(text(await pool!.call("remote__add", { a: 2, b: 3 }))).toBe("5");
    const state = await pool!.state();
    const era = (id: string) => {
      const s = state.find((server) => server.id === id)!;
      return [s.era, s.protocolVersion];
    };
    expect(era("modern")).toEqual(["modern", "2026-07-28"]);
    expect(era("remote")).toEqual(["modern", "2026-07-28"]);
    expect(era("echo")).toEqual(["legacy", "2025-11-25"]);
    // Each modern request named the pool in its _meta envelope.
    const whoami = JSON.parse(text(await pool!.call("modern__whoami", {}))) as {
      era: string;
      clientInfo: { name: string } | null;
    };
    expect(whoami.era).toBe("modern");
    expect(whoami.clientInfo?.name).toMatch(/mcpool/);
  });

  it("serves them to the SDK v1 Client through mcpool bridge", async () => {
    const bridge = await stdioBridge(home);
    try {
      const listed = (await bridge.client.listTools()).tools.map((t) => t.name);
      expect(listed).toContain("modern__confirm");
      expect(listed).toContain("remote__echo");
      const result = await bridge.client.callTool({
        name: "remote__echo",
        arguments: { text: "through the bridge" },
      });
      expect(text(result)).toBe("through the bridge");
      const stdio = await bridge.client.callTool({
        name: "modern__add",
        arguments: { a: 1, b: 1 },
      });
      expect(text(stdio)).toBe("2");
    } finally {
      await bridge.close();
    }
  });

  it("answers a modern server's input_required with the host's elicitation, and retries with the answer", async () => {
    const bridge = await stdioBridge(home, ["--server", "modern"], { elicitation: {} });
    try {
      let asked: unknown;
      bridge.client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked = request.params;
        return { action: "accept", content: { answer: "yes" } };
      });
      const result = await bridge.client.callTool({
        name: "confirm",
        arguments: { question: "Ship it?" },
      });
      expect(asked).toMatchObject({ message: "Ship it?" });
      expect(text(result)).toBe("answered: yes");
    } finally {
      await bridge.close();
    }
  });

  it("sends a modern server's input_required to exactly the host whose call got it, while two hosts call at once", async () => {
    // Host A's question is asked only once host B's call has reached the server, and B's
    // only once A's was answered: when A's question comes, both calls are in flight and B's
    // is the most recent — where a legacy server's elicitation goes, and wrong.
    const hosts = await Promise.all(
      ["A", "B"].map((name) =>
        stdioBridge(home, ["--server", "modern"], { elicitation: {} }).then((bridge) => {
          const asked: string[] = [];
          bridge.client.setRequestHandler(ElicitRequestSchema, (request) => {
            asked.push(request.params.message);
            return { action: "accept", content: { answer: `from ${name}` } };
          });
          return { bridge, asked };
        }),
      ),
    );
    try {
      const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
      const first = a.bridge.client.callTool({
        name: "confirm",
        arguments: { question: "for A", waitFor: "for B" },
      });
      const second = b.bridge.client.callTool({
        name: "confirm",
        arguments: { question: "for B", waitFor: "answered:for A" },
      });
      const [one, two] = await Promise.all([first, second]);
      expect([a.asked, b.asked]).toEqual([["for A"], ["for B"]]);
      expect([text(one), text(two)]).toEqual(["answered: from A", "answered: from B"]);
    } finally {
      await Promise.all(hosts.map((host) => host.bridge.close()));
    }
  });

  it("answers a modern server's roots/list in input_required with the calling host's own roots", async () => {
    const bridge = await stdioBridge(home, ["--server", "modern"], {
      roots: { listChanged: true },
    });
    try {
      bridge.client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: [{ uri: "file:///projects/alpha", name: "alpha" }],
      }));
      const result = await bridge.client.callTool({ name: "roots", arguments: {} });
      expect(JSON.parse(text(result))).toEqual(["file:///projects/alpha"]);
    } finally {
      await bridge.close();
    }
  });

  it("names each calling host's own capabilities in the modern server's envelope", async () => {
    const seen: Record<string, unknown>[] = [];
    const ui = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
    for (const declared of [{}, { sampling: {} }, { extensions: ui }]) {
      const bridge = await stdioBridge(home, ["--server", "modern"], declared);
      try {
        const result = await bridge.client.callTool({ name: "whoami", arguments: {} });
        seen.push(
          (JSON.parse(text(result)) as { capabilities: Record<string, unknown> }).capabilities,
        );
      } finally {
        await bridge.close();
      }
    }
    expect(seen[0]).not.toHaveProperty("sampling");
    expect(seen[0]).not.toHaveProperty("elicitation");
    expect(seen[1]).toHaveProperty("sampling");
    expect(seen[2]).toMatchObject({ extensions: ui });
    expect(seen[0]).not.toHaveProperty("extensions");
  });

  it("shows the era and version in `mcpool status` and `status --json`", () => {
    const human = runCli(home, "status");
    expect(human.stdout).toMatch(/^modern\s+ready\s.*\s2026-07-28\s*$/m);
    expect(human.stdout).toMatch(/^echo\s+ready\s.*\s2025-11-25\s*$/m);
    const json = JSON.parse(runCli(home, "status", "--json").stdout) as {
      servers: { id: string; era?: string; protocolVersion?: string }[];
    };
    const remote = json.servers.find((s) => s.id === "remote");
    expect([remote?.era, remote?.protocolVersion]).toEqual(["modern", "2026-07-28"]);
  });

  it("keeps the verdict with the tools cache: a restarted daemon sends no probe and no initialize", async () => {
    await pool!.close();
    pool = undefined;
    await daemon!.stop();
    daemon = undefined;
    rmSync(stdioLog, { force: true });
    rmSync(httpLog, { force: true });
    daemon = await startDaemon(home);
    pool = await client(home);
    await ready(["modern", "remote", "echo"]);
    expect(text(await pool.call("modern__echo", { text: "again" }))).toBe("again");
    expect(text(await pool.call("remote__echo", { text: "again" }))).toBe("again");
    for (const log of [stdioLog, httpLog]) {
      const seen = methods(log);
      expect(seen).toContain("tools/list");
      expect(seen).not.toContain("server/discover");
      expect(seen).not.toContain("initialize");
    }
  });
});

describe("a row's protocol pin", () => {
  const home = testHome("mcpool-era-pin-");
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;

  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    await daemon?.stop();
    daemon = undefined;
  });
  afterAll(() => home.remove());

  async function errorOf(id: string): Promise<string> {
    let error: string | undefined;
    await waitFor(
      async () => {
        const server = (await pool!.state()).find((s) => s.id === id);
        error = server?.error;
        return error !== undefined;
      },
      20_000,
      `${id} to fail`,
    );
    return error as string;
  }

  it("fails a legacy-pinned row whose server speaks only 2026-07-28, and a modern-pinned legacy one, naming both eras", async () => {
    // Over HTTP the server refuses the legacy handshake with a 4xx whose body is its
    // JSON-RPC error: the pin's verdict reads that error's code and versions.
    const http = await modernHttp(join(home.dir, "modern-http.log"));
    home.writeConfig({
      "old-pin": { command: process.execPath, args: [MODERN_STDIO], protocol: "legacy" },
      "old-pin-http": { type: "http", url: http.url, protocol: "legacy" },
      "new-pin": { command: process.execPath, args: [ECHO], protocol: "2026-07-28" },
    });
    daemon = await startDaemon(home);
    pool = await client(home);
    try {
      for (const id of ["old-pin", "old-pin-http"]) {
        const legacyPinned = await errorOf(id);
        expect(legacyPinned).toMatch(
          /pinned to the legacy era .* speaks the modern era \(2026-07-28/,
        );
        expect(legacyPinned).toMatch(/"protocol": "2026-07-28"/);
      }
    } finally {
      await stopChild(http.child);
    }
    const modernPinned = await errorOf("new-pin");
    expect(modernPinned).toMatch(/pinned to the modern era .* speaks the legacy era \(initialize/);
    expect(modernPinned).toMatch(/"protocol": "legacy"/);
  });

  it("serves a row pinned to the era its server speaks", async () => {
    home.writeConfig({
      modern: { command: process.execPath, args: [MODERN_STDIO], protocol: "2026-07-28" },
      echo: { command: process.execPath, args: [ECHO], protocol: "legacy" },
    });
    daemon = await startDaemon(home);
    pool = await client(home);
    expect(text(await pool.call("modern__echo", { text: "pinned" }))).toBe("pinned");
    expect(text(await pool.call("echo__echo", { text: "pinned" }))).toBe("pinned");
  });
});
