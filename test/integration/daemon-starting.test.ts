/**
 * A server that never answers its first request cannot hold its callers: the connect
 * timeout (`connectTimeoutMs`, 15 s unless set) ends the wait with an error saying the
 * server did not answer `initialize` within it — not that it "failed recently", which only a
 * server that did fail before is told. Meanwhile `status` shows the starting server's pid
 * and since when it has been starting, and `mcpool shutdown` ends it within the drain.
 *
 * Each test waits out a timeout of its own daemon's, so they run side by side.
 */
import { describe, expect, it, type TestContext } from "vitest";
import type { DaemonStatus, ServerState } from "mcpool-protocol";
import {
  runCliAsync,
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

const statusOf = async (home: TestHome): Promise<DaemonStatus> => {
  const result = await runCliAsync(home, "status", "--json");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as DaemonStatus;
};

/** The silent row's state once its starting child has a pid. */
async function startingState(home: TestHome): Promise<ServerState & { pid: number }> {
  let state: ServerState | undefined;
  await waitFor(
    async () => {
      state = (await statusOf(home)).servers.find((s) => s.id === "silent");
      return state?.pid !== undefined;
    },
    20_000,
    "the starting server's pid",
  );
  return state as ServerState & { pid: number };
}

/**
 * A daemon in a new home serving `silent`, stopped and removed when the test ends (the test's
 * own hook: the tests run side by side).
 */
async function daemonWith(
  { onTestFinished }: TestContext,
  prefix: string,
  row: Record<string, unknown>,
): Promise<{
  home: TestHome;
  daemon: RunningDaemon;
}> {
  const home = testHome(prefix);
  home.writeConfig({ silent: row });
  const starting = startDaemon(home);
  onTestFinished(async () => {
    await (await starting.catch(() => undefined))?.stop();
    home.remove();
  });
  return { home, daemon: await starting };
}

describe.concurrent("a server that never answers initialize", () => {
  it(
    "fails its first caller at the connect timeout, saying it did not answer initialize, and shows its pid meanwhile",
    { timeout: 120_000 },
    async (ctx) => {
      const { home } = await daemonWith(
        ctx,
        "mcpool-silent-",
        silent({ connectTimeoutMs: 25_000 }),
      );

      // Starting: its pid (once its serving child is spawned) and since when, in JSON and text.
      const starting = await startingState(home);
      expect(starting.status).toBe("connecting");
      expect(starting.pid).toBeGreaterThan(0);
      expect(alive(starting.pid)).toBe(true);
      expect(starting.startingSince).toBeLessThanOrEqual(Date.now());
      const text = await runCliAsync(home, "status");
      expect(text.stdout).toMatch(new RegExp(`silent .*starting for \\d+ s, pid ${starting.pid}`));

      // Called while it starts: the caller waits with it, and is told why when the wait ends.
      const call = await runCliAsync(home, "call", "silent__echo", '{"text":"x"}');
      expect(call.code).not.toBe(0);
      expect(call.stderr).toContain(
        'server "silent" did not answer `initialize` within 25000 ms (connectTimeoutMs)',
      );
      expect(call.stderr).not.toContain("failed recently");
    },
  );

  it("waits 15 s at most by default", { timeout: 120_000 }, async (ctx) => {
    const { DEFAULT_CONNECT_TIMEOUT_MS } = await import("../../src/pool/pool-options.js");
    expect(DEFAULT_CONNECT_TIMEOUT_MS).toBeLessThanOrEqual(15_000);
    const { home } = await daemonWith(ctx, "mcpool-silent-default-", silent());
    const call = await runCliAsync(home, "call", "silent__echo", '{"text":"x"}');
    expect(call.stderr).toContain(
      `did not answer \`initialize\` within ${DEFAULT_CONNECT_TIMEOUT_MS} ms (connectTimeoutMs)`,
    );
    // Now it has failed: the next caller is told so.
    const again = await runCliAsync(home, "call", "silent__echo", '{"text":"x"}');
    expect(again.stderr).toContain("failed recently");
  });

  it(
    "is ended by `mcpool shutdown` within the drain while it starts",
    { timeout: 120_000 },
    async (ctx) => {
      const { home, daemon: running } = await daemonWith(
        ctx,
        "mcpool-silent-shutdown-",
        silent({ connectTimeoutMs: 600_000 }),
      );
      const { pid } = await startingState(home);

      const shutdown = await runCliAsync(home, "shutdown");
      expect(shutdown.code, shutdown.stderr).toBe(0);
      // The drain (10 s) and the stop ladder (2 s + 2 s) bound it.
      await waitFor(() => !alive(running.pid), 20_000, "the daemon to exit");
      await waitFor(() => !alive(pid), 5_000, "the starting server to be ended");
    },
  );
});
