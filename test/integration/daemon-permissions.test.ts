/**
 * CI runs as root, which bypasses file permissions, so these tests run the daemon as an
 * unprivileged user they create and connect as a second one.
 */
import { execFileSync } from "node:child_process";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "mcpool-client";
import {
  clientUrl,
  ensureUser,
  runNodeAs,
  startDaemonAs,
  stopDaemonAs,
  type DaemonAsUser,
} from "../helpers/users.js";

const OWNER = "mcpool-test-owner";
const OTHER = "mcpool-test-other";

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
  const out = runNodeAs(user, script);
  return JSON.parse(out.trim()) as { ok: boolean; code?: string; message?: string };
}

describe("the socket belongs to its user", () => {
  let daemon: DaemonAsUser | undefined;
  let dir: string;
  let socketPath: string;

  beforeAll(async () => {
    expect(process.getuid?.(), "these tests create users and must run as root, as CI does").toBe(0);
    ensureUser(OTHER);
    daemon = await startDaemonAs(OWNER);
    ({ dir, socketPath } = daemon);
    expect(daemon.process.exitCode, daemon.stderr()).toBeNull();
  });

  afterAll(() => stopDaemonAs(daemon));

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

  it("refuses a raw connect from another user, with no client library to check first", () => {
    const script = `
      const { createConnection } = await import("node:net");
      const socket = createConnection(${JSON.stringify(socketPath)});
      socket.on("connect", () => { console.log("connected"); socket.destroy(); });
      socket.on("error", (e) => console.log(e.code));`;
    expect(runNodeAs(OTHER, script).trim()).toBe("EACCES");
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
