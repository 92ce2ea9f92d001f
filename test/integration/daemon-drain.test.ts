/**
 * `mcpool shutdown` or SIGTERM while calls run → each gets its answer
 * first: a real daemon asked to stop while two agents have calls in flight answers both
 * before it closes their connections, refuses what arrives meanwhile, then exits 0 with no
 * child left. The calls are held open by the gate fixture, so nothing depends on timing.
 */
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { McpPoolError, PoolClient } from "mcpool-client";
import { cliPath, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

const BOUND_MS = 20_000;

const fleet = useFleet();

/** The answer, or the error's code and message. */
function outcome(promise: Promise<string>): Promise<string> {
  return promise.catch((error: McpPoolError) => `${error.code}: ${error.message}`);
}

/** `mcpool shutdown` from its own process: its own answer must reach it too. */
function cliShutdown(h: TestHome): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, "shutdown"], { env: h.env }, (error, stdout) =>
      resolve({ code: error ? (error.code as number | null) : 0, stdout }),
    );
  });
}

/** Resolves once the daemon reports `count` calls in flight to the gate server. */
async function inflight(observer: PoolClient, count: number): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while ((await observer.state()).find((s) => s.id === "gate")?.inflight !== count) {
    if (Date.now() > deadline) throw new Error(`the gate never had ${count} calls in flight`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("shutdown drains the calls in flight", () => {
  it.each(["mcpool shutdown", "SIGTERM", "SIGINT"] as const)(
    "answers each in-flight call, refuses new ones, then exits 0 with no child left (%s)",
    async (trigger) => {
      const h = fleet.home();
      h.writeConfig({ gate: { command: process.execPath, args: [fixture("gate.mjs")] } });
      const d = await fleet.daemon(h);
      const exited = new Promise<number | null>((resolve) =>
        d.process.once("exit", (code) => resolve(code)),
      );
      const [a, b, observer] = await Promise.all([
        fleet.agent(h, "agent-a"),
        fleet.agent(h, "agent-b"),
        fleet.agent(h, "observer"),
      ]);
      const gate = join(h.dir, "open");
      // Settled into values at once: a call that fails early must fail the test, not the run.
      const first = outcome(a.call("gate__wait", { path: gate }));
      const second = outcome(b.call("gate__wait", { path: gate }));
      await inflight(observer, 2);
      const child = Number(await observer.call("gate__pid", {}));
      await observer.close();

      const asked =
        trigger === "mcpool shutdown"
          ? cliShutdown(h)
          : (d.process.kill(trigger), Promise.resolve(undefined));
      // The socket file goes first thing in a drain: from then on the daemon is stopping.
      await waitFor(() => !existsSync(h.socketPath), BOUND_MS, "the drain to begin");
      // A call after the drain began: refused at once, on the connection still open.
      expect(await outcome(a.call("gate__pid", {}))).toBe("closed: the daemon is shutting down");
      expect(await asked).toEqual(
        trigger === "mcpool shutdown"
          ? { code: 0, stdout: "the daemon is shutting down\n" }
          : undefined,
      );

      writeFileSync(gate, "");
      expect(await first).toBe(`opened ${gate}`);
      expect(await second).toBe(`opened ${gate}`);
      expect(await exited).toBe(0);
      await waitFor(() => !alive(child), BOUND_MS, "the gate server to be stopped");
    },
  );
});
