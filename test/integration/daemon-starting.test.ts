/**
 * A server that never answers its first request cannot hold its callers: the connect
 * timeout (`connectTimeoutMs`, 15 s unless set) ends the wait with an error saying the
 * server did not answer `initialize` within it — not that it "failed recently", which only a
 * server that did fail before is told. Meanwhile `status` shows the starting server's pid
 * and since when it has been starting, and `mcpool shutdown` ends it within the drain.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { DaemonStatus, ServerState } from "mcpool-protocol";
import {
  runCli,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** A server that reads and discards everything, answering nothing, not even initialize. */
const silent = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  command: process.execPath,
  args: [fixture("hang.mjs")],
  env: { HANG_ON_INIT: "1" },
  ...extra,
});

const statusOf = (home: TestHome): DaemonStatus => {
  const result = runCli(home, "status", "--json");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as DaemonStatus;
};

/** The silent row's state once its starting child has a pid. */
async function startingState(home: TestHome): Promise<ServerState & { pid: number }> {
  let state: ServerState | undefined;
  await waitFor(
    () => {
      state = statusOf(home).servers.find((s) => s.id === "silent");
      return state?.pid !== undefined;
    },
    20_000,
    "the starting server's pid",
  );
  return state as ServerState & { pid: number };
}

describe("a server that never answers initialize", () => {
  let home: TestHome | undefined;
  let daemon: RunningDaemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
    home?.remove();
  });

  it(
    "fails its first caller at the connect timeout, saying it did not answer initialize, and shows its pid meanwhile",
    { timeout: 120_000 },
    async () => {
      home = testHome("mcpool-silent-");
      home.writeConfig({ silent: silent({ connectTimeoutMs: 25_000 }) });
      daemon = await startDaemon(home);

      // Starting: its pid (once its serving child is spawned) and since when, in JSON and text.
      const starting = await startingState(home);
      expect(starting.status).toBe("connecting");
      expect(starting.pid).toBeGreaterThan(0);
      expect(alive(starting.pid)).toBe(true);
      expect(starting.startingSince).toBeLessThanOrEqual(Date.now());
      const text = runCli(home, "status");
      expect(text.stdout).toMatch(new RegExp(`silent .*starting for \\d+ s, pid ${starting.pid}`));

      // Called while it starts: the caller waits with it, and is told why when the wait ends.
      const call = runCli(home, "call", "silent__echo", '{"text":"x"}');
      expect(call.code).not.toBe(0);
      expect(call.stderr).toContain(
        'server "silent" did not answer `initialize` within 25000 ms (connectTimeoutMs)',
      );
      expect(call.stderr).not.toContain("failed recently");
    },
  );

  it("waits 15 s at most by default", { timeout: 120_000 }, async () => {
    const { DEFAULT_CONNECT_TIMEOUT_MS } = await import("../../src/pool/pool-options.js");
    expect(DEFAULT_CONNECT_TIMEOUT_MS).toBeLessThanOrEqual(15_000);
    home = testHome("mcpool-silent-default-");
    home.writeConfig({ silent: silent() });
    daemon = await startDaemon(home);
    const call = runCli(home, "call", "silent__echo", '{"text":"x"}');
    expect(call.stderr).toContain(
      `did not answer \`initialize\` within ${DEFAULT_CONNECT_TIMEOUT_MS} ms (connectTimeoutMs)`,
    );
    // Now it has failed: the next caller is told so.
    const again = runCli(home, "call", "silent__echo", '{"text":"x"}');
    expect(again.stderr).toContain("failed recently");
  });

  it(
    "is ended by `mcpool shutdown` within the drain while it starts",
    { timeout: 120_000 },
    async () => {
      home = testHome("mcpool-silent-shutdown-");
      home.writeConfig({ silent: silent({ connectTimeoutMs: 600_000 }) });
      daemon = await startDaemon(home);
      const { pid } = await startingState(home);

      const shutdown = runCli(home, "shutdown");
      expect(shutdown.code, shutdown.stderr).toBe(0);
      const running = daemon;
      // The drain (10 s) and the stop ladder (2 s + 2 s) bound it.
      await waitFor(() => !alive(running.pid), 20_000, "the daemon to exit");
      await waitFor(() => !alive(pid), 5_000, "the starting server to be ended");
    },
  );
});
