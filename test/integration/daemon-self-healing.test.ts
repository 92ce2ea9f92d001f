/**
 * Self-healing through a real `mcpool serve` (test/faults.ts, "A service left
 * running for days"): a child killed with SIGKILL after running fine is back by itself
 * with its tools offered all along; a SIGSTOPped child is found, shown `unresponsive` and
 * replaced; agents that call the instant the daemon serves are answered, never
 * `unknown-tool`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it, type TestContext } from "vitest";
import { connect, type PoolClient, type PoolEvent } from "mcpool-client";
import { cliPath } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";
import { startHttpMcpServer } from "../helpers/http-mcp-server.js";

/** Sends `pid` SIGCONT when the test ends, before its fleet is taken down (hooks run last-first). */
function continueAtEnd({ onTestFinished }: TestContext, pid: number): void {
  onTestFinished(() => {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  });
}

const crashRow = { command: process.execPath, args: [fixture("crash.mjs")] };

async function serverOf(c: PoolClient, id: string) {
  return (await c.state()).find((s) => s.id === id);
}

/** Waits for server `id` to be ready again in a child other than `before`. */
async function backInANewChild(
  c: PoolClient,
  id: string,
  before: number,
  what: string,
): Promise<void> {
  await waitFor(
    async () => {
      const state = await serverOf(c, id);
      return state?.status === "ready" && state.pid !== before;
    },
    20_000,
    what,
  );
}

function events(c: PoolClient): PoolEvent[] {
  const seen: PoolEvent[] = [];
  c.onEvent((event) => seen.push(event));
  return seen;
}

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent("a daemon that heals its servers", { timeout: 90_000 }, () => {
  it("brings a child killed with SIGKILL back by itself, twice, tools offered all along", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-heal-");
    h.writeConfig({ crashy: crashRow }, { mcpool: { crashBackoffMs: 60_000 } });
    const daemon = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const seen = events(c);
    await waitFor(async () => (await serverOf(c, "crashy"))?.status === "ready", 20_000, "ready");
    for (let round = 0; round < 2; round += 1) {
      expect(await c.call("crashy__echo", { text: `r${round}` })).toBe(`r${round}`);
      const before = (await serverOf(c, "crashy"))!.pid!;
      process.kill(before, "SIGKILL");
      await backInANewChild(c, "crashy", before, "the server to be back with a new pid");
      expect((await c.tools()).map((t) => t.function.name)).toContain("crashy__echo");
      expect((await serverOf(c, "crashy"))?.retryAt).toBeUndefined();
      expect(alive(before)).toBe(false);
    }
    // One log line each for the crash, the restart and the recovery.
    const log = daemon.stderr();
    expect(log.match(/crashy" was killed by SIGKILL unexpectedly/g)).toHaveLength(2);
    expect(log.match(/crashy: restarting/g)).toHaveLength(2);
    expect(log.match(/crashy: back with \d+ tools/g)).toHaveLength(2);
    const mine = seen.filter((e) => "serverId" in e && e.serverId === "crashy");
    expect(mine.filter((e) => e.type === "close" && e.reason === "crash")).toHaveLength(2);
    expect(mine.filter((e) => e.type === "restart")).toHaveLength(2);
    expect(mine.filter((e) => e.type === "connect" && e.recovered === true)).toHaveLength(2);
  }, 60_000);

  it("finds a SIGSTOPped child, shows it unresponsive, replaces it and serves the next call", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-heal-");
    h.writeConfig(
      { frozen: { ...crashRow, callTimeoutMs: 500 } },
      { mcpool: { crashBackoffMs: 60_000, pingTimeoutMs: 500 } },
    );
    const daemon = await fleet.daemon(h);
    const c = await fleet.agent(h);
    const seen = events(c);
    await waitFor(async () => (await serverOf(c, "frozen"))?.status === "ready", 20_000, "ready");
    expect(await c.call("frozen__echo", { text: "warm" })).toBe("warm");
    const before = (await serverOf(c, "frozen"))!.pid!;
    process.kill(before, "SIGSTOP");
    continueAtEnd(context, before);
    await expect(c.call("frozen__echo", { text: "lost" })).rejects.toMatchObject({
      code: "timeout",
    });
    await waitFor(() => seen.some((e) => e.type === "unresponsive"), 20_000, "unresponsive");
    await backInANewChild(c, "frozen", before, "a new child");
    expect(await c.call("frozen__echo", { text: "served" })).toBe("served");
    await waitFor(() => !alive(before), 20_000, "the stopped child to be killed");
    expect(daemon.stderr()).toMatch(/frozen" stopped answering/);
  }, 60_000);

  it("names the server and the cause when a remote is down, and calls it again once it is back", async (context) => {
    const fleet = testFleet(context);
    const first = await startHttpMcpServer();
    const h = fleet.home("mcpool-heal-");
    h.writeConfig({ remote: { type: "http", url: first.url } });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    expect(await c.call("remote__echo", { text: "up" })).toBe("up");
    await first.close();
    const error = await c.call("remote__echo", { text: "down" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "connection-lost" });
    expect((error as Error).message).toMatch(/server "remote" could not be reached/);
    expect((error as Error).message).not.toMatch(/internal error/);
    const back = await startHttpMcpServer({ port: first.port });
    context.onTestFinished(() => back.close().catch(() => undefined));
    // The new process forgot the session: one redial, and the call goes through.
    expect(await c.call("remote__echo", { text: "back" })).toBe("back");
  });

  it("keeps serving when whoever read its stderr goes away", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-heal-");
    h.writeConfig({ crashy: crashRow }, { mcpool: { crashBackoffMs: 60_000 } });
    const daemon = await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(async () => (await serverOf(c, "crashy"))?.status === "ready", 20_000, "ready");
    expect(await c.call("crashy__echo", { text: "healthy" })).toBe("healthy");
    // The terminal is gone: the next log lines meet a closed pipe.
    daemon.process.stderr!.destroy();
    const before = (await serverOf(c, "crashy"))!.pid!;
    process.kill(before, "SIGKILL");
    await backInANewChild(
      c,
      "crashy",
      before,
      `the server to be back after logging into a closed stderr (daemon exit ${String(daemon.process.exitCode)})`,
    );
    expect(await c.call("crashy__echo", { text: "still serving" })).toBe("still serving");
    expect(daemon.process.exitCode).toBeNull();
  });
});

// Alone, after the others: its subject is a listing the daemon answers once its first reconcile
// ends or its bound (ten seconds) runs out, and five children starting beside other tests'
// daemons at a high load can take longer than that.
describe("a daemon that heals its servers, at its start", () => {
  it("answers agents that call the instant the daemon serves, never unknown-tool", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-heal-");
    const rows = Object.fromEntries(
      ["a", "b", "c", "d", "e"].map((id) => [
        id,
        { command: process.execPath, args: [fixture("echo.mjs")] },
      ]),
    );
    h.writeConfig(rows);
    const child = spawn(process.execPath, [cliPath, "serve"], {
      env: h.env,
      stdio: ["ignore", "ignore", "ignore"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const early: PoolClient[] = [];
    try {
      // Dial the moment the socket file appears, before the servers have started.
      await waitFor(() => existsSync(h.socketPath), 20_000, "the socket");
      const agents = await Promise.all(
        ["a", "b", "c", "d", "e"].map(async (id) => {
          const c = await connect({ socketPath: h.socketPath, clientName: `early-${id}` });
          early.push(c);
          return { id, c };
        }),
      );
      // What an agent does first: list the tools, then call one. Both see every server.
      const seen = await Promise.all(
        agents.map(async ({ id, c }) => {
          const listed = (await c.tools()).map((t) => t.function.name);
          return { listed, answer: await c.call(`${id}__echo`, { text: id }) };
        }),
      );
      for (const { listed } of seen) {
        for (const id of ["a", "b", "c", "d", "e"]) expect(listed).toContain(`${id}__echo`);
      }
      expect(seen.map((s) => s.answer)).toEqual(["a", "b", "c", "d", "e"]);
    } finally {
      await Promise.all(early.map((c) => c.close().catch(() => undefined)));
      child.kill("SIGTERM");
      await exited;
    }
  }, 60_000);
});
