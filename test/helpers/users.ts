/**
 * Unprivileged users for tests that need permissions to bite: CI runs as root, which
 * bypasses them. A user is created once (useradd) and processes run as it with setpriv.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliPath } from "./daemon.js";
import { waitFor } from "./processes.js";

/** The uid of system user `name`, creating the user when there is none. */
export function ensureUser(name: string): number {
  if (spawnSync("id", ["-u", name]).status !== 0) {
    execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
  }
  return Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
}

/** setpriv's arguments that run `command…` as `user`, with that user's group only. */
export function asUser(user: string, command: string[]): string[] {
  return ["--reuid", user, "--regid", user, "--clear-groups", ...command];
}

/** The built mcpool-client, for scripts that connect from a process of another user. */
export const clientUrl = new URL("../../client/dist/index.js", import.meta.url).href;

/** Runs an ES module `script` with node as `user`; its stdout. */
export function runNodeAs(user: string, script: string, env?: NodeJS.ProcessEnv): string {
  return execFileSync(
    "setpriv",
    asUser(user, [process.execPath, "--input-type=module", "-e", script]),
    { encoding: "utf8", ...(env ? { env } : {}) },
  );
}

export interface DaemonAsUser {
  process: ChildProcess;
  /** A fresh directory owned by the user: HOME and every XDG directory of the daemon. */
  dir: string;
  socketPath: string;
  /** `<dir>/mcp.json`; written before the start by `prepare`, when given. */
  configPath: string;
  stderr(): string;
}

/**
 * `mcpool serve` as `user` in a fresh home it owns, resolved once it serves. `prepare`
 * runs (as root) before the daemon starts, e.g. to write a config and chown it.
 */
export async function startDaemonAs(
  user: string,
  prepare?: (paths: { dir: string; configPath: string; uid: number }) => void,
): Promise<DaemonAsUser> {
  const uid = ensureUser(user);
  const dir = mkdtempSync(join(tmpdir(), "mcpool-user-"));
  chmodSync(dir, 0o755);
  chownSync(dir, uid, uid);
  const socketPath = join(dir, "run", "mcpool.sock");
  const configPath = join(dir, "mcp.json");
  prepare?.({ dir, configPath, uid });
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "data"),
    XDG_STATE_HOME: join(dir, "state"),
    MCPOOL_SOCKET: socketPath,
    MCPOOL_CONFIG: configPath,
    MCPOOL_TEST_RUN: process.env.MCPOOL_TEST_RUN,
  };
  const child = spawn("setpriv", asUser(user, [process.execPath, cliPath, "serve"]), {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await waitFor(
    () => stderr.includes("serving ") || child.exitCode !== null,
    20_000,
    "the daemon to serve",
  );
  return { process: child, dir, socketPath, configPath, stderr: () => stderr };
}

/** SIGTERM and wait for the exit; removes its home. */
export async function stopDaemonAs(daemon: DaemonAsUser | undefined): Promise<void> {
  if (!daemon) return;
  if (daemon.process.exitCode === null && daemon.process.signalCode === null) {
    const exited = new Promise((resolve) => daemon.process.once("exit", resolve));
    daemon.process.kill("SIGTERM");
    await exited;
  }
  rmSync(daemon.dir, { recursive: true, force: true });
}
