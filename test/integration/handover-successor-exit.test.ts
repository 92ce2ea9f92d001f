/**
 * A hand-over that fails leaves one daemon driving the children: the old daemon takes them
 * back only once the new one has exited, killing one that does not go when told to. Until then
 * both would read the same child's output, and an answer the new one took would never reach
 * the host that asked.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { installedCli, runCliAsync, startDaemon } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };

/**
 * An "installed" copy that reads the snapshot, reads each handed child's output as a new daemon
 * dialling it does, answers that it failed, and then never exits: a new daemon stuck in a dial
 * that reads the old daemon's word too late.
 */
const stubborn = (pidFile: string): string => `
import { writeFileSync } from "node:fs";
import { Socket } from "node:net";
writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
const channel = new Socket({ fd: 3, readable: true, writable: true });
let text = "";
let answered = false;
channel.on("data", (chunk) => {
  text += chunk.toString("utf8");
  const end = text.indexOf("\\n");
  if (end < 0 || answered) return;
  answered = true;
  const snapshot = JSON.parse(text.slice(0, end));
  for (const server of snapshot.servers) {
    new Socket({ fd: server.child.fds[1], readable: true, writable: false }).on("data", () => {});
  }
  channel.write(JSON.stringify({ ready: false, pid: process.pid, why: "it gave up" }) + "\\n");
});
channel.on("error", () => {});
setInterval(() => {}, 60_000);
`;

/**
 * An "installed" copy that reads the snapshot, writes a tools/list to each handed child with
 * the session's next request id (as a new daemon's listing does), reads no answer, says it
 * failed and exits.
 */
const listing = `
import { Socket } from "node:net";
import { writeSync } from "node:fs";
const channel = new Socket({ fd: 3, readable: true, writable: true });
let text = "";
channel.on("data", (chunk) => {
  text += chunk.toString("utf8");
  const end = text.indexOf("\\n");
  if (end < 0) return;
  const snapshot = JSON.parse(text.slice(0, end));
  for (const server of snapshot.servers) {
    const id = server.child.session.nextId;
    writeSync(server.child.fds[0], JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }) + "\\n");
  }
  channel.end(JSON.stringify({ ready: false, pid: process.pid, why: "it gave up" }) + "\\n", () =>
    process.exit(0),
  );
});
channel.on("error", () => {});
`;

/** The counter's count, through `agent`. */
async function count(agent: PoolClient): Promise<number> {
  return Number((await agent.call("counter__count", {})).split(" ")[0]);
}

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent("a failed hand-over", { timeout: 90_000 }, () => {
  it("leaves no answer to the new daemon's request for a host's call through the old one", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    const hold = join(h.dir, "hold-list");
    h.writeConfig({ counter: { ...counter, env: { COUNTER_HOLD_LIST: hold } } });
    const installed = installedCli(h);
    const old = await startDaemon(h, [], { bin: installed });
    try {
      const agent = await fleet.agent(h);
      expect(await count(agent)).toBe(1);
      writeFileSync(hold, "");
      writeFileSync(installed, listing);

      const restart = await runCliAsync(h, "restart");
      expect(restart.code).toBe(1);
      expect(restart.stderr).toContain("it gave up");
      // The child answers the listing now, just before this call's answer: the call gets its
      // own answer, the count, never the tools.
      const again = await fleet.agent(h, "again");
      expect(await again.call("counter__count", {})).toMatch(/^2 \d+$/);
      expect(await again.call("counter__count", {})).toMatch(/^3 \d+$/);
    } finally {
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });

  it("takes the children back only once the new daemon is gone, killing one that stays", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ counter });
    const pidFile = join(h.dir, "successor.pid");
    // It runs this checkout until an "upgrade" replaces it with the stubborn copy.
    const installed = installedCli(h);
    const old = await startDaemon(h, [], { bin: installed });
    let successor: number | undefined;
    try {
      const agent = await fleet.agent(h);
      expect(await count(agent)).toBe(1);
      writeFileSync(installed, stubborn(pidFile));

      const restart = await runCliAsync(h, "restart");
      expect(restart.code).toBe(1);
      expect(restart.stderr).toContain("it gave up");
      successor = Number(readFileSync(pidFile, "utf8"));
      // Gone before the old daemon answered: nothing but the old daemon reads the child now.
      expect(alive(successor)).toBe(false);
      const killed = `the new daemon (pid ${successor}) did not exit when told to`;
      await waitFor(() => old.stderr().includes(killed), 20_000, "the old daemon's log line");

      // Every answer reaches the old daemon: none is read away by the new one.
      const after = await fleet.agent(h, "after");
      for (let expected = 2; expected <= 21; expected++) expect(await count(after)).toBe(expected);
      expect((await after.status()).pid).toBe(old.pid);
    } finally {
      if (successor !== undefined && alive(successor)) process.kill(successor, "SIGKILL");
      await old.stop();
      await stopAll(daemonsFor(h.socketPath));
    }
  });
});
