/**
 * The test fleet itself: once a test's fleet is taken down (its test finished, or ran past its
 * bound), nothing started for that test may live on — a daemon still starting is stopped as it
 * arrives, later calls are refused with a clear error, and a daemon the test did not start
 * itself (one `mcpool restart` handed over to) is stopped with the fleet's.
 */
import { describe, expect, it, type TestContext } from "vitest";
import { runCliAsync } from "../helpers/daemon.js";
import { testFleet, useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, waitFor } from "../helpers/processes.js";

/** A fleet whose finish hooks the test runs itself, as vitest would when the test ends. */
function fleetToTearDown() {
  const hooks: Parameters<TestContext["onTestFinished"]>[0][] = [];
  const fleet = testFleet({ onTestFinished: (hook) => void hooks.push(hook) });
  return {
    fleet,
    teardown: async () => {
      for (const hook of hooks.reverse()) await hook(undefined as never);
    },
  };
}

describe.concurrent("the test fleet", { timeout: 90_000 }, () => {
  it("stops a daemon that was still starting when the fleet was taken down, and refuses more", async () => {
    const { fleet, teardown } = fleetToTearDown();
    const h = fleet.home("mcpool-fleet-");
    h.writeConfig({});
    const late = fleet.daemon(h).then(
      () => "started",
      (error: unknown) => (error as Error).message,
    );
    // Taken down in the same turn: the daemon's process exists (spawn returns once it has
    // run) but cannot be serving yet.
    const down = teardown();
    const pids = daemonsFor(h.socketPath);
    expect(pids).toHaveLength(1);
    await down;
    expect(await late).toMatch(/already taken down .*no more daemons/);
    expect(pids.filter(alive)).toEqual([]);
    await expect(fleet.daemon(h)).rejects.toThrow(/already taken down .*no more processes/);
    await expect(fleet.agent(h)).rejects.toThrow(/already taken down/);
    expect(() => fleet.home()).toThrow(/already taken down .*no more homes/);
    expect(daemonsFor(h.socketPath)).toEqual([]);
  });

  it("stops the daemon `mcpool restart` handed over to", async () => {
    const { fleet, teardown } = fleetToTearDown();
    const h = fleet.home("mcpool-fleet-");
    h.writeConfig({});
    const first = await fleet.daemon(h);
    const restarted = await runCliAsync(h, "restart");
    expect(restarted.code, restarted.stderr).toBe(0);
    await waitFor(() => !alive(first.pid), 20_000, "the first daemon to hand over and exit");
    const successors = daemonsFor(h.socketPath);
    expect(successors).toHaveLength(1);
    await teardown();
    expect(successors.filter(alive)).toEqual([]);
  });
});

describe("a file's fleet, taken down after each test", () => {
  const fleet = useFleet();
  let first: string | undefined;

  it("serves a test", async () => {
    const h = fleet.home("mcpool-fleet-");
    h.writeConfig({});
    first = h.socketPath;
    await fleet.daemon(h);
  });

  it("serves the next test again, the first test's daemon gone", async () => {
    expect(daemonsFor(first!)).toEqual([]);
    const h = fleet.home("mcpool-fleet-");
    h.writeConfig({});
    expect((await fleet.daemon(h)).pid).toBeGreaterThan(0);
  });
});
