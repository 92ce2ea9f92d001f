/**
 * Roots by construction: a call from a host that declares roots reaches only a child given
 * those roots, whatever the machine's load, and a row's children are capped. Real
 * server-filesystem and server-everything children behind the daemon; SDK hosts through
 * `mcpool bridge --server ID`; direct is the oracle where a host would see a difference.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { stdioBridge, type StdioBridge } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, waitFor } from "../helpers/processes.js";

const require = createRequire(import.meta.url);
const binOf = (name: string, file: string): string =>
  join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), file);
const filesystemBin = binOf("server-filesystem", "dist/index.js");

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

function textOf(result: CallResult): string {
  return (result.content as { type: string; text?: string }[])
    .map((part) => part.text ?? "")
    .join("\n");
}

/** Two processes that keep both cores busy while they live: the machine under load. */
function burners(): ChildProcess[] {
  return [0, 1].map(() =>
    spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore", detached: false }),
  );
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  for (const child of children) child.kill("SIGKILL");
  for (const child of children) {
    if (child.pid !== undefined) {
      const pid = child.pid;
      await waitFor(() => !alive(pid), 15_000, `burner ${pid} to exit`);
    }
  }
}

/** A direct SDK client of server-filesystem started on `dir`, declaring `roots`. */
async function directFilesystem(dir: string, project: string): Promise<Client> {
  const client = new Client(
    { name: "direct-host", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(project).href, name: "project" }],
  }));
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [filesystemBin, dir] }),
  );
  return client;
}

describe("roots by construction: a host with roots reaches only its project's child", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const dirs: string[] = [];
  const bridges: StdioBridge[] = [];
  let load: ChildProcess[] = [];
  let own: string;

  const dir = (name: string): string => {
    const made = realpathSync(mkdtempSync(join(tmpdir(), `mcpool-rbc-${name}-`)));
    dirs.push(made);
    return made;
  };

  /** A legacy SDK host in `project` through `bridge --server ID`. */
  const open = async (project: string, server = "fs"): Promise<Client> => {
    const bridge = await stdioBridge(home, ["--server", server], {
      roots: { listChanged: true },
    });
    bridges.push(bridge);
    bridge.client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(project).href, name: "project" }],
    }));
    return bridge.client;
  };

  beforeAll(async () => {
    own = dir("row");
    home = testHome("mcpool-rbc-");
    home.writeConfig(
      { fs: { command: process.execPath, args: [filesystemBin, own] } },
      { mcpool: { maxChildrenPerServer: 16 } },
    );
    daemon = await startDaemon(home);
    pool = await poolClient(home);
  }, 60_000);

  afterEach(async () => {
    await stopAll(load);
    load = [];
    await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
  });

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  it("gives 3 rounds of 12 hosts started at once beside a CPU load each its own directory, calling at once", async () => {
    load = burners();
    const wrong: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const projects = Array.from({ length: 12 }, (_, i) => dir(`r${round}-${i}`));
      const seen = await Promise.all(
        projects.map(async (project) => {
          const host = await open(project);
          // The first thing the host does is call: no listing first.
          return textOf(await host.callTool({ name: "list_allowed_directories", arguments: {} }));
        }),
      );
      seen.forEach((text, i) => {
        const project = projects[i] as string;
        if (!text.includes(project) || text.includes(own)) wrong.push(`${project}: ${text}`);
      });
      await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
    }
    expect(wrong).toEqual([]);
  }, 600_000);

  it("refuses a first call's write_file outside the project, as direct refuses it", async () => {
    const outside = join(own, "outside.txt");
    // Direct: a host that lists first (as Claude Code does) is refused.
    const project = dir("direct");
    const direct = await directFilesystem(own, project);
    try {
      await direct.listTools();
      const refused = await direct.callTool({
        name: "write_file",
        arguments: { path: outside, content: "direct" },
      });
      expect(refused.isError).toBe(true);
    } finally {
      await direct.close();
    }
    expect(existsSync(outside)).toBe(false);
    // Through the pool, 8 projects at once, the write being each host's first call.
    load = burners();
    const projects = Array.from({ length: 8 }, (_, i) => dir(`w${i}`));
    const results = await Promise.all(
      projects.map(async (project, i) => {
        const host = await open(project);
        return host.callTool({
          name: "write_file",
          arguments: { path: join(own, `outside-${i}.txt`), content: "pooled" },
        });
      }),
    );
    expect(results.map((result) => result.isError)).toEqual(projects.map(() => true));
    for (let i = 0; i < projects.length; i += 1) {
      expect(existsSync(join(own, `outside-${i}.txt`))).toBe(false);
    }
  }, 300_000);
});

describe("a row's children for host profiles are capped", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const dirs: string[] = [];
  const bridges: StdioBridge[] = [];
  const CAP = 4;

  const dir = (name: string): string => {
    const made = realpathSync(mkdtempSync(join(tmpdir(), `mcpool-cap-${name}-`)));
    dirs.push(made);
    return made;
  };

  beforeAll(async () => {
    home = testHome("mcpool-cap-");
    home.writeConfig(
      { fs: { command: process.execPath, args: [filesystemBin, dir("row")] } },
      { mcpool: { maxChildrenPerServer: CAP } },
    );
    daemon = await startDaemon(home);
    pool = await poolClient(home);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(bridges.map((bridge) => bridge.close()));
    await pool?.close();
    await daemon?.stop();
    home?.remove();
    for (const made of dirs) rmSync(made, { recursive: true, force: true });
  });

  it("never holds more children than the cap for 30 distinct roots, each host served its own", async () => {
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const fs = (await pool.state()).find((state) => state.id === "fs");
        most = Math.max(most, fs?.profiles?.length ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const wrong: string[] = [];
    try {
      for (let batch = 0; batch < 5; batch += 1) {
        const projects = Array.from({ length: 6 }, (_, i) => dir(`p${batch}-${i}`));
        const seen = await Promise.all(
          projects.map(async (project) => {
            const bridge = await stdioBridge(home, ["--server", "fs"], {
              roots: { listChanged: true },
            });
            bridges.push(bridge);
            bridge.client.setRequestHandler(ListRootsRequestSchema, () => ({
              roots: [{ uri: pathToFileURL(project).href }],
            }));
            const result = await bridge.client
              .callTool({ name: "list_allowed_directories", arguments: {} })
              .catch((error: Error) => ({ content: [{ type: "text", text: error.message }] }));
            return textOf(result as CallResult);
          }),
        );
        seen.forEach((text, i) => {
          const project = projects[i] as string;
          if (!text.includes(project)) wrong.push(`${project}: ${text}`);
        });
        await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
      }
    } finally {
      watching = false;
      await watch;
    }
    expect(wrong, daemon.stderr()).toEqual([]);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(CAP);
    const fs = (await pool.state()).find((state) => state.id === "fs");
    expect(fs?.profiles?.length ?? 0).toBeLessThanOrEqual(CAP);
  }, 600_000);
});
