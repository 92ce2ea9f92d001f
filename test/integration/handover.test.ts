/**
 * `mcpool restart` with no server id hands the daemon's socket and running children to a new
 * daemon started from the installed code: the children keep their processes and their memory,
 * agents go on, and the old daemon serves on when the new one cannot take over.
 */
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { runCli, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const fleet = useFleet();

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };

/** The counter's answer: its count and its pid. */
async function count(agent: PoolClient, tool = "counter__count"): Promise<[number, number]> {
  const text = await agent.call(tool, {});
  const [value, pid] = text.split(" ").map(Number);
  return [value as number, pid as number];
}

/** Every daemon of `home` stopped after the test, whichever pid serves by then. */
async function stopDaemons(home: TestHome): Promise<void> {
  await stopAll(daemonsFor(home.socketPath));
}

describe("a restart that hands the servers over", () => {
  it("keeps a stateful child counting, same pid, and a shutdown after it leaves no process", async () => {
    const h = fleet.home();
    h.writeConfig({ counter });
    try {
      const old = await fleet.daemon(h);
      const agent = await fleet.agent(h);
      expect(await count(agent)).toEqual([1, expect.any(Number)]);
      const [two, childPid] = await count(agent);
      expect(two).toBe(2);

      const restart = runCli(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      const handed = JSON.parse(restart.stdout) as { pid: number; adopted: string[] };
      expect(handed.adopted).toEqual(["counter"]);
      expect(handed.pid).not.toBe(old.pid);
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");

      const after = await fleet.agent(h, "after");
      expect(await count(after)).toEqual([3, childPid]);
      const status = await after.status();
      expect(status.pid).toBe(handed.pid);
      expect(status.handover).toMatchObject({ from: { pid: old.pid }, adopted: ["counter"] });
      expect(status.servers.find((s) => s.id === "counter")?.pid).toBe(childPid);

      const shutdown = runCli(h, "shutdown");
      expect(shutdown.code).toBe(0);
      await waitFor(
        () => !alive(handed.pid) && !alive(childPid),
        20_000,
        "the new daemon and the adopted child to end",
      );
    } finally {
      await stopDaemons(h);
    }
  });
});
