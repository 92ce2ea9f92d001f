/**
 * A scratch home for `mcpool wire` and `unwire` run in this process: a host's file holding the
 * given text and mcpool's mcp.json the given servers. The entries wire writes name a fixed
 * bridge command and daemon socket (no daemon is there, so no stock pipe is taken).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import {
  hostConfigPath,
  type HostEnvironment,
  type HostName,
} from "../../src/cli/hosts/configs.js";
import type { WireOptions } from "../../src/cli/hosts/wire.js";

export const NODE = "/usr/bin/node";
export const MAIN = "/opt/mcpool/dist/cli/main.js";
export const SOCKET = "/run/user/1000/mcpool/mcpool.sock";

/** The reference servers' arguments, as a host lists them after `npx`. */
export const FILES = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"];
export const MEMORY = ["-y", "@modelcontextprotocol/server-memory"];

/**
 * Continue's config.yaml with the files server (`command`, its args a flow sequence, then the
 * lines `more`) before a server of its own.
 */
export const continueFile = (
  command = "npx",
  args = `["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]`,
  more = "",
): string => `name: Local Config
version: 1.0.0
schema: v1
mcpServers:
  - name: files
    command: ${command}
    args: ${args}
${more}  - name: other
    command: other-server
`;

export interface WireHome {
  /** The host's file. */
  file: string;
  /** mcpool's mcp.json. */
  configPath: string;
  /** Where the host's files are looked for: this home. */
  where: HostEnvironment;
  /**
   * Runs `command` (runWire, runWireOneEntry or runUnwire) on the host, with `more` of its
   * options (`catalog`, `oneEntry`): its exit code and output.
   */
  run(
    command: (options: WireOptions) => Promise<number>,
    write?: boolean,
    more?: Partial<WireOptions>,
  ): Promise<{ code: number; output: string }>;
}

/**
 * A home made under the system's temporary folder (its name starting `prefix`), pushed on
 * `dirs` for the test file to remove, with `host`'s file holding `text` and mcpool's
 * mcp.json holding `servers`.
 */
export function wireHome(
  dirs: string[],
  prefix: string,
  host: HostName,
  text: string,
  servers: Record<string, unknown>,
): WireHome {
  const home = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(home);
  const where = { home, platform: "linux" as const, env: {} };
  const file = hostConfigPath(host, where);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  const configPath = join(home, "mcpool", "mcp.json");
  mkdirSync(dirname(configPath), { recursive: true });
  writeFileSync(configPath, JSON.stringify({ mcpServers: servers }));
  const run: WireHome["run"] = async (command, write = true, more = {}) => {
    const lines: string[] = [];
    const push = (line: string) => lines.push(line);
    const code = await command({
      host,
      write,
      configPath,
      where,
      command: [NODE, MAIN],
      socketPath: SOCKET,
      env: { PATH: "" },
      out: push,
      err: push,
      ...more,
    });
    return { code, output: lines.join("\n") };
  };
  return { file, configPath, where, run };
}

/**
 * `wireHome` for one test file: each home named `prefix` and the host, all of them removed
 * after each test.
 */
export function wireHomes(
  prefix: string,
): (host: HostName, text: string, servers: Record<string, unknown>) => WireHome {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (host, text, servers) => wireHome(dirs, `${prefix}${host}-`, host, text, servers);
}
