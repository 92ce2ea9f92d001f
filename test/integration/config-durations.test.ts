/**
 * A timeout of 3,000,000,000 ms in `mcp.json` (a service left running for days)
 * is a problem in status, never a timer that fires at once and fails every call.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import {
  client,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { fixture } from "../helpers/processes.js";

const OVERFLOW = 3_000_000_000;
const echo = { command: process.execPath, args: [fixture("echo.mjs")] };

let home: TestHome | undefined;
let daemon: RunningDaemon | undefined;
let agent: PoolClient | undefined;

afterEach(async () => {
  await agent?.close().catch(() => undefined);
  await daemon?.stop();
  home?.remove();
});

describe("a duration above what a timer can wait, in mcp.json", () => {
  it("is a problem in status for the pool section and for its row; other rows' calls run their course", async () => {
    home = testHome("mcpool-durations-");
    home.writeConfig(
      { echo, slow: { ...echo, callTimeoutMs: OVERFLOW } },
      { mcpool: { callTimeoutMs: OVERFLOW } },
    );
    daemon = await startDaemon(home);
    agent = await client(home);

    const status = await agent.status();
    expect(status.config.ok).toBe(true);
    expect(status.config.problems).toEqual([
      expect.stringMatching(
        /^line \d+: `mcpool\.callTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647 .*got 3000000000$/,
      ),
      expect.stringMatching(
        /^line \d+: `slow`: `callTimeoutMs` must be a whole number of milliseconds from 1 to 2147483647 .*got 3000000000$/,
      ),
    ]);
    expect(status.servers.map((s) => s.id)).toEqual(["echo"]);

    // With the overflowing timeout passed on, this call would time out after 1 ms.
    expect(await agent.call("echo__sleep", { ms: 50 })).toBe("slept 50");
    expect(await agent.call("echo__echo", { text: "on time" })).toBe("on time");
  });
});
