/**
 * The MCP Inspector CLI (@modelcontextprotocol/inspector-cli, pinned)
 * drives `mcpool bridge` in front of a real daemon pooling the reference server
 * @modelcontextprotocol/server-everything, and lists and calls its tools. The Inspector is
 * given the bridge as a host config entry, the shape `mcpool wire` writes; it runs with its
 * own build/ folder as the working directory, since it reads `../package.json` from there.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { BRIDGE_PATHS, bridgeCommand, scopeSocket, type BridgePath } from "../helpers/bridge.js";
import { referenceServer, waitFor } from "../helpers/processes.js";

const require = createRequire(import.meta.url);
const everythingBin = referenceServer("server-everything");
const inspectorBuild = join(
  dirname(require.resolve("@modelcontextprotocol/inspector-cli/package.json")),
  "build",
);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Bound on one Inspector run: it spawns itself, then the bridge, which asks the daemon. */
const INSPECTOR_TIMEOUT_MS = 60_000;
/** A test runs the Inspector up to twice: it must outlast them, or it leaves one running. */
const TEST_TIMEOUT_MS = 2 * INSPECTOR_TIMEOUT_MS + 10_000;

// Through each path a host can be given: SDK bridge, lean bridge, perl relay.
describe.each(BRIDGE_PATHS)(
  "the MCP Inspector CLI in front of mcpool bridge (%s)",
  (via: BridgePath) => {
    let home: TestHome;
    let daemon: RunningDaemon;
    let configDir: string;
    let config: string;

    const inspect = (server: string, args: string[]): Promise<Run> =>
      new Promise((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ["cli.js", "--cli", "--config", config, "--server", server, ...args],
          { cwd: inspectorBuild, env: home.env, stdio: ["ignore", "pipe", "pipe"] },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(
            new Error(`the Inspector did not finish within ${INSPECTOR_TIMEOUT_MS} ms: ${stderr}`),
          );
        }, INSPECTOR_TIMEOUT_MS);
        child.once("exit", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });

    const json = (run: Run): Record<string, unknown> => {
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Record<string, unknown>;
    };

    beforeAll(async () => {
      home = testHome("mcpool-inspector-");
      home.writeConfig({ everything: { command: process.execPath, args: [everythingBin] } });
      daemon = await startDaemon(home);
      const pool: PoolClient = await poolClient(home);
      try {
        // The reference server takes a moment to start; the Inspector should find it warm.
        const deadline = Date.now() + 30_000;
        while ((await pool.state())[0]?.status !== "ready" && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await pool.close();
      }
      configDir = mkdtempSync(join(tmpdir(), "mcpool-inspector-config-"));
      config = join(configDir, "mcp.json");
      for (const args of [[], ["--server", "everything"]]) {
        await waitFor(() => existsSync(scopeSocket(home, args)), 10_000, "the MCP sockets");
      }
      const bridge = (...args: string[]) =>
        bridgeCommand(home, ["--socket", home.socketPath, ...args], via);
      writeFileSync(
        config,
        JSON.stringify({
          mcpServers: { pool: bridge(), everything: bridge("--server", "everything") },
        }),
      );
    });

    afterAll(async () => {
      await daemon?.stop();
      home?.remove();
      if (configDir) rmSync(configDir, { recursive: true, force: true });
    }, TEST_TIMEOUT_MS);

    it(
      "lists the pooled reference server's tools under their qualified names",
      async () => {
        const result = json(await inspect("pool", ["--method", "tools/list"]));
        const names = (result.tools as { name: string }[]).map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum"]));
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "calls a tool by its qualified name",
      async () => {
        const result = json(
          await inspect("pool", [
            "--method",
            "tools/call",
            "--tool-name",
            "everything__get-sum",
            "--tool-arg",
            "a=2",
            "b=3",
          ]),
        );
        expect(JSON.stringify(result.content)).toMatch(/5/);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "lists and calls a tool under its own name with --server",
      async () => {
        const listed = json(await inspect("everything", ["--method", "tools/list"]));
        expect((listed.tools as { name: string }[]).map((t) => t.name)).toContain("echo");
        const called = json(
          await inspect("everything", [
            "--method",
            "tools/call",
            "--tool-name",
            "echo",
            "--tool-arg",
            "message=hello from the inspector",
          ]),
        );
        expect(called.content).toEqual([{ type: "text", text: "Echo: hello from the inspector" }]);
      },
      TEST_TIMEOUT_MS,
    );
  },
);
