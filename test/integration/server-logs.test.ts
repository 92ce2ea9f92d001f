/**
 * One server's log, complete, and failures that name their cause, through a
 * real `mcpool serve`: every line about a server carries its id — connects, exits with their
 * code and stderr tail, failed dials with the cause's code, removals — so `mcpool logs
 * --server ID` (text and `--json`) shows them; a remote row nobody listens for is
 * `unreachable`, not `crash-loop`; an answer over the daemon's frame cap has a code of its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PoolClient } from "mcpool-client";
import { runCliAsync, type TestHome } from "../helpers/daemon.js";
import { testFleet } from "../helpers/fleet.js";
import { fixture, waitFor } from "../helpers/processes.js";

// Long enough that no second attempt comes inside a test: each failure is logged once.
const NO_RETRY = { mcpool: { crashBackoffMs: 600_000 } };

const echoRow = { command: process.execPath, args: [fixture("echo.mjs")] };
const crashRow = { command: process.execPath, args: [fixture("crash.mjs")] };

/** A loopback port nothing listens on: bound, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The daemon's log file, wherever the home's XDG directories put it. */
function logText(home: TestHome): string {
  const files = readdirSync(home.dir, { recursive: true, encoding: "utf8" });
  const name = files.find((f) => f.endsWith("mcpool.log"));
  return name === undefined ? "" : readFileSync(join(home.dir, name), "utf8");
}

async function serverLogs(home: TestHome, id: string): Promise<string> {
  return (await runCliAsync(home, "logs", "--server", id, "-n", "200")).stdout;
}

async function serverLogsJson(
  home: TestHome,
  id: string,
): Promise<{ server?: string; message: string }[]> {
  const out = (await runCliAsync(home, "logs", "--server", id, "-n", "200", "--json")).stdout;
  return out
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { server?: string; message: string });
}

async function stateOf(c: PoolClient, id: string) {
  return (await c.state()).find((s) => s.id === id);
}

// Each test its own home and daemon: they run side by side, each with a longer bound.
describe.concurrent("one server's log", { timeout: 90_000 }, () => {
  it("shows a healthy server's connect with its tool count under logs --server", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-slog-");
    h.writeConfig({ echo: echoRow, other: echoRow });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(async () => (await stateOf(c, "echo"))?.status === "ready", 20_000, "ready");
    await waitFor(() => logText(h).includes("echo: connected"), 10_000, "the connect line");

    const text = await serverLogs(h, "echo");
    expect(text).toMatch(/mcpool: echo: connected with 4 tools/);
    expect(text).not.toContain("mcpool: other:");
    const entries = await serverLogsJson(h, "echo");
    expect(entries.some((e) => /connected with 4 tools/.test(e.message))).toBe(true);
    expect(entries.every((e) => e.server === "echo")).toBe(true);
  });

  it("shows a child's exit code and stderr tail under logs --server when it crashes", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-slog-");
    h.writeConfig({ crashy: crashRow }, NO_RETRY);
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(async () => (await stateOf(c, "crashy"))?.status === "ready", 20_000, "ready");
    await expect(c.call("crashy__crash", {})).rejects.toMatchObject({ code: "server-crashed" });
    await waitFor(() => logText(h).includes("exited with code 3"), 10_000, "the exit line");

    const text = await serverLogs(h, "crashy");
    expect(text).toMatch(/mcpool: crashy: server "crashy" exited with code 3 unexpectedly/);
    expect(text).toContain("fixture crashing on purpose");
    const exit = (await serverLogsJson(h, "crashy")).find((e) =>
      e.message.includes("exited with code 3"),
    );
    expect(exit).toMatchObject({ server: "crashy" });
  });

  it("keeps what a child wrote to stderr inside its own entry, even a line that looks like another server's", async (context) => {
    const fleet = testFleet(context);
    const forged = "2026-01-01T00:00:00.000Z error mcpool: victim: forged by a child";
    const h = fleet.home("mcpool-slog-");
    h.writeConfig(
      {
        liar: {
          command: process.execPath,
          args: ["-e", `process.stderr.write(${JSON.stringify(`${forged}\n`)}); process.exit(1)`],
        },
        victim: echoRow,
      },
      NO_RETRY,
    );
    await fleet.daemon(h);
    await waitFor(() => logText(h).includes("forged by a child"), 20_000, "the liar's failure");

    expect(await serverLogs(h, "liar")).toContain("forged by a child");
    expect(await serverLogs(h, "victim")).not.toContain("forged");
  });

  it("logs which server a removal from mcp.json stopped, with its id", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-slog-");
    h.writeConfig({ keep: echoRow, gone: echoRow });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(async () => (await stateOf(c, "gone"))?.status === "ready", 20_000, "ready");
    const pid = (await stateOf(c, "gone"))!.pid!;
    h.writeConfig({ keep: echoRow });
    await waitFor(() => logText(h).includes("removed from mcp.json"), 20_000, "the removal line");

    expect(await serverLogs(h, "gone")).toContain(
      `mcpool: gone: stopped (pid ${pid}): removed from mcp.json`,
    );
    expect(await serverLogs(h, "keep")).not.toContain("removed from");
    const removal = (await serverLogsJson(h, "gone")).find((e) =>
      e.message.includes("removed from"),
    );
    expect(removal).toMatchObject({ server: "gone" });
  });
});

describe.concurrent("causes, not symptoms", { timeout: 90_000 }, () => {
  it("shows a remote row at a closed port as unreachable, naming ECONNREFUSED in status and its log", async (context) => {
    const fleet = testFleet(context);
    const port = await closedPort();
    const h = fleet.home("mcpool-slog-");
    h.writeConfig({ remote: { type: "http", url: `http://127.0.0.1:${port}/mcp` } }, NO_RETRY);
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    await waitFor(
      async () => (await stateOf(c, "remote"))?.status === "unreachable",
      20_000,
      "the remote row to be unreachable",
    );
    const state = (await stateOf(c, "remote"))!;
    expect(state.error).toMatch(/could not connect to server "remote": .*ECONNREFUSED/);
    expect(state.retryAt).toEqual(expect.any(Number));

    const status = await runCliAsync(h, "status");
    expect(status.stdout).toMatch(/remote\s+unreachable, next try in /);
    const json = JSON.parse((await runCliAsync(h, "status", "--json")).stdout) as {
      servers: { id: string; status: string; error?: string }[];
    };
    expect(json.servers.find((s) => s.id === "remote")).toMatchObject({
      status: "unreachable",
      error: expect.stringContaining("ECONNREFUSED"),
    });

    await waitFor(() => logText(h).includes("ECONNREFUSED"), 10_000, "the failure line");
    expect(await serverLogs(h, "remote")).toMatch(
      /mcpool: remote: could not connect to server "remote": .*ECONNREFUSED.*; next attempt at /,
    );
    const failure = (await serverLogsJson(h, "remote")).find((e) =>
      e.message.includes("ECONNREFUSED"),
    );
    expect(failure).toMatchObject({ server: "remote" });

    // The CLI's errors name it too: a restart dials again, a probe dials the row.
    const restart = await runCliAsync(h, "restart", "remote");
    expect(restart.code).not.toBe(0);
    expect(restart.stderr).toContain("ECONNREFUSED");
    expect((await runCliAsync(h, "probe", "remote")).stdout).toContain("ECONNREFUSED");
  });

  it("refuses an answer over the frame cap with answer-too-large, saying the tool ran and to ask for less", async (context) => {
    const fleet = testFleet(context);
    const h = fleet.home("mcpool-slog-");
    h.writeConfig({ big: { command: process.execPath, args: [fixture("big-answer.mjs")] } });
    await fleet.daemon(h);
    const c = await fleet.agent(h);
    // Over the default 16 MiB frame cap: dropped as it arrives, so no cap on the result can cut it.
    const chars = 17 * 1024 * 1024;
    const error = await c.call("big__text", { chars }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "answer-too-large" });
    expect((error as Error).message).toMatch(/the tool ran: ask it for less/);
    // Under the cap, a result cap cuts it, on the same connection.
    const under = 1024 * 1024;
    expect(await c.call("big__text", { chars: under }, { maxResultChars: 100 })).toContain(
      "0123456789",
    );

    const cli = await runCliAsync(h, "call", "big__text", JSON.stringify({ chars }));
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/the tool ran: ask it for less/);
  }, 60_000);
});
