/**
 * An old daemon that gives up on its hand-over (its wait for the new daemon's answer ran out)
 * calls it off, and the new daemon hears that at once, in the middle of its adoption: it lets
 * go of every child it was handed without a signal, writes nothing more to any, and exits as
 * a new daemon that did not take over exits — it is not left adopting until the old daemon
 * kills it, while both drive the same children. Here the old daemon's bound is 1 ms
 * (`MCPOOL_HANDOVER_ANSWER_MS`) and its word is held back from the new daemon until the new
 * daemon is provably mid-adoption: the gate fixture's child holds the new daemon's listing of
 * its tools. The old daemon then serves on with the same children, their state intact.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { restart, wordGatedDaemon } from "../helpers/handover-gate.js";
import { useFleet } from "../helpers/fleet.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const fleet = useFleet();
const BOUND_MS = 20_000;

/** Row `id`'s answer to tool `tool` (`counter.mjs` count: "<count> <pid>"; `gate.mjs` pid). */
async function ask(agent: PoolClient, id: string, tool: string): Promise<string> {
  return agent.call(`${id}__${tool}`, {});
}

describe("a hand-over the old daemon calls off while the new one adopts", () => {
  it("is let go of at once by the new daemon: no child signalled, none driven, the old one serves on", async () => {
    const h = fleet.home("mcpool-handover-called-off-");
    const relist = join(h.dir, "relist");
    h.writeConfig({
      counter: { command: process.execPath, args: [fixture("counter.mjs")] },
      slow: {
        command: process.execPath,
        args: [fixture("gate.mjs")],
        env: { GATE_RELIST: relist },
      },
    });
    const { old, wordGate } = await wordGatedDaemon(h, { MCPOOL_HANDOVER_ANSWER_MS: "1" });
    try {
      const before = await fleet.agent(h, "before");
      const [one, counterPid] = (await ask(before, "counter", "count")).split(" ");
      expect(one).toBe("1");
      const slowPid = await ask(before, "slow", "pid");

      const restarting = restart(h);
      // The new daemon is adopting: it asked the slow child for its tools, and waits.
      await waitFor(() => existsSync(`${relist}.waiting`), BOUND_MS, "the new daemon to adopt");
      // The old daemon gave up on it meanwhile; its word waits at the gate.
      await waitFor(
        () => old.stderr().includes("the hand-over is called off"),
        BOUND_MS,
        "the old daemon to call the hand-over off",
      );
      writeFileSync(wordGate, "");

      const done = await restarting;
      expect(done.code).toBe(1);
      expect(done.stderr).toContain("did not answer within 1 ms");
      const log = old.stderr();
      // The new daemon (its log is the old one's stderr) heard the word mid-adoption and exited
      // by itself, as one that did not take over; the old daemon never had to kill it.
      expect(log).toContain("the old daemon called the hand-over off and serves on");
      expect(log).toContain("mcpool: did not take over:");
      expect(log).toMatch(/the hand-over is called off \(.*\); pid [1-9]\d* is told to let go/);
      expect(log).not.toContain("did not exit when told to");
      expect(log).toContain("the hand-over failed, this daemon serves on");

      // The old daemon serves on with the same children, their state intact.
      const after = await fleet.agent(h, "after");
      expect((await after.status()).pid).toBe(old.pid);
      expect(await ask(after, "counter", "count")).toBe(`2 ${counterPid}`);
      expect(await ask(after, "slow", "pid")).toBe(slowPid);
      // The listing the new daemon left in the slow child's pipe is answered now; its answer
      // matches no request of the old daemon's and is dropped: the child serves on.
      writeFileSync(relist, "");
      expect(await ask(after, "slow", "pid")).toBe(slowPid);
      expect(await ask(after, "counter", "count")).toBe(`3 ${counterPid}`);
    } finally {
      writeFileSync(relist, "");
      writeFileSync(wordGate, "");
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  }, 90_000);
});
