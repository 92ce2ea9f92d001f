/**
 * Every field of a tool reaches a host through a `--server ID` entry as it does direct,
 * in each era: a 2025-11-25 host of a 2025-11-25 server gets its tool's title, icons,
 * annotations, outputSchema, `_meta` and `execution`; a 2026-07-28 host of a 2026-07-28
 * server the same but `execution`, which that era does not have. Direct is the oracle: the
 * same host kind lists the server spawned by itself and through the lean bridge, and the
 * two lists must be equal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import {
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { existsSync } from "node:fs";

type Target = { command: string; args: string[]; env: Record<string, string> };

const server = (era: "legacy" | "modern") => ({
  command: process.execPath,
  args: [fixture("every-field.mjs")],
  env: { FIELDS_ERA: era },
});

/** The tools a host of `era` lists from `target`. */
async function listed(era: "legacy" | "modern", target: Target): Promise<unknown[]> {
  if (era === "legacy") {
    const client = new Client({ name: "fields-host", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ ...target, stderr: "pipe" }));
    try {
      return (await client.listTools()).tools;
    } finally {
      await client.close();
    }
  }
  const client = new ModernClient(
    { name: "fields-host", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new ModernStdioTransport({ ...target, stderr: "pipe" }));
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe("a tool's every field, direct and through the pool", () => {
  let home: TestHome;
  let daemon: RunningDaemon | undefined;

  beforeAll(async () => {
    home = testHome("mcpool-tool-fields-");
    home.writeConfig({ legacy: server("legacy"), modern: server("modern") });
    daemon = await startDaemon(home);
    await serversReady(home, 30_000);
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it.each(["legacy", "modern"] as const)(
    "gives a %s host its server's tool as it has it direct",
    async (era) => {
      const own = server(era);
      const direct = await listed(era, { ...own, env: { ...stringEnv(process.env), ...own.env } });
      const args = ["--server", era, "--socket", home.socketPath];
      await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the MCP socket");
      const pooled = await listed(era, {
        ...bridgeCommand(home, args, "lean"),
        env: stringEnv(home.env),
      });
      expect(direct).toHaveLength(1);
      // The fixture's fields, so an era that dropped one on both sides is seen too.
      expect(direct[0]).toMatchObject({
        title: "Weather",
        icons: [expect.any(Object)],
        annotations: { readOnlyHint: true },
        outputSchema: { type: "object" },
        _meta: { "example.com/owner": "forecasts" },
        ...(era === "legacy" ? { execution: { taskSupport: "optional" } } : {}),
      });
      expect(pooled).toEqual(direct);
    },
    60_000,
  );
});
