import { describe, expect, it } from "vitest";

import { maxSocketPathBytes } from "../../src/daemon/process/paths.js";
import { temporarySocketPath } from "../../src/daemon/socket/bind.js";

/** An absolute path of exactly `bytes` ASCII bytes, ending in `/mcpool.sock`. */
const socketOf = (bytes: number): string => `/${"d".repeat(bytes - 13)}/mcpool.sock`;

describe("temporarySocketPath", () => {
  it("binds beside the socket when that name fits in sun_path", () => {
    expect(temporarySocketPath("/run/user/1000/mcpool/mcpool.sock", 4242, 107)).toBe(
      "/run/user/1000/mcpool/mcpool.sock.4242.tmp",
    );
  });

  it("falls back to a short hidden name in the socket's directory when it would not fit", () => {
    const path = socketOf(100);
    // `.4242.tmp` adds 9 bytes: 109 fits no platform.
    expect(temporarySocketPath(path, 4242, 107)).toBe(`${path.slice(0, -12)}/.4242.tmp`);
  });

  it("judges the name by the platform's own limit, the one the daemon checks its path by", () => {
    // 96 + 9 = 105 bytes: bindable on Linux, too long for macOS and the BSDs (103).
    const path = socketOf(96);
    for (const platform of ["freebsd", "openbsd", "darwin"] as const) {
      expect(maxSocketPathBytes(platform)).toBe(103);
      expect(temporarySocketPath(path, 4242, maxSocketPathBytes(platform))).toBe(
        `${path.slice(0, -12)}/.4242.tmp`,
      );
    }
    expect(temporarySocketPath(path, 4242, maxSocketPathBytes("linux"))).toBe(`${path}.4242.tmp`);
  });
});
