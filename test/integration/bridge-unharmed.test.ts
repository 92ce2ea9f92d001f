/**
 * What passes through the pool unharmed, as a real SDK host sees
 * it on every stdio way to the pool (the SDK bridge, the lean bridge, the perl pipe): a
 * server's extension capabilities (MCP Apps), its tools' `icons`, `execution` and `_meta`,
 * the request `_meta` a host sends with a call (trace context), the extensions a host
 * declares (the server sees the host's own, and offers it what it offers such a host), and,
 * for the whole-pool bridge, every server's instructions, each under its own heading.
 */
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import {
  BRIDGE_PATHS,
  bridgeCommand,
  scopeSocket,
  stdioBridge,
  stringEnv,
  type StdioBridge,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { existsSync } from "node:fs";

const UI = "io.modelcontextprotocol/ui";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe.each(BRIDGE_PATHS)("through the %s path", (via) => {
  let home: TestHome;
  let daemon: RunningDaemon;
  const hosts: StdioBridge[] = [];
  const open = async (
    args: string[],
    capabilities: ClientCapabilities = {},
  ): Promise<StdioBridge> => {
    if (via !== "sdk") {
      await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the MCP socket");
    }
    const host = await stdioBridge(home, args, capabilities, via);
    hosts.push(host);
    return host;
  };

  beforeAll(async () => {
    home = testHome("mcpool-unharmed-");
    const row = (name: string) => ({
      command: process.execPath,
      args: [fixture("unharmed.mjs")],
      env: { UNHARMED_NAME: name },
    });
    home.writeConfig({
      alpha: row("alpha"),
      beta: row("beta"),
      // 2026-07-28 only: beside it the pool's modern hosts are served in their era (a
      // bridge whose servers all speak only legacy serves them as such a server does direct).
      cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
    });
    daemon = await startDaemon(home);
    const pool = await poolClient(home);
    try {
      await waitFor(
        async () => (await pool.state()).every((s) => s.status === "ready"),
        30_000,
        "both servers ready",
      );
    } finally {
      await pool.close();
    }
  });

  afterAll(async () => {
    for (const host of hosts) await host.close();
    await daemon?.stop();
    home?.remove();
  });

  it("gives one server's host its extension, its tool's icons, execution and _meta, and forwards the call's _meta", async () => {
    const { client } = await open(["--server", "alpha", "--socket", home.socketPath]);
    expect(client.getServerCapabilities()?.extensions?.[UI]).toEqual({
      mimeTypes: ["text/html;profile=mcp-app"],
    });
    expect(client.getInstructions()).toBe("Ask alpha before you guess.");
    const [tool] = (await client.listTools()).tools;
    expect(tool).toMatchObject({
      name: "echo-meta",
      icons: [{ src: "https://example.com/icon.png", mimeType: "image/png", sizes: ["48x48"] }],
      execution: { taskSupport: "forbidden" },
      _meta: { [UI]: { resourceUri: "ui://unharmed/app.html" } },
    });
    const result = (await client.callTool({
      name: "echo-meta",
      arguments: {},
      _meta: { traceparent: TRACEPARENT, "mcpool/conversationId": "c1", vendor: { k: 1 } },
    })) as CallToolResult;
    const seen = JSON.parse((result.content[0] as { text: string }).text) as Record<
      string,
      unknown
    >;
    // The host's keys reach the server; the pool's own never do.
    expect(seen).toEqual({ traceparent: TRACEPARENT, vendor: { k: 1 } });
  });

  it("lets a server see each host's own extensions, and offer an MCP Apps host what it offers one", async () => {
    const declared = { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } };
    const args = ["--server", "alpha", "--socket", home.socketPath];
    const apps = await open(args, { extensions: declared });
    const plain = await open(args);
    const names = async (host: StdioBridge): Promise<string[]> =>
      (await host.client.listTools()).tools.map((tool) => tool.name);
    const seen = async (host: StdioBridge): Promise<unknown> => {
      const result = (await host.client.callTool({
        name: "client-extensions",
        arguments: {},
      })) as CallToolResult;
      return JSON.parse((result.content[0] as { text: string }).text);
    };
    const [appsTools, plainTools, appsSeen, plainSeen] = await Promise.all([
      names(apps),
      names(plain),
      seen(apps),
      seen(plain),
    ]);
    expect(appsTools).toEqual(["echo-meta", "client-extensions", "show-app"]);
    expect(plainTools).toEqual(["echo-meta", "client-extensions"]);
    expect(appsSeen).toEqual(declared);
    expect(plainSeen).toBeNull();
  });

  // Over the whole pool: a one-server bridge on a legacy-only server refuses a pinned modern
  // host, as that server does direct.
  it("lets a legacy server see a modern host's own extensions (its envelope's), through the pool", async () => {
    const declared = { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } };
    const args = ["--socket", home.socketPath];
    if (via !== "sdk") {
      await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the MCP socket");
    }
    const transport = new ModernStdioTransport({
      ...bridgeCommand(home, args, via),
      env: stringEnv(home.env),
      stderr: "pipe",
    });
    const modern = new ModernClient(
      { name: "modern-host", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { extensions: declared },
      },
    );
    await modern.connect(transport);
    const pid = transport.pid;
    try {
      expect(modern.getProtocolEra()).toBe("modern");
      const { tools } = await modern.listTools();
      expect(tools.map((tool) => tool.name)).toContain("alpha__show-app");
      const result = await modern.callTool({ name: "alpha__client-extensions", arguments: {} });
      const text = (result.content as { type: string; text?: string }[])[0]?.text ?? "";
      expect(JSON.parse(text)).toEqual(declared);
    } finally {
      await modern.close().catch(() => undefined);
      if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
    }
  });

  it("gives the whole-pool host every server's instructions, each under its own heading", async () => {
    const { client } = await open(["--socket", home.socketPath]);
    const instructions = client.getInstructions() ?? "";
    expect(instructions).toContain("## alpha (tools alpha__*)\n\nAsk alpha before you guess.");
    expect(instructions).toContain("## beta (tools beta__*)\n\nAsk beta before you guess.");
    expect(client.getServerCapabilities()?.extensions?.[UI]).toBeDefined();
  });
});
