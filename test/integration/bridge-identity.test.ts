/**
 * Who a host meets through `mcpool bridge --server ID`, against the same server direct (the
 * oracle): the server's own serverInfo (name, title, version, icons), its instructions, only
 * the capabilities it has (`tasks` among them: the pool relays tasks), and every tool's
 * fields as the server wrote them. A modern server's envelope
 * metadata never reaches a legacy host's call result. Run on the full CLI's SDK bridge, the
 * lean bridge and the perl relay, for reference servers (server-everything, server-memory)
 * and a modern-only one.
 */
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MODERN,
  BRIDGE_PATHS,
  bridgeCommand,
  stdioBridge,
  stringEnv,
  type BridgePath,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
} from "../helpers/daemon.js";
import { fixture, waitFor, referenceRows } from "../helpers/processes.js";
import type { PoolClient } from "mcpool-client";

/** Bound on the servers starting on a loaded machine. */
const READY_MS = 60_000;

/** What a host learns of a server at its handshake. */
interface Face {
  serverInfo: unknown;
  capabilities: Record<string, unknown> | undefined;
  instructions: string | undefined;
  tools: unknown[];
}

type AnyClient = Pick<
  Client,
  "getServerVersion" | "getServerCapabilities" | "getInstructions" | "listTools"
>;

async function faceOf(client: AnyClient): Promise<Face> {
  const tools = (await client.listTools()).tools as { name: string }[];
  return {
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities() as Record<string, unknown> | undefined,
    instructions: client.getInstructions(),
    tools: [...tools].sort((a, b) => a.name.localeCompare(b.name)),
  };
}

describe("a --server entry presents the server itself", () => {
  const home = testHome("mcpool-identity-");
  const node = process.execPath;
  const rows = {
    ...referenceRows(home.dir),
    modern: { command: node, args: [fixture("modern-stdio.mjs")] },
  };
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;

  beforeAll(async () => {
    home.writeConfig(rows);
    daemon = await startDaemon(home);
    pool = await poolClient(home);
  }, READY_MS);

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    home.remove();
  });

  /** A legacy (SDK v1) host straight on the row's command. */
  async function meetDirect(id: "everything" | "memory"): Promise<Face> {
    const row = rows[id];
    const client = new Client({ name: "direct", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: row.command,
        args: row.args,
        env: { ...stringEnv(process.env), ...("env" in row ? row.env : {}) },
        stderr: "ignore",
      }),
    );
    try {
      return await faceOf(client);
    } finally {
      await client.close();
    }
  }

  /** Each server as met direct, once for the file: the oracle of every path's test. */
  const directFaces = new Map<"everything" | "memory", Promise<Face>>();
  const directLegacy = (id: "everything" | "memory"): Promise<Face> => {
    if (!directFaces.has(id)) directFaces.set(id, meetDirect(id));
    return directFaces.get(id)!;
  };

  for (const id of ["everything", "memory"] as const) {
    it.each(BRIDGE_PATHS)(
      `${id}: a legacy host meets the server's own serverInfo, capabilities, instructions and tools (%s)`,
      async (via: BridgePath) => {
        const direct = await directLegacy(id);
        const bridge = await stdioBridge(home, ["--server", id], {}, via);
        try {
          expect(await faceOf(bridge.client)).toEqual(direct);
        } finally {
          await bridge.close();
        }
      },
      READY_MS,
    );
  }

  it(
    "a modern host meets a modern server's own serverInfo, capabilities and instructions",
    async () => {
      const direct = new ModernClient({ name: "direct", version: "1.0.0" }, MODERN);
      await direct.connect(new ModernStdio({ command: node, args: rows.modern.args }));
      const pooled = new ModernClient({ name: "pooled", version: "1.0.0" }, MODERN);
      await pooled.connect(
        new ModernStdio({
          ...bridgeCommand(home, ["--server", "modern"], "sdk"),
          env: stringEnv(home.env),
        }),
      );
      try {
        const want = await faceOf(direct as unknown as AnyClient);
        const got = await faceOf(pooled as unknown as AnyClient);
        expect(got.serverInfo).toEqual(want.serverInfo);
        expect(got.capabilities).toEqual(want.capabilities);
        expect(got.instructions).toEqual(want.instructions);
      } finally {
        await direct.close();
        await pooled.close();
      }
    },
    READY_MS,
  );

  it(
    "a legacy host's call result carries none of a modern server's envelope metadata",
    async () => {
      const bridge = await stdioBridge(home, ["--server", "modern"]);
      try {
        await waitFor(
          async () => (await pool!.state()).some((s) => s.id === "modern" && s.status === "ready"),
          READY_MS,
          "the modern server to be ready",
        );
        const result = await bridge.client.callTool({ name: "echo", arguments: { text: "hi" } });
        expect(result.content).toEqual([{ type: "text", text: "hi" }]);
        const keys = Object.keys(result._meta ?? {});
        expect(keys.filter((key) => key.startsWith("io.modelcontextprotocol/"))).toEqual([]);
      } finally {
        await bridge.close();
      }
    },
    READY_MS,
  );
});
