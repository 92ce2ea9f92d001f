import { mkdirSync, mkdtempSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

import {
  SocketPathTooLongError,
  bindTag,
  heldIdentity,
  isTemporarySocketName,
  pathIdentity,
  socketPathLimit,
  temporarySocketName,
} from "mcpool-client/paths";

/** An absolute path of exactly `bytes` ASCII bytes, ending in `/mcpool.sock`. */
const socketOf = (bytes: number): string => `/${"d".repeat(bytes - 13)}/mcpool.sock`;

describe("temporarySocketName", () => {
  it("binds beside the socket when that name fits in sun_path", () => {
    expect(temporarySocketName("/run/user/1000/mcpool/mcpool.sock", 107, "4242.1")).toBe(
      "/run/user/1000/mcpool/mcpool.sock.4242.1.tmp",
    );
  });

  it("falls back to a short hidden name in the socket's directory when it would not fit", () => {
    const path = socketOf(100);
    // `.4242.1.tmp` adds 11 bytes: 111 fits no platform.
    expect(temporarySocketName(path, 107, "4242.1")).toBe(`${path.slice(0, -12)}/.4242.1.tmp`);
  });

  it("judges the name by the platform's own limit, the one the daemon checks its path by", () => {
    // 94 + 11 = 105 bytes: bindable on Linux, too long for macOS and the BSDs (103).
    const path = socketOf(94);
    for (const platform of ["freebsd", "openbsd", "darwin"] as const) {
      expect(socketPathLimit(platform)).toBe(103);
      expect(temporarySocketName(path, socketPathLimit(platform), "4242.1")).toBe(
        `${path.slice(0, -12)}/.4242.1.tmp`,
      );
    }
    expect(temporarySocketName(path, socketPathLimit("linux"), "4242.1")).toBe(
      `${path}.4242.1.tmp`,
    );
  });

  it("fits a daemon socket path at the limit whatever the pid's width and the bind's count", () => {
    // The widest pid Linux gives (pid_max 4194304) and a daemon that has bound for long.
    const tag = bindTag(4194303, 99999);
    expect(tag).toMatch(/^[0-9a-z]{6}$/);
    const path = socketOf(107);
    const temporary = temporarySocketName(path, 107, tag);
    expect(Buffer.byteLength(temporary)).toBeLessThanOrEqual(107);
    expect(temporary).toBe(`${path.slice(0, -12)}/.${tag}.tmp`);
    expect(isTemporarySocketName(temporary.slice(temporary.lastIndexOf("/") + 1))).toBe(true);
  });

  it("gives each bind of one process, and each process, a tag of the same width of its own", () => {
    const tags = new Set<string>();
    for (const pid of [1, 4242, 99999, 4194303])
      for (let count = 1; count <= 511; count += 1) tags.add(bindTag(pid, count));
    expect(tags.size).toBe(4 * 511);
    for (const tag of tags) expect(tag).toHaveLength(6);
  });

  it("binds an MCP socket path at the limit under the bare tag: `a.sock` is the shortest name", () => {
    // `a.sock` at the limit: the hidden name (11 bytes) is longer than its own name, the tag
    // alone (6 bytes) is as long as it.
    const path = `/${"d".repeat(107 - 8)}/a.sock`;
    expect(Buffer.byteLength(path)).toBe(107);
    const tag = bindTag(4194303, 99999);
    const temporary = temporarySocketName(path, 107, tag);
    expect(temporary).toBe(`${path.slice(0, -7)}/${tag}`);
    expect(Buffer.byteLength(temporary)).toBe(107);
    expect(isTemporarySocketName(tag)).toBe(true);
  });

  it("refuses, naming the path, a socket whose temporary name would not fit", () => {
    // `sock` at the limit: shorter than any temporary name, the bare tag's 6 bytes.
    const path = `/${"d".repeat(107 - 6)}/sock`;
    expect(Buffer.byteLength(path)).toBe(107);
    expect(() => temporarySocketName(path, 107, bindTag(4242, 1))).toThrow(SocketPathTooLongError);
    expect(() => temporarySocketName(path, 107, bindTag(4242, 1))).toThrow(
      /cannot bind \/d+\/sock: its temporary name needs 109 bytes, over the 107-byte limit/,
    );
  });

  it("knows the names it makes, and only those, as temporary", () => {
    expect(isTemporarySocketName(`a.sock.${bindTag(4242, 3)}.tmp`)).toBe(true);
    expect(isTemporarySocketName(`.${bindTag(4242, 3)}.tmp`)).toBe(true);
    expect(isTemporarySocketName(bindTag(4242, 3))).toBe(true);
    expect(isTemporarySocketName("a.sock")).toBe(false);
    expect(isTemporarySocketName("notes.tmp")).toBe(false);
    expect(isTemporarySocketName("abcdefg")).toBe(false);
  });
});

describe("heldIdentity", () => {
  it("tells a folder removed and made again at once from the one it holds", () => {
    const parent = mkdtempSync(join(tmpdir(), "mcpool-held-"));
    const folder = join(parent, "run");
    try {
      // Many rounds: on a file system that hands a freed inode number straight back (ext4
      // does, nearly every time), a bare `dev:ino` takes the new folder for the old.
      for (let round = 0; round < 20; round++) {
        mkdirSync(folder);
        const held = heldIdentity(folder);
        expect(held.identity).toBe(pathIdentity(folder));
        rmdirSync(folder);
        mkdirSync(folder);
        expect(pathIdentity(folder), `round ${round}`).not.toBe(held.identity);
        held.release();
        rmdirSync(folder);
      }
      expect(heldIdentity(folder).identity).toBeUndefined();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
