/**
 * The MCP sockets' listeners (src/bridge/fronts/handed-listeners.ts): a handed fd that cannot
 * be listened on is still closed with those no scope took, never left open for the daemon's
 * life; a socket bound here is bound by rename, so closing its listener leaves the path; the
 * start's sweep unlinks only sockets, never a file or folder of the user's of the same name.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bindTag } from "mcpool-client/paths";
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

  it("unlinks only the sockets a daemon left, never a file or folder of the user's", async () => {
    const dir = folder();
    // Names the sweep looks for, but not sockets: a user's own files and folder.
    writeFileSync(join(dir, "github"), "token");
    writeFileSync(join(dir, "a.sock"), "notes");
    mkdirSync(join(dir, "memory"));
    // A socket under a bind's temporary name, as a daemon killed while binding leaves it.
    const stale = join(dir, bindTag(4242, 7));
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(stale, resolve));
    expect(existsSync(stale)).toBe(true);
    await Listeners.clearing(dir, undefined, () => undefined);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(join(dir, "github"))).toBe(true);
    expect(existsSync(join(dir, "a.sock"))).toBe(true);
    expect(existsSync(join(dir, "memory"))).toBe(true);
    await new Promise<void>((resolve) => dead.close(() => resolve()));
  });
});
