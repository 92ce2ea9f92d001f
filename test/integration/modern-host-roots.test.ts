/**
 * A modern host's roots reach a legacy server (SPEC H3, I5): SDK v2's Client pinned to
 * 2026-07-28, declaring roots in its envelope, is asked for them by the bridge in an
 * `input_required` before its first call to server-filesystem (published, pooled by the real
 * daemon, which takes its client's roots as its allowed directories at its start), and the
 * call then runs with the roots in its profile — one child per project, as a legacy host
 * gets (host-roots.test.ts). Through `mcpool bridge` (stdio) and the daemon's MCP socket.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { bridgeCommand, scopeSocket, stringEnv, type BridgePath } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, waitFor } from "../helpers/processes.js";

const require = createRequire(import.meta.url);
const filesystemBin = join(
  dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")),
  "dist/index.js",
);
const MODERN = { versionNegotiation: { mode: { pin: "2026-07-28" as const } } };
const VIAS = ["sdk", "lean"] as const satisfies readonly BridgePath[];

interface ModernHost {
  client: Client;
  /** How many times the host was asked roots/list. */
  asked(): number;
  close(): Promise<void>;
}

describe("a modern host's roots reach a legacy server through the pool (SPEC H3, I5)", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
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
   * A modern host through `mcpool bridge --server fs` on `via`: in `project` (a roots/list
   * handler answering it), answering `answer` instead when given, or declaring no roots.
   */
  const open = async (
    via: BridgePath,
    project: string | undefined,
    answer?: () => unknown,
  ): Promise<ModernHost> => {
    const transport = new StdioClientTransport({
      ...bridgeCommand(home, ["--server", "fs"], via),
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
    const pid = transport.pid;
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

  const allowed = async (host: ModernHost): Promise<string> => {
    const result = await host.client.callTool({ name: "list_allowed_directories", arguments: {} });
    return (result.content as { type: string; text?: string }[])
      .map((part) => part.text ?? "")
      .join("\n");
  };

  beforeAll(async () => {
    own = dir("row");
    projectA = dir("a");
    projectB = dir("b");
    home = testHome("mcpool-mroots-");
    home.writeConfig({
      fs: { command: process.execPath, args: [filesystemBin, own] },
    });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    await waitFor(
      async () => (await pool.state()).every((s) => s.status === "ready" || s.status === "idle"),
      30_000,
      "the server to settle",
    );
    // The daemon's MCP sockets (the lean bridge's path) come up a moment after it serves.
    await waitFor(() => existsSync(scopeSocket(home, ["--server", "fs"])), 15_000, "MCP sockets");
  }, 60_000);

  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.close()));
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

  it("serves modern hosts of one project, on either path, from one child named with its root", async () => {
    const sessions = await Promise.all([...VIAS, ...VIAS].map((via) => open(via, projectA)));
    for (const session of sessions) expect(await allowed(session)).toContain(projectA);
    const [state] = await pool.state();
    const children = state?.profiles ?? [];
    const inA = children.filter((child) => child.roots?.includes(pathToFileURL(projectA).href));
    expect(inA).toHaveLength(1);
    expect(inA[0]?.pid).toBeGreaterThan(0);
    expect(inA[0]?.asksRoots).toBe(true);
    expect(inA[0]?.pid).not.toBe(state?.pid);
  }, 60_000);

  it.each(VIAS)(
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

  it("serves a host whose roots answer is malformed as one that declares none, the call kept", async () => {
    const odd = await open("sdk", projectA, () => ({ roots: "not a list" }));
    const seen = await allowed(odd);
    expect(odd.asked()).toBe(1);
    expect(seen).toContain(own);
    expect(seen).not.toContain(projectA);
  }, 60_000);
});
