/**
 * Warm swap on edit: an edit of a live row's connection fields
 * starts the new child beside the old one; the old one answers until the new one is ready,
 * then retires. The new child here is held at its start by a gate file, so "without waiting"
 * is a fact of order (the call is answered while the new child cannot answer), not a time.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** Generous: a loaded 2-core machine starts node children slowly. */
const BOUND_MS = 20_000;

const fleet = useFleet();

// Pinned to its era: an edited row's era is found again on a spare child first,
// which the start gate would hold too and be taken for the new child.
const gate = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [fixture("gate.mjs")],
  env,
  protocol: "legacy",
});

async function servingGate(): Promise<{ h: TestHome; c: PoolClient; oldPid: number }> {
  const h = fleet.home();
  h.writeConfig({ slow: gate() });
  await fleet.daemon(h);
  const c = await fleet.agent(h, "swap");
  const oldPid = Number(await c.call("slow__pid", {}));
  return { h, c, oldPid };
}

/** A wait that fails with the row's state in its message: what the swap was doing. */
async function withState(c: PoolClient, wait: () => Promise<void>): Promise<void> {
  try {
    await wait();
  } catch (error) {
    const row = (await c.state()).find((s) => s.id === "slow");
    throw new Error(`${(error as Error).message}; the row: ${JSON.stringify(row)}`);
  }
}

const pidOf = async (c: PoolClient): Promise<number> => Number(await c.call("slow__pid", {}));

describe("an edit of a live row's connection swaps it warm", () => {
  it("answers from the old child while the new one starts, then from the new one; the old one is reaped", async () => {
    const { h, c, oldPid } = await servingGate();
    const startGate = join(h.dir, "start-gate");
    h.writeConfig({ slow: gate({ GATE_START: startGate }) });
    // The new child is running and held before its handshake: the swap is under way.
    await waitFor(() => existsSync(`${startGate}.waiting`), BOUND_MS, "the new child to start");
    const newPid = Number(readFileSync(`${startGate}.waiting`, "utf8"));
    expect(newPid).toBeGreaterThan(0);
    expect(newPid).not.toBe(oldPid);
    // Answered while the new child cannot answer anything: no call waits for its start.
    expect(await pidOf(c)).toBe(oldPid);
    expect((await c.state()).find((s) => s.id === "slow")).toMatchObject({
      status: "ready",
      pid: oldPid,
    });

    writeFileSync(startGate, "open");
    await withState(c, () =>
      waitFor(async () => (await pidOf(c)) === newPid, BOUND_MS, "calls to reach the new child"),
    );
    await waitFor(() => !alive(oldPid), BOUND_MS, "the old child to be reaped");
    expect((await c.state()).find((s) => s.id === "slow")?.pid).toBe(newPid);
  });

  it("keeps the old child serving when the new one fails to start, and says why", async () => {
    const { h, c, oldPid } = await servingGate();
    h.writeConfig({ slow: gate({ GATE_REFUSE: "1" }) });
    await waitFor(
      async () => (await c.state()).find((s) => s.id === "slow")?.error !== undefined,
      BOUND_MS,
      "the failed start to be reported",
    );
    const state = (await c.state()).find((s) => s.id === "slow")!;
    expect(state.status).toBe("ready");
    expect(state.pid).toBe(oldPid);
    expect(state.error).toMatch(/previous one keeps serving/);
    expect(state.error).toMatch(/refusing to start: GATE_REFUSE is set/);
    expect(await pidOf(c)).toBe(oldPid);
    expect(alive(oldPid)).toBe(true);
    const log = readFileSync(join(h.dir, "state", "mcpool", "mcpool.log"), "utf8");
    expect(log).toMatch(/slow.*did not start, so the previous one keeps serving/);
  });
});
