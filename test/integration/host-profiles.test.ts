/**
 * The host's capabilities, per host: through `mcpool bridge
 * --server everything` a host lists exactly what it lists connecting to server-everything
 * direct, whatever it declares, and what the server asks during its call goes to it alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import {
  bridgeCommand,
  stdioBridge,
  stringEnv,
  type BridgePath,
  type StdioBridge,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, referenceServer, waitFor } from "../helpers/processes.js";

const everythingBin = referenceServer("server-everything");

/**
 * Bound on a test that runs beside the file's others: each shares the two cores with them,
 * so on a loaded machine it takes longer than it would alone.
 */
const SIDE_BY_SIDE_MS = 90_000;

const BOTH: ClientCapabilities = { sampling: {}, elicitation: { form: {} } };

/** The tool names a client declaring `capabilities` lists connected to server-everything itself. */
async function listDirect(capabilities: ClientCapabilities): Promise<string[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [everythingBin],
    env: stringEnv(process.env),
    stderr: "pipe",
  });
  const client = new Client({ name: "direct", version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  const pid = transport.pid;
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
    if (pid !== null) await waitFor(() => !alive(pid), 15_000, "server-everything to exit");
  }
}

/** What each declaration lists direct, once for the file: the oracle of every test naming it. */
const listedDirect = new Map<string, Promise<string[]>>();
function directNames(capabilities: ClientCapabilities): Promise<string[]> {
  const key = JSON.stringify(capabilities);
  if (!listedDirect.has(key)) listedDirect.set(key, listDirect(capabilities));
  return listedDirect.get(key)!;
}

// The hosts side by side, each on its own bridge; the pool's state, which shows the children
// their profiles started, is read after them.
describe("a host's capabilities reach the pooled server", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const bridges: StdioBridge[] = [];

  const open = async (capabilities: ClientCapabilities): Promise<Client> => {
    const bridge = await stdioBridge(home, ["--server", "everything"], capabilities);
    bridges.push(bridge);
    return bridge.client;
  };

  beforeAll(async () => {
    home = testHome("mcpool-profiles-");
    home.writeConfig({
      everything: { command: process.execPath, args: [everythingBin] },
      // 2026-07-28 only: beside it the pool's modern hosts are served in their era (a
      // bridge whose servers all speak only legacy serves them as such a server does direct).
      cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
    });
    daemon = await startDaemon(home);
    await serversReady(home);
    pool = await poolClient(home);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(bridges.map((bridge) => bridge.close()));
    await pool?.close();
    await daemon?.stop();
    home?.remove();
  });

  it.concurrent(
    "lists for a host that declares nothing exactly what it lists direct",
    async () => {
      const direct = await directNames({});
      expect(direct).not.toContain("trigger-sampling-request");
      const client = await open({});
      const pooled = (await client.listTools()).tools.map((tool) => tool.name);
      expect(pooled).toEqual(direct);
    },
    SIDE_BY_SIDE_MS,
  );

  it.concurrent(
    "lists the sampling and elicitation tools for a host that declares both",
    async () => {
      const direct = await directNames(BOTH);
      expect(direct).toEqual(
        expect.arrayContaining(["trigger-sampling-request", "trigger-elicitation-request"]),
      );
      const client = await open(BOTH);
      const pooled = (await client.listTools()).tools.map((tool) => tool.name);
      expect(pooled).toEqual(direct);
    },
    SIDE_BY_SIDE_MS,
  );

  it.concurrent(
    "lists the elicitation tool alone for a host that declares elicitation alone",
    async () => {
      const only: ClientCapabilities = { elicitation: { form: {} } };
      const direct = await directNames(only);
      expect(direct).toContain("trigger-elicitation-request");
      expect(direct).not.toContain("trigger-sampling-request");
      const client = await open(only);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(direct);
    },
    SIDE_BY_SIDE_MS,
  );

  it.concurrent(
    "lists get-roots-list for a host that declares roots, and answers it with that host's roots",
    async () => {
      const roots: ClientCapabilities = { roots: { listChanged: true } };
      const direct = await directNames(roots);
      expect(direct).toContain("get-roots-list");
      const client = await open(roots);
      client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: [{ uri: "file:///projects/one", name: "one" }],
      }));
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(direct);
      const listed = await client.callTool({ name: "get-roots-list", arguments: {} });
      expect(JSON.stringify(listed.content)).toContain("file:///projects/one");
    },
    SIDE_BY_SIDE_MS,
  );

  for (const via of ["sdk", "lean"] as const satisfies readonly BridgePath[]) {
    // Over the whole pool: a one-server bridge on a legacy-only server refuses a pinned
    // modern host, as that server does direct.
    it.concurrent(
      `lists for a modern host that declares roots what it lists direct, get-roots-list included (${via} bridge)`,
      async () => {
        const direct = (await directNames({ roots: { listChanged: true } })).map(
          (name) => `everything__${name}`,
        );
        expect(direct).toContain("everything__get-roots-list");
        const transport = new ModernStdioTransport({
          ...bridgeCommand(home, [], via),
          env: stringEnv(home.env),
          stderr: "pipe",
        });
        const client = new ModernClient(
          { name: "modern-host", version: "1.0.0" },
          { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { roots: {} } },
        );
        client.setRequestHandler("roots/list", async () => ({
          roots: [{ uri: "file:///projects/modern", name: "modern" }],
        }));
        await client.connect(transport);
        const pid = transport.pid;
        try {
          expect(client.getProtocolEra()).toBe("modern");
          // The first listing, before any call could ask the host its roots.
          const listed = (await client.listTools()).tools.map((tool) => tool.name);
          expect(listed.filter((name) => name.startsWith("everything__"))).toEqual(direct);
          const called = await client.callTool({
            name: "everything__get-roots-list",
            arguments: {},
          });
          expect(JSON.stringify(called.content)).toContain("file:///projects/modern");
        } finally {
          await client.close();
          if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
        }
      },
      SIDE_BY_SIDE_MS,
    );
  }

  it.concurrent(
    "sends a server's elicitation to the host whose call it is, which answers it itself",
    async () => {
      const client = await open(BOTH);
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: "accept", content: { name: "Ada Lovelace", check: true } };
      });
      client.setRequestHandler(CreateMessageRequestSchema, () => ({
        model: "stand-in",
        role: "assistant",
        content: { type: "text", text: "sampled by the host" },
      }));
      await client.listTools();
      const elicited = await client.callTool({
        name: "trigger-elicitation-request",
        arguments: {},
      });
      expect(asked).toHaveLength(1);
      expect(JSON.stringify(elicited.content)).toContain("Ada Lovelace");
      const sampled = await client.callTool({
        name: "trigger-sampling-request",
        arguments: { prompt: "hello", maxTokens: 10 },
      });
      expect(JSON.stringify(sampled.content)).toContain("sampled by the host");
    },
    SIDE_BY_SIDE_MS,
  );

  it.concurrent(
    "never answers for a host: a tool it could not serve direct is unknown to it",
    async () => {
      const client = await open({});
      await client.listTools();
      await expect(
        client.callTool({ name: "trigger-elicitation-request", arguments: {} }),
      ).rejects.toThrow(/trigger-elicitation-request/);
    },
    SIDE_BY_SIDE_MS,
  );

  it.concurrent(
    "keeps what a caller without a profile lists: the pool's own capabilities",
    async () => {
      const names = (await pool.tools({ servers: ["everything"] })).map((t) => t.function.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "everything__trigger-sampling-request",
          "everything__trigger-elicitation-request",
        ]),
      );
      expect(names).not.toContain("everything__get-roots-list");
    },
    SIDE_BY_SIDE_MS,
  );

  it("shows the children that serve other profiles in state()", async () => {
    const state = (await pool.state()).find((s) => s.id === "everything");
    const profiles = state?.profiles ?? [];
    expect(profiles.map((p) => p.capabilities)).toEqual(
      expect.arrayContaining(["none", "elicitation:form", "roots"]),
    );
    for (const child of profiles) expect(child.pid).toBeGreaterThan(0);
    expect(new Set(profiles.map((p) => p.pid)).size).toBe(profiles.length);
    expect(profiles.map((p) => p.pid)).not.toContain(state?.pid);
  });
});
