import { describe, expect, it } from "vitest";

import { temporarySocketName } from "mcpool-client/paths";
import { maxSocketPathBytes } from "../../src/daemon/process/paths.js";

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
      expect(maxSocketPathBytes(platform)).toBe(103);
      expect(temporarySocketName(path, maxSocketPathBytes(platform), "4242.1")).toBe(
        `${path.slice(0, -12)}/.4242.1.tmp`,
      );
    }
    expect(temporarySocketName(path, maxSocketPathBytes("linux"), "4242.1")).toBe(
      `${path}.4242.1.tmp`,
    );
  });
});
