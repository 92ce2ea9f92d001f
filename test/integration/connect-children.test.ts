/**
 * A host's children start while it connects. Direct, a host starts each server as it connects
 * and gives that its connect's time (Claude Code: 30 s); its first listing gets less (Claude
 * Code's `mcp list`: 5 s). Through the pool, a host that declares roots lists from a child of
 * its own (its server reads its client's capabilities at its start, and server-filesystem
 * its roots), so that child's start must fall in the host's connect too:
 *
 * - A 2026-07-28 host: the child for its profile starts at its `server/discover`, which is
 *   answered once the child is up; the listing that follows finds it ready.
 * - A 2025-11-25 host: its project's child can be made only once its roots are known, and
 *   they can be asked only once its `initialize` is answered. So that answer waits until the
 *   daemon has opened ahead, for each row the project's child will run on, a connection with
 *   the host's capabilities, its handshake done and its `initialized` held (no roots asked
 *   yet); the project's child takes it once the roots are known, and its server then asks
 *   for them and gets the project's. A second host of the project finds the project's child
 *   there: what was opened ahead for it ends once it has listed. A host that connects as a
 *   fresh daemon starts (no tools cache: the row's era is found by its first dial) is
 *   answered once that dial is done, and gets the same.
 *
 * Each through every face of the pool (the perl relay Claude Code's entries run, the lean
 * bridge, `mcpool bridge`, `bridge --http`) to a whole pool with server-filesystem
 * (published, 2025-11-25 only) — beside a modern-only fixture for a modern host, so the pool
 * serves it in its era.
 */
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as LegacyHttp } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient, ProfileChildState } from "mcpool-client";
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
type Face = (typeof FACES)[number];

describe("a host's own children start while it connects", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;
  let pool: PoolClient | undefined;
  let http: HttpBridgeProcess | undefined;
  /** Each host's close, and the pid of its bridge when it has one of its own. */
  const hosts: { close: () => Promise<void>; pid: number | null }[] = [];

  afterEach(async () => {
    for (const host of hosts.splice(0)) {
      await host.close().catch(() => undefined);
      const pid = host.pid;
      if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
    }
    await http?.stop();
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    home = undefined;
    daemon = undefined;
    pool = undefined;
    http = undefined;
  });

  /**
   * A daemon serving `rows` with its MCP sockets, every row connected (their eras known), and
   * `bridge --http` for `face` "http"; server-filesystem's children, read from its state.
   */
  const pooled = async (face: Face, rows: (dir: string) => Record<string, unknown>) => {
    const made = testHome("mcpool-connect-");
    home = made;
    made.writeConfig(rows(made.dir) as never);
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
    if (face === "http") http = await httpBridge(made, []);
    const fsChildren = async (): Promise<ProfileChildState[]> =>
      (await upstream.state()).find((state) => state.id === "fs")?.profiles ?? [];
    expect(await fsChildren()).toEqual([]);
    return { made, fsChildren };
  };

  /** How a host reaches the pool through `face`: the HTTP bridge's URL and token, or a command. */
  const entry = (made: TestHome, face: Face) =>
    face === "http"
      ? {
          http: new URL(http!.url),
          init: { requestInit: { headers: { authorization: `Bearer ${http!.token}` } } },
        }
      : {
          stdio: {
            ...bridgeCommand(made, [], face),
            env: stringEnv(made.env),
            stderr: "pipe" as const,
          },
        };

  /** A 2025-11-25 host declaring `roots` (its project's) through `face`. */
  const legacyHost = async (made: TestHome, face: Face, roots: string[]): Promise<LegacyClient> => {
    const to = entry(made, face);
    const transport = "http" in to ? new LegacyHttp(to.http, to.init) : new LegacyStdio(to.stdio);
    const client = new LegacyClient(
      { name: "legacy-host", version: "1.0.0" },
      { capabilities: { roots: {} } },
    );
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: roots[0]!, name: "project" }],
    }));
    await client.connect(transport);
    const pid = transport instanceof LegacyStdio ? transport.pid : null;
    hosts.push({ close: () => client.close(), pid });
    return client;
  };

  it.each(FACES)(
    "holds server-filesystem's child for a 2026-07-28 host declaring roots, ready, when its connect returns (%s)",
    async (face) => {
      const { made, fsChildren } = await pooled(face, (dir) => ({
        fs: { command: process.execPath, args: [filesystemBin, dir] },
        cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
      }));
      const to = entry(made, face);
      const transport =
        "http" in to
          ? new StreamableHTTPClientTransport(to.http, to.init)
          : new StdioClientTransport(to.stdio);
      const client = new Client(
        { name: "modern-host", version: "1.0.0" },
        { ...MODERN, capabilities: { roots: {} } },
      );
      client.setRequestHandler("roots/list", async () => ({ roots: [] }));
      await client.connect(transport);
      const pid = transport instanceof StdioClientTransport ? transport.pid : null;
      hosts.push({ close: () => client.close(), pid });
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

  it.each(FACES)(
    "holds server-filesystem open for a 2025-11-25 host declaring roots when its connect returns, and lists on it with the project's directory (%s)",
    async (face) => {
      const { made, fsChildren } = await pooled(face, (dir) => ({
        fs: { command: process.execPath, args: [filesystemBin, dir] },
      }));
      const project = join(made.dir, "project");
      mkdirSync(project);
      const roots = [pathToFileURL(project).href];

      const connectHost = () => legacyHost(made, face, roots);

      const first = await connectHost();
      // Nothing listed yet: its project's child will run on the process opened ahead.
      const ahead = await fsChildren();
      expect(ahead, JSON.stringify(ahead)).toEqual([
        expect.objectContaining({ awaitingRoots: true, status: "ready", pid: expect.any(Number) }),
      ]);
      const pid = ahead[0]!.pid!;
      expect(alive(pid)).toBe(true);

      const { tools } = await first.listTools();
      expect(tools.map((tool) => tool.name)).toContain("fs__list_allowed_directories");
      expect(await fsChildren()).toEqual([expect.objectContaining({ roots, pid })]);
      const answer = await first.callTool({ name: "fs__list_allowed_directories", arguments: {} });
      expect(JSON.stringify(answer.content)).toContain(realpathSync(project));

      // A second host of the project: its project's child is there, and what was opened
      // ahead for it ends once it has listed.
      const second = await connectHost();
      const both = await fsChildren();
      const spare = both.find((child) => child.awaitingRoots === true)?.pid;
      expect(spare, JSON.stringify(both)).toEqual(expect.any(Number));
      await second.listTools();
      await waitFor(() => !alive(spare!), 15_000, "the process opened ahead to end");
      expect(await fsChildren()).toEqual([expect.objectContaining({ roots, pid })]);
    },
    90_000,
  );

  it.each(["perl", "lean"] as const)(
    "holds server-filesystem open for a 2025-11-25 host declaring roots that connects as a fresh daemon starts, before the row's era is known (%s)",
    async (face) => {
      const made = testHome("mcpool-connect-fresh-");
      home = made;
      made.writeConfig({ fs: { command: process.execPath, args: [filesystemBin, made.dir] } });
      daemon = await startDaemon(made);
      await waitFor(() => existsSync(scopeSocket(made, [])), 15_000, "MCP sockets");
      // No tools cache: what the row speaks is found by its first dial, still under way.
      const project = join(made.dir, "project");
      mkdirSync(project);
      await legacyHost(made, face, [pathToFileURL(project).href]);
      const upstream = await poolClient(made);
      pool = upstream;
      const children = (await upstream.state()).find((state) => state.id === "fs")?.profiles;
      expect(children, JSON.stringify(children)).toEqual([
        expect.objectContaining({ awaitingRoots: true, status: "ready", pid: expect.any(Number) }),
      ]);
    },
    90_000,
  );
});
