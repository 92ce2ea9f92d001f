/**
 * A host's resources come from the connection its calls go to. A host whose capabilities
 * differ from the pool's (here: it declares none) is served by a child of its own, and a
 * server may add a resource during a call — server-everything's `gzip-file-as-resource`
 * registers `demo://resource/session/<name>` on its session — so the host's next
 * `resources/list` must come from that child, as it would from its own server direct.
 * Direct is the oracle: the same SDK host, the same calls, the server spawned by itself and
 * through the lean bridge.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { bridgeCommand, scopeSocket, stringEnv } from "../helpers/bridge.js";
import {
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { referenceServer, waitFor } from "../helpers/processes.js";

const EVERYTHING = referenceServer("server-everything");
const GZIP = {
  name: "gzip-file-as-resource",
  arguments: { name: "hello.gz", data: "data:text/plain;base64,aGVsbG8=", outputType: "resource" },
};

/** What a host without capabilities lists after its call made a resource. */
async function afterTheCall(target: {
  command: string;
  args: string[];
  env: Record<string, string>;
}): Promise<{ uris: string[]; read: unknown }> {
  const client = new Client({ name: "session-host", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ ...target, stderr: "pipe" }));
  try {
    await client.callTool(GZIP);
    const { resources } = await client.listResources();
    const read = await client.readResource({ uri: "demo://resource/session/hello.gz" });
    return { uris: resources.map((r) => r.uri), read };
  } finally {
    await client.close();
  }
}

describe("a resource a call made, listed where the call went", () => {
  let home: TestHome;
  let daemon: RunningDaemon | undefined;

  beforeAll(async () => {
    home = testHome("mcpool-session-resources-");
    home.writeConfig({ everything: { command: process.execPath, args: [EVERYTHING] } });
    daemon = await startDaemon(home);
    await serversReady(home, 60_000);
  }, 90_000);

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("lists and reads the session resource for a host served by its own child, as direct", async () => {
    const direct = await afterTheCall({
      command: process.execPath,
      args: [EVERYTHING],
      env: stringEnv(process.env),
    });
    expect(direct.uris).toContain("demo://resource/session/hello.gz");
    const args = ["--server", "everything", "--socket", home.socketPath];
    await waitFor(() => existsSync(scopeSocket(home, args)), 20_000, "the MCP socket");
    const pooled = await afterTheCall({
      ...bridgeCommand(home, args, "lean"),
      env: stringEnv(home.env),
    });
    expect(pooled).toEqual(direct);
  }, 90_000);
});
