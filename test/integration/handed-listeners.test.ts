/**
 * The MCP sockets' listeners (src/bridge/fronts/handed-listeners.ts): a handed fd that cannot
 * be listened on is still closed with those no scope took, never left open for the daemon's
 * life; a socket bound here is bound by rename, so closing its listener leaves the path.
 */
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Listeners } from "../../src/bridge/fronts/handed-listeners.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcpool-listeners-"));
  made.push(dir);
  return dir;
}

/** Whether `fd` is open in this process. */
function isOpen(fd: number): boolean {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

describe("the MCP sockets' listeners", () => {
  it("closes a handed fd whose listen failed, with the fds no scope took", async () => {
    const dir = folder();
    // Not a socket: listening on it fails.
    const fd = openSync(join(dir, "not-a-socket"), "w");
    try {
      const listeners = await Listeners.clearing(dir, new Map([["alpha", fd]]), (scope) =>
        join(dir, `${scope}.sock`),
      );
      const listener = createServer();
      await expect(listeners.listen(listener, "alpha", join(dir, "alpha.sock"))).rejects.toThrow();
      listener.close();
      expect(isOpen(fd)).toBe(true);
      await listeners.closeUntaken();
      expect(isOpen(fd)).toBe(false);
    } finally {
      if (isOpen(fd)) closeSync(fd);
    }
  });

  it("binds a socket that closing its listener does not unlink", async () => {
    const dir = folder();
    const path = join(dir, "alpha.sock");
    const listeners = await Listeners.clearing(dir, undefined, () => path);
    const listener = createServer();
    await listeners.listen(listener, "alpha", path);
    expect(existsSync(path)).toBe(true);
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    expect(existsSync(path)).toBe(true);
    await listeners.closed(listener, "alpha");
    expect(existsSync(path)).toBe(false);
  });
});
