/**
 * Limits on a busy daemon (a service left running for weeks): a
 * connection with thousands of calls in flight leaks no listener on the way to a server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  client as poolClient,
  serversReady,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

/** Calls in flight at once on one connection: what a busy agent was seen to send. */
const CONCURRENT_CALLS = 2_000;
/** Each call's text: together far more than a pipe holds, so the child's stdin pushes back. */
const TEXT = "x".repeat(8 * 1024);

describe("a daemon under many calls on one connection", () => {
  let home: TestHome;
  let daemon: RunningDaemon;

  beforeAll(async () => {
    home = testHome("mcpool-limits-");
    home.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    daemon = await startDaemon(home);
    await serversReady(home);
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.remove();
  });

  it("answers 2,000 concurrent calls on one connection without a listener leak warning", async () => {
    const pool = await poolClient(home);
    try {
      const answers = await Promise.all(
        Array.from({ length: CONCURRENT_CALLS }, () => pool.call("echo__echo", { text: TEXT })),
      );
      expect(answers.every((answer) => answer === TEXT)).toBe(true);
    } finally {
      await pool.close();
    }
    expect(daemon.stderr()).not.toContain("MaxListenersExceededWarning");
  });
});
