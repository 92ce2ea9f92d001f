/**
 * The calling agent in a modern server's envelope: through a real daemon and
 * `mcpool bridge` (stdio), a legacy host (SDK v1 Client) and a modern host (SDK v2 Client,
 * pinned to 2026-07-28), calling a modern-only server at once, each reach it with its own
 * clientInfo and its own log level (the legacy host's last logging/setLevel, the modern
 * host's own envelope), and each gets the server's log lines by its own level; a library
 * caller names its clientInfo at connect or per call, is refused a bad one with -32602, and
 * without one the server reads the pool's, with no level.
 */
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { connect } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODERN, bridgeCommand, stringEnv } from "../helpers/bridge.js";
import {
  client as poolClient,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

interface Seen {
  clientInfo: { name?: string; version?: string; title?: string } | null;
  logLevel: string | null;
}

/** The envelope a tool or prompt of modern-envelope.mjs answered. */
function seen(result: unknown): Seen {
  const { content, messages } = result as {
    content?: { text?: string }[];
    messages?: { content: { text?: string } }[];
  };
  const text = content?.[0]?.text ?? messages?.[0]?.content.text ?? "";
  return JSON.parse(text) as Seen;
}

describe("the calling agent in a modern server's envelope", () => {
  const home = testHome("mcpool-caller-");
  let daemon: RunningDaemon | undefined;
  const pids: number[] = [];

  /** `close` that waits for the bridge process to exit. */
  function closer(close: () => Promise<void>, pid: number | null | undefined) {
    if (pid !== null && pid !== undefined) pids.push(pid);
    return async () => {
      await close().catch(() => undefined);
      if (pid !== null && pid !== undefined) {
        await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
      }
    };
  }

  async function legacyHost(
    info: { name: string; version: string; title?: string },
    args: string[] = [],
  ) {
    const transport = new LegacyStdio({
      ...bridgeCommand(home, args, "sdk"),
      env: stringEnv(home.env),
      stderr: "pipe",
    });
    const client = new LegacyClient(info, { capabilities: {} });
    await client.connect(transport);
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String(n.params.data));
    });
    return { client, logs, close: closer(() => client.close(), transport.pid) };
  }

  async function modernHost(info: { name: string; version: string }) {
    const transport = new StdioClientTransport({
      ...bridgeCommand(home, [], "sdk"),
      env: stringEnv(home.env),
      stderr: "pipe",
    });
    const client = new Client(info, { ...MODERN, capabilities: {} });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const logs: string[] = [];
    client.setNotificationHandler("notifications/message", (n) => {
      logs.push(String(n.params.data));
    });
    return { client, logs, close: closer(() => client.close(), transport.pid) };
  }

  beforeAll(async () => {
    home.writeConfig({
      env: {
        command: process.execPath,
        args: [fixture("modern-envelope.mjs")],
        protocol: "2026-07-28",
      },
    });
    daemon = await startDaemon(home);
    await serversReady(home);
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    for (const pid of pids) await waitFor(() => !alive(pid), 15_000, "every bridge to exit");
    home.remove();
  });

  it("gives a legacy and a modern host calling at once each its own clientInfo and level", async () => {
    const legacy = await legacyHost({ name: "legacy-host", version: "1.2.3", title: "Legacy" });
    const modern = await modernHost({ name: "modern-host", version: "2.0.0" });
    try {
      await legacy.client.setLoggingLevel("info");
      // Each call waits at the server for the other: both are in flight together.
      const [fromLegacy, fromModern] = await Promise.all([
        legacy.client.callTool({ name: "env__envelope", arguments: { mark: "L", waitFor: "M" } }),
        modern.client.callTool({
          name: "env__envelope",
          arguments: { mark: "M", waitFor: "L" },
          _meta: { [LOG_LEVEL]: "warning" },
        }),
      ]);
      expect(seen(fromLegacy)).toEqual({
        clientInfo: { name: "legacy-host", version: "1.2.3", title: "Legacy" },
        logLevel: "info",
      });
      expect(seen(fromModern)).toEqual({
        clientInfo: { name: "modern-host", version: "2.0.0" },
        logLevel: "warning",
      });
      // The server logged each request at the level that request named; each host hears
      // its own request's lines at its level, none below it.
      await waitFor(
        () => legacy.logs.includes("L:warning") && modern.logs.includes("M:warning"),
        10_000,
        "each host's log lines",
      );
      expect(legacy.logs).toContain("L:info");
      expect(legacy.logs).not.toContain("L:debug");
      expect(modern.logs).not.toContain("M:info");
      expect(modern.logs.every((line) => line.endsWith(":warning"))).toBe(true);

      // prompts/get carries the calling host too, in either era.
      const prompt = await legacy.client.getPrompt({ name: "env__envelope" });
      expect(seen(prompt)).toEqual(seen(fromLegacy));
      const modernPrompt = await modern.client.getPrompt({
        name: "env__envelope",
        _meta: { [LOG_LEVEL]: "error" },
      });
      expect(seen(modernPrompt)).toEqual({
        clientInfo: seen(fromModern).clientInfo,
        logLevel: "error",
      });
    } finally {
      await Promise.all([legacy.close(), modern.close()]);
    }
  }, 60_000);

  it("tells a modern server a modern host asked for no level, whatever level another host set", async () => {
    // A one-server bridge used to pass a host's level on to the server's connection.
    const loud = await legacyHost({ name: "loud-host", version: "1.0.0" }, ["--server", "env"]);
    const modern = await modernHost({ name: "quiet-host", version: "1.0.0" });
    try {
      await loud.client.setLoggingLevel("debug");
      const result = await modern.client.callTool({
        name: "env__envelope",
        arguments: { mark: "Q" },
      });
      expect(seen(result)).toEqual({
        clientInfo: { name: "quiet-host", version: "1.0.0" },
        logLevel: null,
      });
      expect(modern.logs).toEqual([]);
    } finally {
      await Promise.all([loud.close(), modern.close()]);
    }
  }, 60_000);

  it("names a library caller's clientInfo, and the pool's for a caller with none", async () => {
    const plain = await poolClient(home);
    const named = await connect({
      socketPath: home.socketPath,
      clientName: "test",
      clientInfo: { name: "library-agent", version: "0.1.0" },
    });
    try {
      const pools = seen(await plain.call("env__envelope", { mark: "P" }, { raw: true }));
      expect(pools.clientInfo?.name).toBe("mcpool");
      expect(pools.logLevel).toBeNull();
      // logging/setLevel on a modern server: the level of requests that name no caller.
      await plain.setLoggingLevel("env", "notice");
      const leveled = seen(await plain.call("env__envelope", { mark: "V" }, { raw: true }));
      expect(leveled).toEqual({ clientInfo: pools.clientInfo, logLevel: "notice" });
      // A caller that names itself asked for no level: it is not the connection's.
      const own = seen(await named.call("env__envelope", { mark: "N" }, { raw: true }));
      expect(own).toEqual({
        clientInfo: { name: "library-agent", version: "0.1.0" },
        logLevel: null,
      });
      const perCall = seen(
        await plain.call(
          "env__envelope",
          { mark: "C" },
          {
            raw: true,
            caller: { clientInfo: { name: "per-call", version: "3" }, logLevel: "error" },
          },
        ),
      );
      expect(perCall).toEqual({
        clientInfo: { name: "per-call", version: "3" },
        logLevel: "error",
      });
    } finally {
      await Promise.all([plain.close(), named.close()]);
    }
  }, 60_000);

  it("refuses a bad caller with -32602 and keeps serving", async () => {
    const pool = await poolClient(home);
    try {
      const huge = { name: "big", version: "1", description: "x".repeat(5000) };
      await expect(
        pool.call("env__envelope", { mark: "H" }, { caller: { clientInfo: huge } }),
      ).rejects.toMatchObject({
        code: "rpc-error",
        detail: { rpcCode: -32602 },
        message: expect.stringMatching(/Invalid params: "caller.clientInfo" is \d+ .*at most 4096/),
      });
      await expect(
        pool.call("env__envelope", { mark: "B" }, { caller: { logLevel: "loud" as never } }),
      ).rejects.toMatchObject({ message: expect.stringMatching(/caller\.logLevel/) });
      await expect(
        connect({
          socketPath: home.socketPath,
          clientName: "test",
          clientInfo: { name: 1 } as never,
        }),
      ).rejects.toThrow(/"caller.clientInfo" must have a string "name"/);
      expect(await pool.call("env__envelope", { mark: "OK" })).toContain("mcpool");
    } finally {
      await pool.close();
    }
  }, 60_000);
});
