/**
 * A real daemon for integration tests: `mcpool serve` from the built CLI, in a temp home
 * whose XDG directories hold its socket, config, data and logs.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type PoolClient } from "mcpool-client";
import { alive, waitFor } from "./processes.js";

export const cliPath = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface TestHome {
  dir: string;
  socketPath: string;
  configPath: string;
  env: NodeJS.ProcessEnv;
  writeConfig(servers: Record<string, unknown>, extra?: Record<string, unknown>): void;
  remove(): void;
}

export function testHome(prefix = "mcpool-"): TestHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const socketPath = join(dir, "run", "mcpool.sock");
  const configPath = join(dir, "config", "mcp.json");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    XDG_RUNTIME_DIR: join(dir, "run-xdg"),
    XDG_CONFIG_HOME: join(dir, "config-xdg"),
    XDG_DATA_HOME: join(dir, "data"),
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    MCPOOL_SOCKET: socketPath,
    MCPOOL_CONFIG: configPath,
  };
  return {
    dir,
    socketPath,
    configPath,
    env,
    writeConfig(servers, extra = {}) {
      const text = JSON.stringify({ mcpServers: servers, ...extra }, null, 2);
      const temp = `${configPath}.tmp`;
      mkdirSync(dirname(configPath), { recursive: true });
      writeFileSync(temp, text);
      // Saved the way editors do: a new file renamed over the old one.
      renameSync(temp, configPath);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningDaemon {
  process: ChildProcess;
  pid: number;
  stderr(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

/**
 * The daemons startDaemon started, by socket path: when a client of one cannot reach it, the
 * error says what its daemon wrote and whether it is still running.
 */
const started = new Map<string, RunningDaemon>();

/** What the daemon started for `socketPath` wrote last, and whether it runs; "" for none. */
function daemonReport(socketPath: string): string {
  const daemon = started.get(socketPath);
  if (daemon === undefined) return "";
  const { exitCode, signalCode } = daemon.process;
  const state =
    exitCode === null && signalCode === null
      ? `still running`
      : `exited (${exitCode ?? signalCode})`;
  return `\nthe daemon started for it (pid ${daemon.pid}) is ${state}; the end of its stderr:\n${daemon.stderr().slice(-4000)}`;
}

/**
 * `bin`: an installed `mcpool` command to run instead of this checkout's `dist/cli/main.js`.
 * `wrap`: a command the daemon runs under (`["prlimit", "--nofile=128"]`).
 */
export async function startDaemon(
  home: TestHome,
  extraArgs: string[] = [],
  { bin, wrap = [] }: { bin?: string; wrap?: string[] } = {},
): Promise<RunningDaemon> {
  const argv = [...wrap, ...(bin === undefined ? [process.execPath, cliPath] : [bin])];
  const child = spawn(argv[0] as string, [...argv.slice(1), "serve", ...extraArgs], {
    env: home.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const pid = child.pid!;
  try {
    await waitFor(
      () => stderr.includes("serving ") || child.exitCode !== null,
      20_000,
      "the daemon to serve",
    );
  } catch (error) {
    // Not serving within the bound: nobody holds it, so it must not outlive the test.
    child.kill("SIGKILL");
    await exited;
    throw error;
  }
  if (child.exitCode !== null)
    throw new Error(`the daemon exited with ${child.exitCode}: ${stderr}`);
  const daemon: RunningDaemon = {
    process: child,
    pid,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
    async kill9() {
      child.kill("SIGKILL");
      await exited;
      await waitFor(() => !alive(pid), 10_000, "the daemon to die");
    },
  };
  started.set(home.socketPath, daemon);
  return daemon;
}

export async function client(home: TestHome, name = "test"): Promise<PoolClient> {
  try {
    return await connect({ socketPath: home.socketPath, clientName: name });
  } catch (error) {
    const report = daemonReport(home.socketPath);
    if (report !== "" && error instanceof Error) error.message += report;
    throw error;
  }
}

/** Resolves once every server of the daemon in `home` says `ready` (within `timeoutMs`). */
export async function serversReady(home: TestHome, timeoutMs = 30_000): Promise<void> {
  const pool = await client(home);
  try {
    const ready = async (): Promise<boolean> =>
      (await pool.state()).every((s) => s.status === "ready");
    await waitFor(ready, timeoutMs, "every server to be ready");
  } finally {
    await pool.close();
  }
}

/** Runs the built CLI in `home` to its end (bounded); its exit code and output. */
export function runCli(
  home: TestHome,
  ...args: string[]
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    env: home.env,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * An "installed" mcpool command in `home` (for startDaemon's `bin`): it runs this checkout
 * until a test writes an "upgrade" over it, which a hand-over restart then starts. With
 * `onHandOver`, the new daemon a hand-over restart starts first runs that code (before it
 * loads the checkout), which the daemon the test starts never runs.
 */
export function installedCli(home: TestHome, onHandOver?: string): string {
  const installed = join(home.dir, "installed-main.mjs");
  const cli = JSON.stringify(cliPath);
  writeFileSync(
    installed,
    onHandOver === undefined
      ? `#!/usr/bin/env node\nimport ${cli};\n`
      : `#!/usr/bin/env node\nif (process.argv.includes("--handover")) {\n${onHandOver}\n}\nawait import(${cli});\n`,
  );
  chmodSync(installed, 0o755);
  return installed;
}

/**
 * runCli() without blocking: the tests of one file that each wait out a server's timeout
 * can then wait side by side. Killed at the same bound as runCli().
 */
export function runCliAsync(
  home: TestHome,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliIn(home, undefined, ...args);
}

/** runCliAsync() in the directory `cwd` (a project's, for a command that reads where it runs). */
export function runCliIn(
  home: TestHome,
  cwd: string | undefined,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, ...args], {
    env: home.env,
    ...(cwd === undefined ? {} : { cwd }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const bound = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    });
  });
}
