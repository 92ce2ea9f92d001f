/**
 * A modern host's children start while it connects. Direct, a host starts each server as it
 * connects and gives that its connect's time (Claude Code: 30 s); its first listing gets less
 * (Claude Code's `mcp list`: 5 s). Through the pool, a host that declares roots lists from a
 * child of its own (its server reads its client's capabilities at its start, and
 * server-filesystem its roots) — so that child starts at the host's `server/discover`,
 * which is answered once it is up: the listing that follows finds it ready, as direct.
 *
 * SDK v2's Client pinned to 2026-07-28 declares roots through each face of the pool (the
 * perl relay Claude Code's entries run, the lean bridge, `mcpool bridge`, `bridge --http`)
 * to a whole pool with server-filesystem (published, legacy) beside a modern-only fixture
 * (so the pool serves modern hosts in their era); as soon as its connect returns, and
 * before it has listed anything, the daemon holds server-filesystem's child for it, ready.
 */
import { existsSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import {
  MODERN,
  bridgeCommand,
  httpBridge,
  scopeSocket,
  stringEnv,
  type BridgePath,
  type HttpBridgeProcess,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, referenceServer, waitFor } from "../helpers/processes.js";

const filesystemBin = referenceServer("server-filesystem");
const FACES = ["perl", "lean", "sdk", "http"] as const satisfies readonly (BridgePath | "http")[];

describe("a modern host's own children start while it connects", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;
  let http: HttpBridgeProcess | undefined;
  let client: Client | undefined;
  let bridgePid: number | null = null;

  afterEach(async () => {
    await client?.close().catch(() => undefined);
    if (bridgePid !== null) {
      const pid = bridgePid;
      await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
    }
    await http?.stop();
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    home = undefined;
    daemon = undefined;
    pool = undefined;
    http = undefined;
    client = undefined;
    bridgePid = null;
  });

  it.each(FACES)(
    "holds server-filesystem's child for a host declaring roots, ready, when its connect returns (%s)",
    async (face) => {
      const made = testHome("mcpool-mconnect-");
      home = made;
      made.writeConfig({
        fs: { command: process.execPath, args: [filesystemBin, made.dir] },
        cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
      });
      daemon = await startDaemon(made);
      const upstream = await poolClient(made);
      pool = upstream;
      await waitFor(
        async () =>
          (await upstream.state()).every((s) => s.status === "ready" || s.status === "idle"),
        30_000,
        "the servers to settle",
      );
      await waitFor(() => existsSync(scopeSocket(made, [])), 15_000, "MCP sockets");
      const fsChildren = async () =>
        (await upstream.state()).find((state) => state.id === "fs")?.profiles ?? [];
      expect(await fsChildren()).toEqual([]);

      let transport: StdioClientTransport | StreamableHTTPClientTransport;
      if (face === "http") {
        http = await httpBridge(made, []);
        transport = new StreamableHTTPClientTransport(new URL(http.url), {
          requestInit: { headers: { authorization: `Bearer ${http.token}` } },
        });
      } else {
        transport = new StdioClientTransport({
          ...bridgeCommand(made, [], face),
          env: stringEnv(made.env),
          stderr: "pipe",
        });
      }
      client = new Client(
        { name: "modern-host", version: "1.0.0" },
        { ...MODERN, capabilities: { roots: {} } },
      );
      client.setRequestHandler("roots/list", async () => ({ roots: [] }));
      await client.connect(transport);
      if (transport instanceof StdioClientTransport) bridgePid = transport.pid;
      expect(client.getProtocolEra()).toBe("modern");

      // Nothing listed yet: the child is the one the host's first listing runs on.
      const children = await fsChildren();
      expect(children, JSON.stringify(children)).toEqual([
        expect.objectContaining({ status: "ready", pid: expect.any(Number) }),
      ]);
      expect(children[0]?.capabilities).toMatch(/roots/);
      expect(alive(children[0]!.pid!)).toBe(true);

      // And the listing finds it, with server-filesystem's tools.
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("fs__list_allowed_directories");
      expect((await fsChildren()).map((child) => child.pid)).toEqual([children[0]!.pid]);
    },
    90_000,
  );
});
