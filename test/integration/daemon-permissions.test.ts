/**
 * CI runs as root, which bypasses file permissions, so these tests run the daemon as an
 * unprivileged user they create and connect as a second one.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "mcpool-client";
import { cliPath } from "../helpers/daemon.js";
import { waitFor } from "../helpers/processes.js";

const OWNER = "mcpool-test-owner";
const OTHER = "mcpool-test-other";

function ensureUser(name: string): number {
  if (spawnSync("id", ["-u", name]).status !== 0) {
    execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
  }
  return Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
}

const clientUrl = new URL("../../client/dist/index.js", import.meta.url).href;

/** Connects as `user` from a fresh process; prints the outcome as JSON. */
function connectAs(
  user: string,
  socketPath: string,
): { ok: boolean; code?: string; message?: string } {
  const script = `
    const { connect } = await import(${JSON.stringify(clientUrl)});
    try {
      const c = await connect({ socketPath: ${JSON.stringify(socketPath)}, clientName: "intruder" });
      await c.close();
      console.log(JSON.stringify({ ok: true }));
    } catch (e) {
      console.log(JSON.stringify({ ok: false, code: e.code, message: e.message }));
    }`;
  const out = execFileSync(
    "setpriv",
    [
      "--reuid",
      user,
      "--regid",
      user,
      "--clear-groups",
      process.execPath,
      "--input-type=module",
      "-e",
      script,
    ],
    {
      encoding: "utf8",
    },
  );
  return JSON.parse(out.trim()) as { ok: boolean; code?: string; message?: string };
}

describe("the socket belongs to its user", () => {
  let dir: string;
  let socketPath: string;
  let daemon: ChildProcess;

  beforeAll(async () => {
    expect(process.getuid?.(), "these tests create users and must run as root, as CI does").toBe(0);
    const uid = ensureUser(OWNER);
    ensureUser(OTHER);
    dir = mkdtempSync(join(tmpdir(), "mcpool-perm-"));
    chmodSync(dir, 0o755);
    chownSync(dir, uid, uid);
    socketPath = join(dir, "run", "mcpool.sock");
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_DATA_HOME: join(dir, "data"),
      XDG_STATE_HOME: join(dir, "state"),
      MCPOOL_SOCKET: socketPath,
      MCPOOL_CONFIG: join(dir, "mcp.json"),
      MCPOOL_TEST_RUN: process.env.MCPOOL_TEST_RUN,
    };
    daemon = spawn(
      "setpriv",
      ["--reuid", OWNER, "--regid", OWNER, "--clear-groups", process.execPath, cliPath, "serve"],
      {
        env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    daemon.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(
      () => stderr.includes("serving ") || daemon.exitCode !== null,
      20_000,
      "the daemon to serve",
    );
    expect(daemon.exitCode, stderr).toBeNull();
  });

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill("SIGTERM");
      await new Promise((resolve) => daemon.once("exit", resolve));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is owned by the daemon's user with mode 0600 in a 0700 directory", () => {
    const uid = Number(execFileSync("id", ["-u", OWNER], { encoding: "utf8" }).trim());
    expect(lstatSync(socketPath).uid).toBe(uid);
    expect(lstatSync(socketPath).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(dir, "run")).mode & 0o777).toBe(0o700);
  });

  it("lets its own user in", () => {
    expect(connectAs(OWNER, socketPath)).toEqual({ ok: true });
  });

  it("refuses another user", () => {
    const outcome = connectAs(OTHER, socketPath);
    expect(outcome.ok).toBe(false);
    expect(outcome.code).toBe("daemon-unavailable");
  });

  it("is refused by a client of another uid before a byte is sent, even root", async () => {
    const error = await connect({ socketPath, clientName: "root" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "daemon-unavailable" });
    expect((error as Error).message).toMatch(/another user|owned by|uid/i);
  });
});
