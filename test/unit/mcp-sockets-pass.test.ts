/**
 * One pass of the MCP sockets that fails (their folder is a file, not a directory) is said
 * and over: the next pass runs, a pool change after it is no unhandled rejection, and
 * closing the sockets still finishes — the daemon's stop must never be kept from running.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMcpSockets } from "../../src/bridge/fronts/mcp-sockets.js";
import { mcpSocketDir, mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the MCP sockets after a pass that failed", () => {
  it("follow the pool again, and close", async () => {
    const runtime = mkdtempSync(join(tmpdir(), "mcpool-pass-"));
    made.push(runtime);
    // Only its presence counts here: a pass stands down while the daemon's socket is gone.
    const socketPath = join(runtime, "mcpool.sock");
    writeFileSync(socketPath, "");
    const ids = ["alpha"];
    let changed: () => void = () => undefined;
    const lines: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const sockets = await startMcpSockets({
      daemonSocketPath: socketPath,
      serverIds: () => ids,
      onChange: (listener) => {
        changed = listener;
        return () => undefined;
      },
      version: "0.0.0",
      log: (line) => lines.push(line),
    });
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
});
