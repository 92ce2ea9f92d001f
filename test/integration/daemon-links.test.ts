/**
 * Links planted where the daemon writes: its state (log) and data folders, when they are
 * symbolic links, are refused with a message naming the link, as the runtime folder is, and
 * a folder of the user's that the daemon did not create keeps its mode. A link planted at
 * the log file's path is never read through by `mcpool logs`, and `mcpool status` says the
 * log is not being written, and why.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DaemonStatus } from "mcpool-protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  cliPath,
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

const echo = { echo: { command: process.execPath, args: [fixture("echo.mjs")] } };

const modeOf = (path: string): string => (statSync(path).mode & 0o7777).toString(8);

/**
 * `mcpool serve` until it exits or says it serves (then it is stopped): its exit code
 * (null when it served) and stderr.
 */
async function serveOnce(home: TestHome): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, "serve"], {
    env: home.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  return new Promise((resolve) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("serving ")) child.kill("SIGTERM");
    });
    child.once("exit", (code, signal) => resolve({ code: signal === null ? code : null, stderr }));
  });
}

/** Another directory of the user's, 0755, holding one file: where a planted link points. */
function elsewhere(home: TestHome): string {
  const dir = join(home.dir, "elsewhere");
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, "keep.txt"), "the user's own file\n");
  return dir;
}

describe("links planted where the daemon writes", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
    home?.remove();
  });

  /** Plants `<$variable>/mcpool` as a link to another folder; `serve` must refuse it. */
  async function refusesLink(variable: "XDG_STATE_HOME" | "XDG_DATA_HOME"): Promise<void> {
    home = testHome("mcpool-folder-link-");
    home.writeConfig(echo);
    const target = elsewhere(home);
    const link = join(home.env[variable] as string, "mcpool");
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(target, link);

    const { code, stderr } = await serveOnce(home);
    expect(code, stderr).not.toBe(0);
    expect(code).not.toBeNull();
    expect(stderr).toContain(`symbolic link; refusing to follow it: ${link}`);
    expect(modeOf(target)).toBe("755");
    expect(readdirSync(target)).toEqual(["keep.txt"]);
  }

  it("refuses a state folder that is a symbolic link, naming it, and leaves where it points alone", () =>
    refusesLink("XDG_STATE_HOME"));

  it("refuses a data folder that is a symbolic link, naming it, and leaves where it points alone", () =>
    refusesLink("XDG_DATA_HOME"));

  it("uses state and data folders of the user's without changing their mode", async () => {
    home = testHome("mcpool-folder-mode-");
    home.writeConfig(echo);
    const folders = [
      join(home.env.XDG_STATE_HOME!, "mcpool"),
      join(home.env.XDG_DATA_HOME!, "mcpool"),
    ];
    for (const dir of folders) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o755);
    }
    daemon = await startDaemon(home);
    for (const dir of folders) expect(modeOf(dir)).toBe("755");
    // What it writes there is its own: 0600.
    expect(modeOf(join(folders[0]!, "mcpool.log"))).toBe("600");
  });

  it("never shows through a link at the log's path, and status says the log is not written", async () => {
    home = testHome("mcpool-log-link-");
    home.writeConfig(echo);
    const stateDir = join(home.env.XDG_STATE_HOME!, "mcpool");
    mkdirSync(stateDir, { recursive: true });
    const other = join(home.dir, "other.txt");
    writeFileSync(other, "NOT THE LOG: another file's text\n");
    const logPath = join(stateDir, "mcpool.log");
    symlinkSync(other, logPath);
    daemon = await startDaemon(home);

    const logs = runCli(home, "logs");
    expect(logs.stdout).not.toContain("NOT THE LOG");
    expect(logs.code).not.toBe(0);
    expect(logs.stderr).toContain(`${logPath} is a symbolic link`);

    const text = runCli(home, "status");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`log     not written: ${logPath} is a symbolic link`);
    const json = JSON.parse(runCli(home, "status", "--json").stdout) as DaemonStatus;
    expect(json.log).toMatchObject({ path: logPath, problem: expect.stringContaining(logPath) });
  });
});
