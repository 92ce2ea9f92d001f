/**
 * `mcpool restart` with no server id hands the daemon's socket and running children to a new
 * daemon started from the installed code: the children keep their processes and their memory,
 * agents go on, and the old daemon serves on when the new one cannot take over.
 */
import { lstatSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { removeFolder } from "../helpers/files.js";
import { stdioBridge, type BridgePath } from "../helpers/bridge.js";
import { installedCli, runCliAsync, startDaemon, type TestHome } from "../helpers/daemon.js";
import { testFleet, type Fleet } from "../helpers/fleet.js";
import {
  alive,
  daemonsFor,
  fixture,
  referenceServer,
  stopAll,
  waitFor,
} from "../helpers/processes.js";

const memoryServer = referenceServer("server-memory");

const counter = { command: process.execPath, args: [fixture("counter.mjs")] };

/** The counter's answer: its count and its pid. */
async function count(agent: PoolClient, tool = "counter__count"): Promise<[number, number]> {
  const text = await agent.call(tool, {});
  const [value, pid] = text.split(" ").map(Number);
  return [value as number, pid as number];
}

function isSocket(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isSocket() === true;
}

/** The counter's answer to a host behind the lean bridge, through the MCP sockets. */
async function leanCount(fleet: Fleet, h: TestHome): Promise<string | undefined> {
  const host = fleet.keep(await stdioBridge(h, ["--server", "counter"], {}, "lean"));
  try {
    const next = await host.client.callTool({ name: "count", arguments: {} });
    return (next.content as { text: string }[])[0]?.text;
  } finally {
    await host.close();
  }
}

/** Every daemon of `home` stopped after the test, whichever pid serves by then. */
async function stopDaemons(home: TestHome): Promise<void> {
  await stopAll(daemonsFor(home.socketPath));
}

// Each test its own home, daemons and children: they run side by side, each sharing the cores
// with the others, so each gets a longer bound.
describe.concurrent("a restart that hands the servers over", { timeout: 90_000 }, () => {
  it("keeps a stateful child counting, same pid, and a shutdown after it leaves no process", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ counter });
    try {
      const old = await fleet.daemon(h);
      const agent = await fleet.agent(h);
      const firstStart = (await agent.status()).startedAt;
      expect(await count(agent)).toEqual([1, expect.any(Number)]);
      const [two, childPid] = await count(agent);
      expect(two).toBe(2);
      const serverStart = (await agent.status()).servers.find((s) => s.id === "counter")?.startedAt;
      expect(serverStart).toEqual(expect.any(Number));

      const restart = await runCliAsync(h, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      const handed = JSON.parse(restart.stdout) as { pid: number; adopted: string[] };
      expect(handed.adopted).toEqual(["counter"]);
      expect(handed.pid).not.toBe(old.pid);
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");

      const after = await fleet.agent(h, "after");
      expect(await count(after)).toEqual([3, childPid]);
      // A second hand-over passes on what the first one adopted.
      const again = JSON.parse((await runCliAsync(h, "restart", "--json")).stdout) as {
        pid: number;
      };
      await waitFor(() => !alive(handed.pid), 20_000, "the second daemon to exit");
      const third = await fleet.agent(h, "third");
      expect(await count(third)).toEqual([4, childPid]);
      const status = await third.status();
      expect(status.pid).toBe(again.pid);
      expect(status.handover).toMatchObject({ from: { pid: handed.pid }, adopted: ["counter"] });
      // Since when the pool serves (the first daemon's start, two hand-overs ago), and this process.
      expect(status.handover).toMatchObject({ servingSince: firstStart, handovers: 2 });
      expect(status.startedAt).toBeGreaterThan(firstStart);
      const text = (await runCliAsync(h, "status")).stdout;
      expect(text).toContain(
        `serving since ${new Date(firstStart).toISOString()} (2 hand-over(s) since; this process since ${new Date(status.startedAt).toISOString()})`,
      );
      expect(text).toMatch(/up \S+ \(this process; the pool \S+, without a cold start\)/);
      expect(text).toContain(`handed over from pid ${handed.pid}`);
      expect(status.servers.find((s) => s.id === "counter")?.pid).toBe(childPid);
      // Its uptime counts from its start under the first daemon, not from either adoption.
      expect(status.servers.find((s) => s.id === "counter")?.startedAt).toBe(serverStart);

      const shutdown = await runCliAsync(h, "shutdown");
      expect(shutdown.code).toBe(0);
      await waitFor(
        () => !alive(again.pid) && !alive(childPid),
        20_000,
        "the new daemon and the adopted child to end",
      );
    } finally {
      await stopDaemons(h);
    }
  });

  it("records adopted children as the new daemon's: after its SIGKILL, the next start reaps them", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    // hang.mjs ignores stdin EOF and SIGTERM: only a reap ends it.
    h.writeConfig({ hang: { command: process.execPath, args: [fixture("hang.mjs")] } });
    let hangPid: number | undefined;
    try {
      await fleet.daemon(h);
      const agent = await fleet.agent(h);
      hangPid = Number(await agent.call("hang__pid", {}));
      const handed = JSON.parse((await runCliAsync(h, "restart", "--json")).stdout) as {
        pid: number;
      };
      expect(Number(await (await fleet.agent(h, "after")).call("hang__pid", {}))).toBe(hangPid);

      process.kill(handed.pid, "SIGKILL");
      await waitFor(() => !alive(handed.pid), 10_000, "the new daemon to die");
      expect(alive(hangPid)).toBe(true);
      const next = await fleet.daemon(h);
      await waitFor(() => !alive(hangPid as number), 20_000, "the adopted child to be reaped");
      expect(next.stderr()).toContain(`reaped 1 children of a previous daemon: ${hangPid}`);
    } finally {
      if (hangPid !== undefined && alive(hangPid)) process.kill(hangPid, "SIGKILL");
      await stopDaemons(h);
    }
  });

  it("re-creates a socket that came by hand-over when a cleaner removes its folder", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ counter });
    try {
      const old = await fleet.daemon(h);
      const [, childPid] = await count(await fleet.agent(h));
      const handed = JSON.parse((await runCliAsync(h, "restart", "--json")).stdout) as {
        pid: number;
      };
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");

      removeFolder(dirname(h.socketPath));
      await waitFor(() => isSocket(h.socketPath), 20_000, "the socket to be re-created");
      const after = await fleet.agent(h, "after");
      expect((await after.status()).pid).toBe(handed.pid);
      expect(await count(after)).toEqual([2, childPid]);
      // The MCP sockets in that folder come back with it: a host behind the lean bridge is served.
      expect(await leanCount(fleet, h)).toBe(`3 ${childPid}`);
    } finally {
      await stopDaemons(h);
    }
  });

  it("records the children as the old daemon's again after a failed hand-over, so a retry adopts them", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    // A second counter that dies when the new daemon lists its tools: its adoption fails.
    const flag = join(h.dir, "exit-on-list");
    h.writeConfig({ counter, fragile: { ...counter, env: { COUNTER_EXIT_ON_LIST: flag } } });
    try {
      const old = await fleet.daemon(h);
      const agent = await fleet.agent(h);
      const [, childPid] = await count(agent);
      await count(agent, "fragile__count");
      writeFileSync(flag, "");
      const failed = await runCliAsync(h, "restart");
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain("could not adopt fragile");
      rmSync(flag);
      // The new daemon recorded the child as its own while adopting it, then let it go.
      const recordPath = join(h.dir, "data", "mcpool", "children", `${childPid}.json`);
      const record = JSON.parse(readFileSync(recordPath, "utf8")) as { daemonPid: number };
      expect(record.daemonPid).toBe(old.pid);

      // A retry's new daemon reaps what dead daemons' records name before it adopts anything.
      const retry = await runCliAsync(h, "restart", "--json");
      expect(retry.stderr).toBe("");
      expect(retry.code).toBe(0);
      const handed = JSON.parse(retry.stdout) as { pid: number; adopted: string[] };
      expect(handed.adopted).toContain("counter");
      await waitFor(() => !alive(old.pid), 20_000, "the old daemon to exit");
      expect(await count(await fleet.agent(h, "after"))).toEqual([2, childPid]);
    } finally {
      await stopDaemons(h);
    }
  });

  it("keeps server-memory's process and its graph", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    const file = join(h.dir, "memory.jsonl");
    h.writeConfig({
      memory: { command: process.execPath, args: [memoryServer], env: { MEMORY_FILE_PATH: file } },
    });
    try {
      await fleet.daemon(h);
      const agent = await fleet.agent(h);
      const entities = [{ name: "mcpool", entityType: "project", observations: ["pools servers"] }];
      await agent.call("memory__create_entities", { entities });
      const before = (await agent.state()).find((s) => s.id === "memory")?.pid;
      const graph = await agent.call("memory__read_graph", {});

      const restart = await runCliAsync(h, "restart");
      expect(restart.code).toBe(0);
      expect(restart.stdout).toContain("1 servers handed over running (memory)");

      const after = await fleet.agent(h, "after");
      expect((await after.state()).find((s) => s.id === "memory")?.pid).toBe(before);
      expect(await after.call("memory__read_graph", {})).toBe(graph);
      expect(graph).toContain("pools servers");
    } finally {
      await stopDaemons(h);
    }
  });

  for (const via of ["sdk", "lean", "perl"] as BridgePath[]) {
    it(`answers a host's next call through the ${via} entry with no reconnect`, async (context) => {
      const fleet = testFleet(context);
      const h = fleet.home();
      h.writeConfig({ counter });
      try {
        await fleet.daemon(h);
        const host = fleet.keep(await stdioBridge(h, ["--server", "counter"], {}, via));
        try {
          const first = await host.client.callTool({ name: "count", arguments: {} });
          const [one, pid] = String((first.content as { text: string }[])[0]?.text).split(" ");
          expect(one).toBe("1");

          expect((await runCliAsync(h, "restart")).code).toBe(0);

          // The same Client, never reconnected by the host: the entry dials the new daemon.
          const next = await host.client.callTool({ name: "count", arguments: {} });
          expect(next.isError).toBeFalsy();
          expect((next.content as { text: string }[])[0]?.text).toBe(`2 ${pid}`);
        } finally {
          await host.close();
        }
      } finally {
        await stopDaemons(h);
      }
    });
  }

  it("fails a host's call in flight with the coded may-or-may-not-have-run error, never a hang", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ echo: { command: process.execPath, args: [fixture("echo.mjs")] } });
    try {
      await fleet.daemon(h);
      const watcher = await fleet.agent(h, "watcher");
      const host = fleet.keep(await stdioBridge(h, ["--server", "echo"]));
      try {
        const inFlight = host.client.callTool({ name: "sleep", arguments: { ms: 60_000 } });
        const outcome = inFlight.then(
          () => "answered",
          (error: { code?: number; data?: { code?: string; detail?: { inFlight?: boolean } } }) =>
            error,
        );
        await waitFor(
          async () => (await watcher.state()).some((s) => (s.inflight ?? 0) > 0),
          20_000,
          "the call to be in flight",
        );
        expect((await runCliAsync(h, "restart")).code).toBe(0);
        expect(await outcome).toMatchObject({
          code: -32603,
          data: { code: "daemon-unavailable", detail: { inFlight: true } },
        });
        const next = await host.client.callTool({ name: "echo", arguments: { text: "after" } });
        expect(next.content).toEqual([{ type: "text", text: "after" }]);
      } finally {
        await host.close();
      }
    } finally {
      await stopDaemons(h);
    }
  });

  it("leaves the old daemon serving, and says why, when the new one cannot start", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home();
    h.writeConfig({ counter });
    // The installed code the restart starts: here a script that runs this checkout, until
    // an "upgrade" replaces it with one that cannot start.
    const installed = installedCli(h);
    const old = await startDaemon(h, [], { bin: installed });
    try {
      const agent = await fleet.agent(h);
      const [, childPid] = await count(agent);
      writeFileSync(installed, `process.stderr.write("broken upgrade\\n"); process.exit(7);\n`);

      const restart = await runCliAsync(h, "restart");
      expect(restart.code).toBe(1);
      expect(restart.stderr).toContain("the new daemon did not take over, so this one serves on");
      expect(restart.stderr).toContain("code 7");

      const after = await fleet.agent(h, "after");
      expect(await count(after)).toEqual([2, childPid]);
      // The MCP sockets accept again: a host behind the lean bridge is served.
      expect(await leanCount(fleet, h)).toBe(`3 ${childPid}`);
      const status = await after.status();
      expect(status.pid).toBe(old.pid);
      expect(status.handover).toBeUndefined();
      expect(old.stderr()).toContain("the hand-over failed, this daemon serves on");
    } finally {
      await old.stop();
      await stopDaemons(h);
    }
  });
});
