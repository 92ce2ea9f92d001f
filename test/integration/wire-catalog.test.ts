/**
 * `mcpool wire <host> --catalog`, through the built CLI and a real
 * daemon, for every host wire knows: the server's entry becomes `mcpool bridge --server ID
 * --catalog`, and that entry, spawned as the host spawns it, lists the pool's search,
 * describe and call tools, finds the server's tools and calls them.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, it } from "vitest";
import { HOSTS, hostConfigPath } from "../../src/cli/hosts/configs.js";
import { binPath, stringEnv } from "../helpers/bridge.js";
import {
  client,
  runCliIn,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { entryCommand, hostFileText } from "../helpers/host-files.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")], env: {} };

const textOf = (result: unknown): string =>
  (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");

/**
 * The hosts side by side (each its own file and its own catalog bridge on the one daemon):
 * each mostly waits on a CLI and a bridge starting.
 */
describe.concurrent("mcpool wire --catalog, for every host", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;

  beforeAll(async () => {
    home = testHome("mcpool-wire-catalog-");
    mkdirSync(join(home.dir, "project"), { recursive: true });
    home.writeConfig({ echo: { command: ECHO.command, args: ECHO.args } });
    daemon = await startDaemon(home);
    pool = await client(home);
  }, 30_000);

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    home?.remove();
  });

  for (const host of HOSTS) {
    it(
      `rewrites ${host}'s entry to a catalog bridge that finds and calls the server's tools`,
      { timeout: 60_000 },
      async ({ expect }) => {
        const where = { home: home.dir, platform: "linux" as const, env: home.env };
        const path = hostConfigPath(host, where);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, hostFileText(host, "echo", ECHO));
        const project = join(home.dir, "project");
        const wired = await runCliIn(home, project, "wire", host, "--write", "--json", "--catalog");
        expect(wired.code, wired.stderr).toBe(0);
        const command = entryCommand(host, readFileSync(path, "utf8"), "echo");
        expect(command.slice(1)).toEqual([
          binPath,
          "bridge",
          "--server",
          "echo",
          "--catalog",
          "--socket",
          home.socketPath,
        ]);

        const transport = new StdioClientTransport({
          command: command[0]!,
          args: command.slice(1),
          env: stringEnv(home.env),
          stderr: "pipe",
        });
        const session = new Client({ name: `${host}-host`, version: "1.0.0" });
        await session.connect(transport);
        const pid = transport.pid;
        try {
          const listed = (await session.listTools()).tools.map((t) => t.name);
          expect(listed).toEqual(["search_tools", "describe_tool", "call_tool"]);
          const found = await session.callTool({
            name: "search_tools",
            arguments: { query: "echo text back" },
          });
          expect(textOf(found)).toContain('"name":"echo"');
          const called = await session.callTool({
            name: "call_tool",
            arguments: { name: "echo", arguments: { text: host } },
          });
          expect(textOf(called)).toBe(host);
        } finally {
          await session.close();
          if (pid !== null) await waitFor(() => !alive(pid), 10_000, "the host's entry to exit");
        }
      },
    );
  }
});
