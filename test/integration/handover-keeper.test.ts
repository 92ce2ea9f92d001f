/**
 * `mcpool serve --keeper`, what the launchd agent runs: it starts the daemon, follows
 * whichever daemon serves the socket across a hand-over restart, and exits only when none
 * serves — non-zero when the daemon died, 0 when it was shut down. Real processes on Linux:
 * the logic launchd relies on, without launchd.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cliPath, runCliAsync, type TestHome } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

interface Keeper {
  process: ChildProcess;
  /** The daemon pids it said it follows, in order. */
  followed(): number[];
  exit: Promise<number | null>;
}

function startKeeper(home: TestHome): Keeper {
  const child = spawn(process.execPath, [cliPath, "serve", "--keeper"], {
    env: home.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const followed = (): number[] =>
    [...stderr.matchAll(/mcpool keeper: follows daemon pid (\d+)/g)].map((m) => Number(m[1]));
  return { process: child, followed, exit };
}

async function stopEverything(home: TestHome, keeper: Keeper): Promise<void> {
  await stopAll(daemonsFor(home.socketPath));
  if (keeper.process.exitCode === null && keeper.process.signalCode === null) {
    keeper.process.kill("SIGKILL");
    await keeper.exit;
  }
}

/** Runs `test` with a keeper on `home` once it follows its first daemon; stops everything after. */
async function withKeeper(
  home: TestHome,
  test: (keeper: Keeper, first: number) => Promise<void>,
): Promise<void> {
  const keeper = startKeeper(home);
  try {
    await waitFor(() => keeper.followed().length === 1, 30_000, "the keeper to follow its daemon");
    await test(keeper, keeper.followed()[0] as number);
  } finally {
    await stopEverything(home, keeper);
  }
}

/** Hands the daemon of `home` over; resolves once `keeper` follows the new daemon. */
async function handOver(home: TestHome, keeper: Keeper): Promise<number> {
  const restart = await runCliAsync(home, "restart", "--json");
  expect(restart.code).toBe(0);
  const { pid } = JSON.parse(restart.stdout) as { pid: number };
  await waitFor(
    () => keeper.followed().includes(pid),
    20_000,
    "the keeper to follow the new daemon",
  );
  return pid;
}

// Each test its own home, keeper and daemons: they run side by side, each with a longer bound.
describe.concurrent("the keeper the launchd agent runs", { timeout: 90_000 }, () => {
  it("follows the new daemon across a hand-over and exits non-zero when that daemon dies", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ counter: { command: process.execPath, args: [fixture("counter.mjs")] } });
    await withKeeper(h, async (keeper, first) => {
      expect(daemonsFor(h.socketPath)).toEqual([keeper.process.pid, first]);
      const handed = await handOver(h, keeper);
      await waitFor(() => !alive(first), 20_000, "the old daemon to exit");
      expect(keeper.followed()).toEqual([first, handed]);
      expect(keeper.process.exitCode).toBeNull();
      const agent = await fleet.agent(h);
      expect((await agent.status()).pid).toBe(handed);

      process.kill(handed, "SIGKILL");
      expect(await keeper.exit).toBe(1);
    });
  });

  it("exits 0 after `mcpool shutdown` of the daemon it follows since a hand-over", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({});
    await withKeeper(h, async (keeper) => {
      const handed = await handOver(h, keeper);
      expect((await runCliAsync(h, "shutdown")).code).toBe(0);
      expect(await keeper.exit).toBe(0);
      await waitFor(() => !alive(handed), 20_000, "the new daemon to exit");
    });
  });

  it("passes SIGTERM on to the daemon it follows, and exits with that daemon's status", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({});
    await withKeeper(h, async (keeper, first) => {
      keeper.process.kill("SIGTERM");
      expect(await keeper.exit).toBe(0);
      await waitFor(() => !alive(first), 20_000, "the daemon to exit");
    });
  });
});
