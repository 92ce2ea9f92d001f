/**
 * One pass of the MCP sockets that fails (their folder is a file, not a directory) is said
 * and over: the next pass runs, a pool change after it is no unhandled rejection, and
 * closing the sockets still finishes — the daemon's stop must never be kept from running.
 * A pass that finds their folder gone binds every socket again in a new one. A renewal with
 * the folder still there (the daemon's SIGUSR1) replaces each listener without a moment
 * when its path refuses a host.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpSockets, type McpSockets } from "../../src/bridge/fronts/mcp-sockets.js";
import { mcpSocketDir, mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import { waitFor } from "../helpers/processes.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** MCP sockets over `ids` beside a stand-in for the daemon's socket in a new runtime folder. */
async function started(ids: string[]): Promise<{
  runtime: string;
  socketPath: string;
  sockets: McpSockets;
  lines: string[];
  changed(): void;
}> {
  const runtime = mkdtempSync(join(tmpdir(), "mcpool-pass-"));
  made.push(runtime);
  // Only its presence counts here: a pass stands down while the daemon's socket is gone.
  const socketPath = join(runtime, "mcpool.sock");
  writeFileSync(socketPath, "");
  let listener: () => void = () => undefined;
  const lines: string[] = [];
  const sockets = await startMcpSockets({
    daemonSocketPath: socketPath,
    serverIds: () => ids,
    onChange: (changed) => {
      listener = changed;
      return () => undefined;
    },
    version: "0.0.0",
    log: (line) => lines.push(line),
  });
  return { runtime, socketPath, sockets, lines, changed: () => listener() };
}

describe("the MCP sockets after a pass that failed", () => {
  it("follow the pool again, and close", async () => {
    const ids = ["alpha"];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const { socketPath, sockets, changed } = await started(ids);
    try {
      const dir = mcpSocketDir(socketPath);
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(dir, "");
      await expect(sockets.renew()).rejects.toThrow(/is not a directory/);

      rmSync(dir);
      await sockets.renew();
      ids.push("beta");
      changed();
      await sockets.renew();
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      const beta = mcpSocketPath(socketPath, "beta")!;
      expect(sockets.paths.get("beta")).toBe(beta);
      expect(existsSync(beta)).toBe(true);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await sockets.close();
    }
  });

  it("bind again, in a new folder and with no error line, when a pool change finds their folder gone", async () => {
    const ids = ["alpha"];
    const { runtime, socketPath, sockets, lines, changed } = await started(ids);
    const isSocket = (path: string): boolean =>
      lstatSync(path, { throwIfNoEntry: false })?.isSocket() === true;
    const wanted = [undefined, "alpha", "beta"].map((id) => mcpSocketPath(socketPath, id)!);
    try {
      // The runtime folder removed and made again with the daemon's socket, as its keeper
      // does, and a server added before the keeper renews the MCP sockets.
      rmSync(runtime, { recursive: true, force: true });
      mkdirSync(runtime, { mode: 0o700 });
      writeFileSync(socketPath, "");
      ids.push("beta");
      changed();
      await waitFor(
        () => lines.length > 0 || wanted.every(isSocket),
        10_000,
        "an error line or every socket",
      );
      expect(lines).toEqual([]);
      expect(existsSync(mcpSocketDir(socketPath))).toBe(true);
    } finally {
      await sockets.close();
    }
  });

  it("are never refused while a renewal replaces their listeners in the folder still there", async () => {
    const { socketPath, sockets, lines } = await started(["alpha", "beta"]);
    const wanted = [undefined, "alpha", "beta"].map((id) => mcpSocketPath(socketPath, id)!);
    const inode = (path: string): number => lstatSync(path).ino;
    // Each renewal binds every path anew while the listener it replaces still holds the old
    // inode, so a path's inode differs from one round to the next (it may come back later).
    const rounds = [wanted.map(inode)];
    // A host connecting again and again to each path while the renewals run.
    const refused: string[] = [];
    let connects = 0;
    let renewing = true;
    const probe = async (path: string): Promise<void> => {
      while (renewing) {
        await new Promise<void>((resolve) => {
          const socket = createConnection(path);
          socket.once("connect", () => {
            connects += 1;
            socket.destroy();
            resolve();
          });
          socket.once("error", (error: NodeJS.ErrnoException) => {
            refused.push(`${path}: ${error.code ?? error.message}`);
            resolve();
          });
        });
      }
    };
    const probes = wanted.map(probe);
    try {
      for (let round = 0; round < 10; round++) {
        await sockets.renew();
        rounds.push(wanted.map(inode));
      }
    } finally {
      renewing = false;
      await Promise.all(probes);
    }
    try {
      expect(refused).toEqual([]);
      expect(connects).toBeGreaterThan(0);
      // Every listener was replaced in every round.
      const kept = rounds
        .slice(1)
        .filter((now, round) => now.some((ino, i) => ino === rounds[round]![i]));
      expect(kept).toEqual([]);
      // No listen failed. (A connection served says the stand-in daemon's socket is a file.)
      expect(lines.filter((line) => line.includes("listen"))).toEqual([]);
    } finally {
      await sockets.close();
    }
  });
});
