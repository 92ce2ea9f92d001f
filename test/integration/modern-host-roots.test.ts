/**
 * A modern host's roots reach a legacy server: SDK v2's Client pinned to
 * 2026-07-28, through a bridge over the whole pool (a one-server bridge on a legacy-only
 * server refuses `server/discover` as that server does, and such a host cannot connect there,
 * as it cannot direct), declaring roots in its envelope, is asked for them by the bridge in an
 * `input_required` before its first call to server-filesystem (published, pooled by the real
 * daemon, which takes its client's roots as its allowed directories at its start), and the
 * call then runs with the roots in its profile — one child per project, as a legacy host
 * gets (host-roots.test.ts). Through `mcpool bridge` (stdio), the daemon's MCP socket, and
 * `mcpool bridge --http` (Streamable HTTP), where each modern POST stands alone — no session
 * to keep the roots in — so the host is asked on each call, and its roots then are the ones
 * the call runs with.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
const VIAS = ["sdk", "lean"] as const satisfies readonly BridgePath[];
/** A stdio path to the pool, or `http`: SDK v2's Streamable HTTP transport to `bridge --http`. */
type Via = BridgePath | "http";
/** Every face of the pool a modern host can reach, for what they all do alike. */
const FACES = [...VIAS, "http"] as const satisfies readonly Via[];

interface ModernHost {
  client: Client;
  /** How many times the host was asked roots/list. */
  asked(): number;
  close(): Promise<void>;
}

describe("a modern host's roots reach a legacy server through the pool", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  /** `mcpool bridge --http 0`, shared by every HTTP host (one listener, many hosts). */
  let http: HttpBridgeProcess;
  const dirs: string[] = [];
  const hosts: ModernHost[] = [];
  let own: string;
  let projectA: string;
  let projectB: string;

  const dir = (name: string): string => {
    const made = realpathSync(mkdtempSync(join(tmpdir(), `mcpool-mroots-${name}-`)));
    dirs.push(made);
    return made;
  };

  /**
   * A modern host through `mcpool bridge` on `via`: in `project` (a roots/list
   * handler answering it), answering `answer` instead when given, or declaring no roots.
   * An HTTP host is a client of the shared `--http` bridge; a stdio host spawns its own.
   */
  const open = async (
    via: Via,
    project: string | undefined,
    answer?: () => unknown,
  ): Promise<ModernHost> => {
    const transport =
      via === "http"
        ? new StreamableHTTPClientTransport(new URL(http.url), {
            requestInit: { headers: { authorization: `Bearer ${http.token}` } },
          })
        : new StdioClientTransport({
            ...bridgeCommand(home, [], via),
            env: stringEnv(home.env),
            stderr: "pipe",
          });
    const client = new Client(
      { name: "modern-host", version: "1.0.0" },
      { ...MODERN, capabilities: project === undefined ? {} : { roots: {} } },
    );
    let asked = 0;
    if (project !== undefined) {
      client.setRequestHandler("roots/list", async () => {
        asked += 1;
        return (answer?.() ?? {
          roots: [{ uri: pathToFileURL(project).href, name: "project" }],
        }) as never;
      });
    }
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const pid = transport instanceof StdioClientTransport ? transport.pid : null;
    const host: ModernHost = {
      client,
      asked: () => asked,
      async close() {
        await client.close().catch(() => undefined);
        if (pid !== null) await waitFor(() => !alive(pid), 15_000, "the bridge to exit");
      },
    };
    hosts.push(host);
    return host;
  };

  /** A call's text (an error's too: server-filesystem refuses a path outside its roots). */
  const call = async (
    host: ModernHost,
    name: string,
    args: Record<string, unknown> = {},
  ): Promise<string> => {
    const result = await host.client.callTool({ name: `fs__${name}`, arguments: args });
    return (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? "")
      .join("\n");
  };
  const allowed = (host: ModernHost): Promise<string> => call(host, "list_allowed_directories");
  /** What `list_directory` of `path` gives the host: its entries, or the refusal. */
  const listing = (host: ModernHost, path: string): Promise<string> =>
    call(host, "list_directory", { path });

  beforeAll(async () => {
    own = dir("row");
    projectA = dir("a");
    projectB = dir("b");
    // A file in each project, so a listing says which directory it is.
    writeFileSync(join(projectA, "only-in-a.txt"), "a");
    writeFileSync(join(projectB, "only-in-b.txt"), "b");
    home = testHome("mcpool-mroots-");
    home.writeConfig({
      fs: { command: process.execPath, args: [filesystemBin, own] },
      // 2026-07-28 only: beside it the pool's modern hosts are served in their era (a
      // bridge whose servers all speak only legacy serves them as such a server does direct).
      cached: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
    });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    await waitFor(
      async () => (await pool.state()).every((s) => s.status === "ready" || s.status === "idle"),
      30_000,
      "the server to settle",
    );
    // The daemon's MCP sockets (the lean bridge's path) come up a moment after it serves.
    await waitFor(() => existsSync(scopeSocket(home, [])), 15_000, "MCP sockets");
    http = await httpBridge(home, []);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.close()));
    await http?.stop();
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  it.each(VIAS)(
    "gives modern hosts in two projects each its own root, never the other's (%s bridge)",
    async (via) => {
      const a = await open(via, projectA);
      const b = await open(via, projectB);
      const seenByA = await allowed(a);
      const seenByB = await allowed(b);
      expect(seenByA).toContain(projectA);
      expect(seenByA).not.toContain(projectB);
      expect(seenByA).not.toContain(own);
      expect(seenByB).toContain(projectB);
      expect(seenByB).not.toContain(projectA);
      expect(seenByB).not.toContain(own);
      // Asked once per connection: the second call runs with the roots it learnt.
      expect(await allowed(a)).toContain(projectA);
      expect(a.asked()).toBe(1);
    },
    60_000,
  );

  it("asks a modern HTTP host its roots on each call, hosts in two projects at once each served its own root (http bridge)", async () => {
    const a = await open("http", projectA);
    const b = await open("http", projectB);
    // Both call at once through the one listener: each call asked its own host, and ran with
    // that host's answer, never the other's (nor the row's own directory).
    const [seenByA, seenByB] = await Promise.all([allowed(a), allowed(b)]);
    expect(seenByA).toContain(projectA);
    expect(seenByA).not.toContain(projectB);
    expect(seenByA).not.toContain(own);
    expect(seenByB).toContain(projectB);
    expect(seenByB).not.toContain(projectA);
    expect(seenByB).not.toContain(own);
    expect(a.asked()).toBe(1);
    expect(b.asked()).toBe(1);
    // Each modern POST stands alone (no session to keep roots in): the same host's second
    // call is asked again, and runs in its own project still — a listing of its root shows
    // its own file, not the other project's.
    const [listedByA, listedByB] = await Promise.all([listing(a, projectA), listing(b, projectB)]);
    expect(listedByA).toContain("only-in-a.txt");
    expect(listedByA).not.toContain("only-in-b.txt");
    expect(listedByB).toContain("only-in-b.txt");
    expect(listedByB).not.toContain("only-in-a.txt");
    expect(a.asked()).toBe(2);
    expect(b.asked()).toBe(2);
    // Nor does A's call reach B's directory: it runs where only A's root is allowed, and
    // server-filesystem refuses B's.
    const crossing = await listing(a, projectB);
    expect(crossing).toMatch(/access denied/i);
    expect(crossing).not.toContain("only-in-b.txt");
    expect(a.asked()).toBe(3);
    expect(b.asked()).toBe(2);
  }, 60_000);

  it("gives a modern HTTP host whose roots changed between calls its new root on the next call (http bridge)", async () => {
    let project = projectA;
    const moving = await open("http", projectA, () => ({
      roots: [{ uri: pathToFileURL(project).href, name: "project" }],
    }));
    const before = await allowed(moving);
    expect(before).toContain(projectA);
    expect(before).not.toContain(projectB);
    // Asked on each call, the host's answer then is the one its call runs with: no stale
    // roots kept from an earlier call (2026-07-28 has no roots/list_changed to say so).
    project = projectB;
    const after = await allowed(moving);
    expect(after).toContain(projectB);
    expect(after).not.toContain(projectA);
    expect(moving.asked()).toBe(2);
  }, 60_000);

  it("serves modern hosts of one project, on any face, from one child named with its root", async () => {
    const sessions = await Promise.all([...FACES, ...FACES].map((via) => open(via, projectA)));
    for (const session of sessions) expect(await allowed(session)).toContain(projectA);
    const state = (await pool.state()).find((s) => s.id === "fs");
    const children = state?.profiles ?? [];
    const inA = children.filter((child) => child.roots?.includes(pathToFileURL(projectA).href));
    expect(inA).toHaveLength(1);
    expect(inA[0]?.pid).toBeGreaterThan(0);
    expect(inA[0]?.asksRoots).toBe(true);
    expect(inA[0]?.pid).not.toBe(state?.pid);
  }, 60_000);

  it.each(FACES)(
    "gives a modern host that declares no roots the row's own directory (%s bridge)",
    async (via) => {
      const bare = await open(via, undefined);
      const seen = await allowed(bare);
      expect(seen).toContain(own);
      expect(seen).not.toContain(projectA);
      expect(seen).not.toContain(projectB);
    },
    60_000,
  );

  it.each(["sdk", "http"] as const)(
    "serves a host whose roots answer is malformed as one that declares none, the call kept (%s bridge)",
    async (via) => {
      const odd = await open(via, projectA, () => ({ roots: "not a list" }));
      const seen = await allowed(odd);
      expect(odd.asked()).toBe(1);
      expect(seen).toContain(own);
      expect(seen).not.toContain(projectA);
    },
    60_000,
  );
});
