/**
 * A 2026-07-28 host's resources, prompts and completion go where its calls go, through the
 * modern bridge: the server of passthrough-profile.test.ts (test/fixtures/roots-complete.mjs,
 * 2025-11-25, answering its completion, resource list and prompt from its client's roots and
 * capabilities), pooled beside a 2026-07-28-only server so the whole pool serves a dual-era
 * host (SDK v2 on `auto`) in 2026-07-28. Direct, that host falls back to 2025-11-25 with the
 * server: the era allowance (normalise.ts ERA_ENVELOPE) applies, and the whole pool's own
 * names (`<slug>__…`) are read back and the other server's resources left out; the rest is
 * compared. On the lean bridge, whose connection keeps the roots its first call asked for;
 * over `--http` each request stands alone, and a list or completion (which 2026-07-28 lets
 * ask nothing) goes without them (docs/status.md). A `prompts/get` before any call asks for
 * the roots itself, as a call does, on every entry.
 */
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { describe, expect, it } from "vitest";
import { bridgeCommand, httpBridge, scopeSocket, stringEnv } from "../helpers/bridge.js";
import { testHome } from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { openHost } from "./entries.js";
import { connectHost, type Host, type HostSpec, type Target } from "./host.js";
import { compare, normalise } from "./normalise.js";
import { pooling, projectOf } from "./run.js";
import { matrixServers, nodeServer } from "./servers.js";
import { step, type Step } from "./session.js";

const server = nodeServer("rootscomplete", [fixture("roots-complete.mjs")]);

/** The session's steps on `host`, the tool and prompt named `prefix` + their own names. */
async function session(host: Host, prefix: string): Promise<Step[]> {
  return [
    { op: "handshake", result: { era: host.era } },
    await step(host, "tools/call", { name: `${prefix}whoami`, arguments: {} }),
    await step(host, "resources/list", {}),
    await step(host, "prompts/get", { name: `${prefix}project`, arguments: { folder: "x" } }),
    await step(host, "completion/complete", {
      ref: { type: "ref/prompt", name: `${prefix}project` },
      argument: { name: "folder", value: "" },
    }),
  ];
}

/** A prompt that answers the server's roots, got before any call has asked for them. */
async function promptFirst(host: Host, prefix: string): Promise<Step[]> {
  return [
    { op: "handshake", result: { era: host.era } },
    await step(host, "prompts/get", { name: `${prefix}roots` }),
    await step(host, "tools/call", { name: `${prefix}whoami`, arguments: {} }),
  ];
}

/** The whole pool's steps as the one server's: its names read back, only its resources. */
function asOneServer(steps: readonly Step[]): Step[] {
  const own = steps.map((s) => {
    if (s.op !== "resources/list" || s.result === undefined) return s;
    const result = s.result as { resources: { _meta?: Record<string, unknown> }[] };
    const resources = result.resources.filter((r) => r._meta?.["mcpool/server"] === server.id);
    return { ...s, result: { ...result, resources } };
  });
  return JSON.parse(JSON.stringify(own).replaceAll(`${server.id}__`, "")) as Step[];
}

describe("a 2026-07-28 host's resources, prompts and completion go where its calls go", () => {
  const home = testHome("mcpool-differential-passthrough-modern-");
  const modern = matrixServers(home.dir).find((s) => s.id === "modern")!;
  pooling(home, [server, modern]);

  const spec = (): HostSpec => ({
    client: "v2",
    capabilities: "roots",
    root: projectOf(home, "v2"),
  });

  async function direct(steps = session): Promise<Step[]> {
    const host = await openHost(home, server, spec(), "direct");
    try {
      return normalise(await steps(host, ""));
    } finally {
      await host.close();
    }
  }

  /** `steps` through a modern host of `target`, as the one server's, compared with direct. */
  async function asDirect(steps: typeof session, target: Target): Promise<void> {
    const want = await direct(steps);
    const host = await connectHost(spec(), target);
    try {
      expect(host.era).toBe("modern");
      const got = normalise(asOneServer(await steps(host, `${server.id}__`)));
      expect(compare(want, got).join("\n")).toBe("");
    } finally {
      await host.close();
    }
  }

  const lean = async (): Promise<Extract<Target, { kind: "stdio" }>> => {
    const args = ["--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the pool's MCP socket");
    return { kind: "stdio", ...bridgeCommand(home, args, "lean"), env: stringEnv(home.env) };
  };

  it("through the lean bridge of the whole pool, as direct", async () => {
    await asDirect(session, await lean());
  }, 120_000);

  it("asks for the roots before a prompt that comes before any call, on the lean bridge and over --http", async () => {
    await asDirect(promptFirst, await lean());
    const bridge = await httpBridge(home, ["--socket", home.socketPath]);
    try {
      await asDirect(promptFirst, { kind: "http", url: bridge.url, token: bridge.token });
    } finally {
      await bridge.stop();
    }
  }, 180_000);
  it("tells a host that listed before its roots were known that its resources changed, on the lean bridge", async () => {
    // Direct, the host falls back to 2025-11-25 and the server has its roots from the start.
    const want = await direct(async (host) => [
      { op: "handshake", result: { era: host.era } },
      await step(host, "resources/list", {}),
    ]);
    const client = new Client(
      { name: "differential-host", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true } }, versionNegotiation: { mode: "auto" } },
    );
    const uri = pathToFileURL(spec().root).href;
    client.setRequestHandler("roots/list", () => ({ roots: [{ uri, name: "project" }] }));
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler("notifications/resources/list_changed", () => resolve()),
    );
    const target = await lean();
    await client.connect(new StdioClientTransport({ ...target, stderr: "ignore" }));
    try {
      expect(client.getProtocolEra()).toBe("modern");
      await client.listen({ resourcesListChanged: true });
      // Listed before any request could ask for the roots: 2026-07-28 lets no listing ask.
      const before = (await client.listResources()) as { resources: { uri: string }[] };
      expect(before.resources.map((r) => r.uri)).not.toContain(uri);
      await client.callTool({ name: `${server.id}__whoami`, arguments: {} });
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        changed,
        new Promise((_, reject) => {
          bound = setTimeout(() => reject(new Error("no resources/list_changed in 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(bound));
      const listed = { op: "resources/list", params: {}, result: await client.listResources() };
      const got = normalise(asOneServer([{ op: "handshake", result: { era: "modern" } }, listed]));
      expect(compare(want, got).join("\n")).toBe("");
    } finally {
      await client.close();
    }
  }, 120_000);

  /**
   * The list_changed notifications a dual-era host hears on `target` while it makes two calls
   * at once and then a third, by kind: each call's result comes after any notification sent
   * before it, and a listing after the calls drains the stream.
   */
  async function changesOver(
    target: Extract<Target, { kind: "stdio" }>,
    prefix: string,
  ): Promise<Record<string, number>> {
    const client = new Client(
      { name: "differential-host", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true } }, versionNegotiation: { mode: "auto" } },
    );
    const uri = pathToFileURL(spec().root).href;
    client.setRequestHandler("roots/list", () => ({ roots: [{ uri, name: "project" }] }));
    const heard: Record<string, number> = { tools: 0, resources: 0, prompts: 0 };
    for (const kind of Object.keys(heard)) {
      const method = `notifications/${kind}/list_changed` as const;
      client.setNotificationHandler(method as never, () => void (heard[kind]! += 1));
    }
    await client.connect(new StdioClientTransport({ ...target, stderr: "ignore" }));
    try {
      if (client.getProtocolEra() === "modern") {
        await client.listen({
          toolsListChanged: true,
          resourcesListChanged: true,
          promptsListChanged: true,
        });
      }
      const call = { name: `${prefix}whoami`, arguments: {} };
      await Promise.all([client.callTool(call), client.callTool(call)]);
      await client.callTool(call);
      await client.listResources();
      return heard;
    } finally {
      await client.close();
    }
  }

  it("tells a host its lists changed once for its roots, not again for each call that carried them", async () => {
    const env = stringEnv(home.env);
    const direct = { kind: "stdio" as const, command: server.command, args: server.args, env };
    // Direct, no call changes a list.
    expect(await changesOver(direct, "")).toEqual({ tools: 0, resources: 0, prompts: 0 });
    // Pooled, a connection that had no roots before its first calls asked them is told its
    // lists changed: once, though both calls asked and carried the same roots back.
    const pooled = await changesOver(await lean(), `${server.id}__`);
    expect(pooled).toEqual({ tools: 1, resources: 1, prompts: 1 });
  }, 120_000);
});
