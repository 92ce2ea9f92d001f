/**
 * Tools on demand for a 2026-07-28 host: through every entry with `--catalog` (the full
 * CLI's stdio bridge, the lean bridge and the perl relay on the daemon's `@catalog` socket,
 * `bridge --http`, and one server's `--server ID --catalog`), a modern host's first list is
 * the one a legacy host gets through the same entry — the pool's search, describe and call
 * tools and the `alwaysLoad` ones — not every tool; its search finds a tool and call_tool
 * calls it, as a legacy host's do.
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { relayArgs } from "../../src/cli/hosts/pipe-entry.js";
import {
  MODERN,
  bridgeCommand,
  httpBridge,
  stringEnv,
  type HttpBridgeProcess,
} from "../helpers/bridge.js";
import { serversReady, startDaemon, testHome, type RunningDaemon } from "../helpers/daemon.js";
import { referenceRows } from "../helpers/processes.js";

/** Bound on the reference servers starting on a loaded machine. */
const READY_MS = 60_000;

type Entry = "sdk" | "lean" | "perl" | "http" | "server";
type Connectable = Pick<Client, "listTools" | "callTool" | "close">;

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");

describe("bridge --catalog for a 2026-07-28 host", () => {
  const home = testHome("mcpool-catalog-modern-");
  let daemon: RunningDaemon | undefined;
  let http: HttpBridgeProcess | undefined;

  beforeAll(async () => {
    home.writeConfig(referenceRows(home.dir, ["echo"]));
    daemon = await startDaemon(home);
    await serversReady(home, READY_MS);
    http = await httpBridge(home, ["--catalog"]);
  }, READY_MS + 30_000);

  afterAll(async () => {
    await http?.stop();
    await daemon?.stop();
    home.remove();
  });

  /** What a host of `era` spawns or dials for `entry`. */
  async function open(entry: Entry, era: "legacy" | "modern"): Promise<Connectable> {
    const stdio =
      entry === "perl"
        ? { command: "perl", args: relayArgs("@catalog", home.socketPath) }
        : entry === "server"
          ? bridgeCommand(home, ["--server", "everything", "--catalog"], "sdk")
          : entry !== "http"
            ? bridgeCommand(home, ["--catalog"], entry)
            : undefined;
    const headers = { authorization: `Bearer ${http!.token}` };
    if (era === "legacy") {
      const client = new Client({ name: "legacy-host", version: "1.0.0" });
      await client.connect(
        stdio !== undefined
          ? new StdioClientTransport({ ...stdio, env: stringEnv(home.env) })
          : new StreamableHTTPClientTransport(new URL(http!.url), { requestInit: { headers } }),
      );
      return client;
    }
    const client = new ModernClient({ name: "modern-host", version: "1.0.0" }, MODERN);
    await client.connect(
      stdio !== undefined
        ? new ModernStdio({ ...stdio, env: stringEnv(home.env) })
        : new ModernHttp(new URL(http!.url), { requestInit: { headers } }),
    );
    return client as unknown as Connectable;
  }

  for (const entry of ["sdk", "lean", "perl", "http", "server"] as const) {
    it(
      `lists what a legacy host lists, finds and calls through call_tool (${entry})`,
      async () => {
        const legacy = await open(entry, "legacy");
        const modern = await open(entry, "modern");
        try {
          const want = (await legacy.listTools()).tools.map((t) => t.name);
          const got = (await modern.listTools()).tools.map((t) => t.name);
          expect(want).toContain("search_tools");
          expect(got).toEqual(want);

          const sum = entry === "server" ? "get-sum" : "everything__get-sum";
          const search = await modern.callTool({
            name: "search_tools",
            arguments: { query: "add two numbers together" },
          });
          expect(textOf(search)).toContain(sum);
          const called = await modern.callTool({
            name: "call_tool",
            arguments: { name: sum, arguments: { a: 20, b: 22 } },
          });
          expect(textOf(called)).toMatch(/\b42\b/);
        } finally {
          await legacy.close();
          await modern.close();
        }
      },
      READY_MS,
    );
  }
});
