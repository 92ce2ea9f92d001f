/**
 * A runtime folder removed again and again while the daemon re-creates it (a cleaner racing
 * a user, or a user's own `rm -rf` loop): the daemon's socket and every MCP socket come
 * back, none with an error line on the way — a renewal that a removal overtook is done
 * again, not reported as a failure.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { removeFolder } from "../helpers/files.js";
import { useFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { mcpCatalogSocketPath, mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";

const BOUND_MS = 20_000;
const ROUNDS = 30;

const fleet = useFleet();

const isSocket = (path: string): boolean =>
  lstatSync(path, { throwIfNoEntry: false })?.isSocket() === true;

/** One MCP `initialize` over the socket at `path`: the serverInfo name it answers with. */
function initialize(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let text = "";
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split("\n").find((l) => l.includes('"id":1'));
      if (line === undefined) return;
      socket.destroy();
      const answer = JSON.parse(line) as { result?: { serverInfo?: { name?: string } } };
      resolve(answer.result?.serverInfo?.name ?? JSON.stringify(answer));
    });
    const params = {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "folder-race", version: "1.0.0" },
    };
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params })}\n`);
  });
}

describe("a runtime folder removed while the daemon re-creates it", () => {
  it("comes back with the daemon's socket and every MCP socket, and no error line", async () => {
    const h = fleet.home();
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    const d = await fleet.daemon(h);
    const dir = dirname(h.socketPath);
    const mcp = [
      mcpSocketPath(h.socketPath, undefined),
      mcpSocketPath(h.socketPath, "echo"),
      mcpCatalogSocketPath(h.socketPath, "on"),
      mcpCatalogSocketPath(h.socketPath, "auto"),
    ].map((path) => path!);
    await waitFor(() => mcp.every(isSocket), BOUND_MS, "the MCP sockets");

    for (let round = 0; round < ROUNDS; round++) {
      // Removed the moment the daemon's socket is back: while the MCP sockets are re-made.
      await waitFor(() => isSocket(h.socketPath), BOUND_MS, `the socket back (round ${round})`);
      removeFolder(dir);
      // Every other round a user makes the folder again first, as `mkdir -p` would.
      if (round % 2 === 1) mkdirSync(dir, { recursive: true, mode: 0o700 });
    }

    await waitFor(
      () => isSocket(h.socketPath) && mcp.every(isSocket),
      BOUND_MS,
      "the daemon's socket and every MCP socket",
    );
    expect((await (await fleet.agent(h, "after")).status()).pid).toBe(d.pid);
    // The pool's sockets answer as mcpool, a server's as that server.
    for (const path of mcp) expect(await initialize(path)).toMatch(/^(mcpool|fixture-echo)$/);
    const problems = d
      .stderr()
      .split("\n")
      .filter((line) => /^\S+ error |cannot listen|could not re-create|cannot watch/.test(line));
    expect(problems).toEqual([]);
  }, 120_000);
});
