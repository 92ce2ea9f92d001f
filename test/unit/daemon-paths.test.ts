import { dirname, join, resolve } from "node:path";
import envPaths from "env-paths";
import { defaultSocketPath } from "mcpool-client";
import { socketPathLimit } from "mcpool-client/paths";
import { describe, expect, it } from "vitest";

import { parseProcStat } from "../../src/daemon/process/instance-lock.js";
import {
  DaemonSetupError,
  MAX_SOCKET_PATH_BYTES,
  checkSocketPath,
  resolvePaths,
} from "../../src/daemon/process/paths.js";

const uid = process.getuid?.();

describe("resolvePaths", () => {
  it("takes the socket from the option first, then MCPOOL_SOCKET, then XDG_RUNTIME_DIR", () => {
    const env = { MCPOOL_SOCKET: "/run/a/env.sock", XDG_RUNTIME_DIR: "/run/user/7" };
    expect(resolvePaths({ socket: "/srv/opt.sock", env }).socketPath).toBe("/srv/opt.sock");
    expect(resolvePaths({ env }).socketPath).toBe("/run/a/env.sock");
    expect(resolvePaths({ env: { XDG_RUNTIME_DIR: "/run/user/7" } }).socketPath).toBe(
      "/run/user/7/mcpool/mcpool.sock",
    );
  });

  it("falls back to a per-uid directory under /tmp when there is no runtime dir", () => {
    expect(resolvePaths({ env: {} }).socketPath).toBe(`/tmp/mcpool-${uid}/mcpool.sock`);
  });

  it("agrees with the client's defaultSocketPath for every environment", () => {
    const envs: NodeJS.ProcessEnv[] = [
      {},
      { XDG_RUNTIME_DIR: "/run/user/1000" },
      { XDG_RUNTIME_DIR: "relative/dir" },
      { MCPOOL_SOCKET: "/x/y.sock", XDG_RUNTIME_DIR: "/run/user/1000" },
      { MCPOOL_SOCKET: "" },
    ];
    for (const env of envs) {
      expect(resolvePaths({ env }).socketPath).toBe(resolve(defaultSocketPath(env)));
    }
  });

  it("puts the lock beside the socket, and makes every path absolute", () => {
    const paths = resolvePaths({ socket: "rel/dir/s.sock", config: "conf.json", env: {} });
    expect(paths.socketPath).toBe(resolve("rel/dir/s.sock"));
    expect(paths.socketDir).toBe(dirname(resolve("rel/dir/s.sock")));
    expect(paths.lockPath).toBe(join(paths.socketDir, "mcpool.lock"));
    expect(paths.configPath).toBe(resolve("conf.json"));
  });

  it("takes the config from the option, then MCPOOL_CONFIG, then env-paths' config dir", () => {
    const env = { MCPOOL_CONFIG: "/etc/m/mcp.json" };
    expect(resolvePaths({ config: "/opt/c.json", env }).configPath).toBe("/opt/c.json");
    expect(resolvePaths({ env }).configPath).toBe("/etc/m/mcp.json");
    expect(resolvePaths({ env: { MCPOOL_CONFIG: "" } }).configPath).toBe(
      join(envPaths("mcpool", { suffix: "" }).config, "mcp.json"),
    );
  });

  it("takes data and log directories from env-paths, without a suffix", () => {
    const expected = envPaths("mcpool", { suffix: "" });
    const paths = resolvePaths();
    expect(paths.dataDir).toBe(expected.data);
    expect(paths.logDir).toBe(expected.log);
    expect(paths.configPath).toBe(
      process.env.MCPOOL_CONFIG
        ? resolve(process.env.MCPOOL_CONFIG)
        : join(expected.config, "mcp.json"),
    );
  });

  it("honours the XDG directories of an explicit environment, as env-paths does for process.env", () => {
    const paths = resolvePaths({
      env: { XDG_CONFIG_HOME: "/h/cfg", XDG_DATA_HOME: "/h/data", XDG_STATE_HOME: "/h/state" },
    });
    expect(paths.configPath).toBe("/h/cfg/mcpool/mcp.json");
    expect(paths.dataDir).toBe("/h/data/mcpool");
    expect(paths.logDir).toBe("/h/state/mcpool");
  });
});

describe("checkSocketPath", () => {
  /** An absolute path of exactly `bytes` ASCII bytes. */
  const pathOf = (bytes: number): string => `/${"a".repeat(bytes - 1)}`;

  it("knows sun_path less its NUL: 107 bytes on Linux, 103 on macOS", () => {
    expect(socketPathLimit("linux")).toBe(107);
    expect(socketPathLimit("android")).toBe(107);
    expect(socketPathLimit("darwin")).toBe(103);
    expect(socketPathLimit("freebsd")).toBe(103);
    expect(MAX_SOCKET_PATH_BYTES).toBe(socketPathLimit(process.platform));
  });

  it("accepts a path of exactly the maximum and refuses one byte more, naming it", () => {
    expect(() => checkSocketPath(pathOf(MAX_SOCKET_PATH_BYTES))).not.toThrow();
    const long = pathOf(MAX_SOCKET_PATH_BYTES + 1);
    let caught: unknown;
    try {
      checkSocketPath(long);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DaemonSetupError);
    const error = caught as DaemonSetupError;
    expect(error.code).toBe("socket-path-too-long");
    expect(error.path).toBe(long);
    expect(error.detail).toEqual({
      bytes: MAX_SOCKET_PATH_BYTES + 1,
      limit: MAX_SOCKET_PATH_BYTES,
    });
    expect(error.message).toContain(long);
    expect(error.message).toContain(`${MAX_SOCKET_PATH_BYTES + 1} bytes`);
  });

  it("counts multi-byte characters in bytes, not characters", () => {
    // "é" is 2 bytes in UTF-8, "€" 3, "🦀" 4.
    const fits = `/${"é".repeat(53)}`;
    expect(Buffer.byteLength(fits)).toBe(107);
    expect(() => checkSocketPath(fits, 107)).not.toThrow();
    const over = `${fits}a`;
    expect(over.length).toBe(55);
    expect(() => checkSocketPath(over, 107)).toThrow(/108 bytes/);
    const wide = `/${"🦀".repeat(26)}/s`;
    expect(wide.length).toBeLessThan(60);
    expect(() => checkSocketPath(wide, 103)).toThrow(
      expect.objectContaining({ code: "socket-path-too-long", detail: { bytes: 107, limit: 103 } }),
    );
    expect(() => checkSocketPath(`/${"€".repeat(34)}`, 103)).not.toThrow();
    expect(() => checkSocketPath(`/${"€".repeat(34)}s`, 103)).toThrow(DaemonSetupError);
  });
});

describe("parseProcStat", () => {
  const rest = "S 1 4242 4242 0 -1 4194560 90 0 0 0 0 0 0 0 20 0 1 0 123456 2990080 414 0";

  it("reads state, process group and start time after the last parenthesis", () => {
    expect(parseProcStat(`4242 (sleep) ${rest}`)).toEqual({
      state: "S",
      pgrp: 4242,
      startTime: 123456,
    });
  });

  it("is not misled by a command name holding spaces and parentheses", () => {
    expect(parseProcStat(`4242 (a) 7 8 (b) ${rest}`)).toEqual({
      state: "S",
      pgrp: 4242,
      startTime: 123456,
    });
  });

  it("refuses a line it cannot read", () => {
    expect(parseProcStat("")).toBeUndefined();
    expect(parseProcStat("4242 (x) S 1 2")).toBeUndefined();
  });
});
