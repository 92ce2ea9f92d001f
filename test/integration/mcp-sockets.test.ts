/**
 * The daemon's MCP sockets follow the pool's servers as mcp.json changes: a row
 * added to a running daemon gets its `mcp/<id>.sock` with the reconcile that adds it, a row
 * removed loses it — not at whatever pool event happens to come next. The rows are lazy, so
 * no other event (a connect) follows the edit: only the pool's word that its servers changed
 * can bring the socket.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { socketPathLimit } from "mcpool-client/paths";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopeSocket, stdioBridge } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture, waitFor } from "../helpers/processes.js";

const ECHO = { command: process.execPath, args: [fixture("echo.mjs")], lazy: true };

/** Bound on a socket following a reconcile that has finished: a listen, a few fs calls. */
const SOCKET_MS = 5_000;
/** Bound on a lazy server's start for a host's listing: a node child on a loaded machine. */
const START_MS = 20_000;

describe("the daemon's MCP sockets as mcp.json changes", () => {
  let home: TestHome;
  let daemon: RunningDaemon;
  let pool: PoolClient;
  const args = ["--server", "late", "--socket"];

  beforeAll(async () => {
    home = testHome("mcpool-mcp-sockets-");
    home.writeConfig({ echo: ECHO });
    daemon = await startDaemon(home);
    pool = await poolClient(home);
    await waitFor(
      () => existsSync(scopeSocket(home, ["--server", "echo"])),
      10_000,
      "echo's socket",
    );
  });

  afterAll(async () => {
    await pool?.close();
    await daemon?.stop();
    home?.remove();
  });

  it("gives a server added after the daemon started its socket with the reload, and serves it", async () => {
    const socket = scopeSocket(home, ["--server", "late"]);
    expect(existsSync(socket)).toBe(false);
    home.writeConfig({ echo: ECHO, late: ECHO });
    // Resolves once the reconcile of the file as it is now has finished.
    await pool.reload();
    await waitFor(() => existsSync(socket), SOCKET_MS, "the added server's MCP socket");
    const host = await stdioBridge(home, [...args, home.socketPath], {}, "perl");
    try {
      // A lazy server with no list yet: the host's tools/list is its first use and starts it.
      // Without that, no listing ever names a tool. (Once, in a full run, the first listing
      // came back empty and the cause was not found: the wait says what the row was then.)
      let listed: string[] = [];
      await waitFor(
        async () => {
          listed = (await host.client.listTools()).tools.map((tool) => tool.name);
          return listed.length > 0;
        },
        START_MS,
        "the host's listing to name the lazy server's tools",
      ).catch(async (error: Error) => {
        const row = (await pool.state()).find((s) => s.id === "late");
        throw new Error(`${error.message}; the row: ${JSON.stringify(row)}`);
      });
      expect(listed).toEqual(["echo", "add", "sleep", "pid"]);
      const called = await host.client.callTool({ name: "echo", arguments: { text: "late" } });
      expect(called.content).toEqual([{ type: "text", text: "late" }]);
    } finally {
      await host.close();
    }
  });

  it("takes the socket of a server removed from mcp.json away with the reload", async () => {
    const socket = scopeSocket(home, ["--server", "late"]);
    await waitFor(() => existsSync(socket), SOCKET_MS, "the socket of the server to remove");
    home.writeConfig({ echo: ECHO });
    await pool.reload();
    await waitFor(() => !existsSync(socket), SOCKET_MS, "the removed server's socket to go");
    expect(existsSync(scopeSocket(home, ["--server", "echo"]))).toBe(true);
  });
});

describe("an MCP socket whose path is at the sun_path limit", () => {
  // `ab`: the daemon's own socket binds under its hidden temporary name, the MCP socket's
  // would not fit. `a`: the shortest name a server id gives, and the daemon's socket beside
  // its folder needs the bare tag too.
  for (const id of ["ab", "a"]) {
    it(`is bound and serves when the server's id is short (\`${id}.sock\`)`, async () => {
      const base = testHome("mcpool-mcp-limit-");
      // `<folder>/mcp/<id>.sock` is as long as a socket path can be; the daemon's `p.sock` fits.
      const limit = socketPathLimit();
      const room = limit - 11 - id.length - Buffer.byteLength(base.dir);
      const folder = join(base.dir, "r".repeat(room));
      const socketPath = join(folder, "p.sock");
      const env = { ...base.env, MCPOOL_SOCKET: socketPath };
      const home: TestHome = { ...base, socketPath, env };
      const socket = join(folder, "mcp", `${id}.sock`);
      expect(Buffer.byteLength(socket)).toBe(limit);
      expect(scopeSocket(home, ["--server", id])).toBe(socket);
      home.writeConfig({ [id]: { ...ECHO, lazy: false } });
      const daemon = await startDaemon(home);
      try {
        await waitFor(() => existsSync(socket), 10_000, "the MCP socket at the limit");
        const host = await stdioBridge(home, ["--server", id, "--socket", socketPath], {}, "perl");
        try {
          const called = await host.client.callTool({ name: "echo", arguments: { text: "fits" } });
          expect(called.content).toEqual([{ type: "text", text: "fits" }]);
        } finally {
          await host.close();
        }
      } finally {
        await daemon.stop();
        home.remove();
      }
    });
  }
});
