/**
 * A child's stdout noise is data, not log text (test/faults.ts, "A service left
 * running for days"), through a real daemon: noisy.mjs prints its API_KEY canary, colour codes, a
 * terminal-title sequence and raw control bytes on stdout, thousands of lines of it, then
 * quotes the key in colour on stderr as it crashes. Calls still work; every junk line is
 * either logged (tagged, redacted, printable) or counted in a dropped-lines line; the canary
 * is in no file under the test home but mcp.json, not in `mcpool logs`, not on the daemon's stderr; no
 * escape or control byte reaches the log.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { PoolEvent } from "mcpool-client";
import { client, startDaemon, testHome, type TestHome, runCli } from "../helpers/daemon.js";
import { fixture, nextMatching, waitFor } from "../helpers/processes.js";
import { filesUnder } from "../helpers/files.js";

// Lines noisy.mjs prints before it serves.
const STARTUP_LINES = 3;
// Far more than one window logs (10 lines per 10 s).
const FLOOD_LINES = 5000;
// Everything a terminal would act on; newlines and tabs aside, no log line may hold one.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function mcpool(home: TestHome, ...args: string[]): string {
  return runCli(home, ...args).stdout;
}

/** What the log says of noisy's junk: lines logged, and lines counted as dropped. */
function junkAccount(log: string): { logged: string[]; dropped: number; summaries: number } {
  const logged = log.split("\n").filter((l) => l.includes("mcpool: noisy: skipped a stdout line"));
  const counts = [...log.matchAll(/mcpool: noisy: … and (\d+) more stdout lines/g)];
  const dropped = counts.reduce((sum, match) => sum + Number(match[1]), 0);
  return { logged, dropped, summaries: counts.length };
}

describe("a server's stdout noise", () => {
  it("is logged tagged, redacted, printable and rate-limited, and calls still work", async () => {
    const canary = `canary-noisy-${randomUUID().slice(0, 8)}`;
    const home = testHome("mcpool-noise-");
    cleanups.push(() => home.remove());
    home.writeConfig({
      noisy: { command: process.execPath, args: [fixture("noisy.mjs")], env: { API_KEY: canary } },
    });
    const daemon = await startDaemon(home);
    cleanups.push(() => daemon.stop());
    const agent = await client(home, "noise");
    cleanups.push(() => agent.close());
    await waitFor(() => /"ready"/.test(mcpool(home, "status", "--json")), 20_000, "noisy ready");

    expect(await agent.call("noisy__flood", { lines: FLOOD_LINES })).toBe(
      `wrote ${FLOOD_LINES} lines`,
    );
    expect(await agent.call("noisy__echo", { text: "still here" })).toBe("still here");

    // The first lines are logged before the answer behind them is read: stdout is read in
    // order and the log written synchronously.
    const logPath = filesUnder(home.dir, "utf8").find((f) => f.path.endsWith("mcpool.log"))!.path;
    const { logged } = junkAccount(readFileSync(logPath, "utf8"));
    expect(logged[0]).toMatch(
      /mcpool: noisy: skipped a stdout line that is not JSON-RPC: config loaded: API_KEY=\[redacted\] #0$/,
    );
    // Colour codes and the title sequence gone whole; the other controls shown, not sent.
    expect(logged[1]).toMatch(/: warning: key \[redacted\] #1$/);
    expect(logged[2]).toMatch(/: progress 50%\\x0dprogress 100%\\x07\\x00 {2}cleared #2$/);

    // Every line is accounted for once its window has ended and reported what it dropped.
    const account = () => junkAccount(readFileSync(logPath, "utf8"));
    await waitFor(
      () => {
        const { logged, dropped } = account();
        return logged.length + dropped === STARTUP_LINES + FLOOD_LINES;
      },
      30_000,
      "the dropped-lines count",
    );
    const { logged: all, summaries } = account();
    expect(summaries).toBeGreaterThanOrEqual(1);
    expect(all.length).toBeLessThanOrEqual(10 * (summaries + 1));

    // The crash quotes the key in colour on stderr: that reaches the log redacted, printable.
    const crashed = nextMatching<PoolEvent>(
      (listener) => agent.onEvent(listener),
      (e) => e.type === "close" && e.serverId === "noisy" && e.reason === "crash",
    );
    await agent.call("noisy__crash", {}).catch(() => undefined);
    const event = await crashed;
    expect(event.type === "close" && event.error).toMatch(
      /fatal: upstream refused API_KEY=\[redacted\]\\x07/,
    );
    await waitFor(() => readFileSync(logPath, "utf8").includes("fatal: upstream"), 10_000, "log");

    const log = readFileSync(logPath, "utf8");
    expect(log).not.toMatch(CONTROL);
    expect(log).toContain("fatal: upstream refused API_KEY=[redacted]");
    // Every file but mcp.json, which holds the key by design.
    for (const file of filesUnder(home.dir, "utf8").filter((f) => f.path !== home.configPath)) {
      expect({ path: file.path, leaked: file.text.includes(canary) }).toEqual({
        path: file.path,
        leaked: false,
      });
    }
    const logs = mcpool(home, "logs", "-n", "100000");
    expect(logs).toContain("mcpool: noisy: skipped a stdout line");
    expect(logs).not.toContain(canary);
    expect(logs).not.toMatch(CONTROL);
    expect(daemon.stderr()).not.toContain(canary);
    expect(daemon.stderr()).not.toMatch(CONTROL);
    // A dropped-lines count comes when a 10 s window ends.
  }, 60_000);
});
