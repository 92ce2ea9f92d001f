/**
 * The host's roots: server-filesystem, pooled, takes the roots of
 * the host that calls it as its allowed directories, as it does direct. Hosts in two
 * projects never share a child; ten sessions in one project share one; an unused project's
 * child is reaped; a host that declares no roots gets the row's own directory. Each host's
 * first call is checked as it comes: none is taken before its root is in.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import {
  httpBridge,
  scopeSocket,
  stdioBridge,
  type BridgePath,
  type StdioBridge,
} from "../helpers/bridge.js";
import {
  client as poolClient,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, referenceServer, waitFor } from "../helpers/processes.js";

const filesystemBin = referenceServer("server-filesystem");

/** Polls `condition` every 50 ms until it holds or `timeoutMs` passes. */
async function until(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as { type: string; text?: string }[])
    .map((part) => part.text ?? "")
    .join("\n");
}

describe("a host's roots reach the pooled server", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const dirs: string[] = [];
  const bridges: StdioBridge[] = [];
  let own: string;
  let projectA: string;
  let projectB: string;

  const dir = (name: string): string => {
    const made = realpathSync(mkdtempSync(join(tmpdir(), `mcpool-roots-${name}-`)));
    dirs.push(made);
    return made;
  };

  /** A host in `project` (none: a host that declares no roots) through `bridge --server fs`. */
  const open = async (project?: string, via: BridgePath = "sdk"): Promise<Client> => {
    const capabilities = project === undefined ? {} : { roots: { listChanged: true } };
    const bridge = await stdioBridge(home, ["--server", "fs"], capabilities, via);
    bridges.push(bridge);
    if (project !== undefined) {
      bridge.client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: [{ uri: pathToFileURL(project).href, name: "project" }],
      }));
    }
    return bridge.client;
  };

  const allowed = async (client: Client): Promise<string> =>
    textOf(await client.callTool({ name: "list_allowed_directories", arguments: {} }));

  beforeAll(async () => {
    own = dir("row");
    projectA = dir("a");
    projectB = dir("b");
    home = testHome("mcpool-roots-");
    home.writeConfig({
      fs: { command: process.execPath, args: [filesystemBin, own], idleTimeoutMs: 4_000 },
    });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    // The daemon's MCP sockets (the lean bridge's path) come up a moment after it serves.
    const socket = scopeSocket(home, ["--server", "fs"]);
    await waitFor(() => existsSync(socket), 15_000, "the MCP sockets");
  }, 60_000);

  afterAll(async () => {
    await Promise.all(bridges.map((bridge) => bridge.close()));
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  it("gives hosts in two projects each its own root, never the other's (SDK and lean bridge)", async () => {
    const a = await open(projectA);
    const b = await open(projectB, "lean");
    // Each first call already runs in its project: no answer is taken before the root is in.
    const [seenByA, seenByB] = await Promise.all([allowed(a), allowed(b)]);
    expect(seenByA).toContain(projectA);
    expect(seenByB).toContain(projectB);
    expect(seenByA).not.toContain(projectB);
    expect(seenByA).not.toContain(own);
    expect(seenByB).not.toContain(projectA);
    expect(seenByB).not.toContain(own);
  }, 90_000);

  it("gives a host on the bridge's Streamable HTTP its own root too", async () => {
    const bridge = await httpBridge(home, ["--server", "fs"]);
    const client = new Client(
      { name: "http-host", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(projectB).href }],
    }));
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(bridge.url), {
          requestInit: { headers: { authorization: `Bearer ${bridge.token}` } },
        }),
      );
      const seen = await allowed(client);
      expect(seen).toContain(projectB);
      expect(seen).not.toContain(own);
    } finally {
      await client.close().catch(() => undefined);
      await bridge.stop();
    }
  });

  it("gives a host that declares no roots the row's own directory", async () => {
    const bare = await open();
    const seen = await allowed(bare);
    expect(seen).toContain(own);
    expect(seen).not.toContain(projectA);
    expect(seen).not.toContain(projectB);
  });

  it("serves ten sessions in one project from one child, shown with its root in state()", async () => {
    const sessions = await Promise.all(Array.from({ length: 10 }, () => open(projectA)));
    for (const seen of await Promise.all(sessions.map(allowed))) expect(seen).toContain(projectA);
    const [state] = await pool.state();
    const children = state?.profiles ?? [];
    const inA = children.filter((child) => child.roots?.includes(pathToFileURL(projectA).href));
    expect(inA).toHaveLength(1);
    expect(inA[0]?.pid).toBeGreaterThan(0);
    expect(inA[0]?.asksRoots).toBe(true);
    const pids = new Set(children.map((child) => child.pid));
    expect(pids.size).toBe(children.length);
    expect(pids.has(state?.pid)).toBe(false);
    // `mcpool status` names the project's child with its root.
    const status = runCli(home, "status");
    expect(status.stdout).toContain("children for host profiles");
    expect(status.stdout).toMatch(
      new RegExp(`fs +pid ${inA[0]?.pid}, declares roots, roots ${pathToFileURL(projectA).href}`),
    );
  });

  it("asks the host again when it says its roots changed, and moves it to that project's child", async () => {
    const bridge = await stdioBridge(home, ["--server", "fs"], { roots: { listChanged: true } });
    bridges.push(bridge);
    const client = bridge.client;
    let project = projectA;
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(project).href }],
    }));
    expect(await allowed(client)).toContain(projectA);
    project = projectB;
    const relist = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no tools/list_changed in 15 s")), 15_000);
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    await client.sendRootsListChanged();
    await relist;
    const moved = await allowed(client);
    expect(moved).toContain(projectB);
    expect(moved).not.toContain(projectA);
  });

  it("waits for a host that lists its roots late, as server-filesystem direct does", async () => {
    const late = dir("late");
    const bridge = await stdioBridge(home, ["--server", "fs"], { roots: { listChanged: true } });
    bridges.push(bridge);
    // The host answers 12 s after it is asked: later than the ten seconds the bridge once
    // gave it, well within the 60 s server-filesystem's own SDK waits for the answer direct.
    bridge.client.setRequestHandler(ListRootsRequestSchema, async () => {
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      return { roots: [{ uri: pathToFileURL(late).href }] };
    });
    // A bridge that gave up on the answer serves the host with the row's directory from then
    // on: the host's root never comes.
    const seen = await allowed(bridge.client);
    expect(seen).toContain(late);
    expect(seen).not.toContain(own);
  }, 60_000);

  it("reaps a project's child once it is idle for the row's idle timeout", async () => {
    const [before] = await pool.state();
    const pids = (before?.profiles ?? []).map((child) => child.pid as number);
    expect(pids.length).toBeGreaterThan(0);
    await until(
      async () => (await pool.state())[0]?.profiles === undefined,
      30_000,
      "the per-project children to be reaped",
    );
    for (const pid of pids) await waitFor(() => !alive(pid), 15_000, `child ${pid} to exit`);
    // The next call in the project starts its child again, with the same root.
    const again = await open(projectB);
    expect(await allowed(again)).toContain(projectB);
  }, 60_000);
});
