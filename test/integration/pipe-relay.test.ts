/**
 * The stock-pipe entry at its floor: the perl relay `mcpool wire` writes is
 * one process, carries frames larger than one read both ways, and a host that closes its
 * stdin first still gets the answers to what it sent — the daemon's MCP socket answers a
 * half-closed session before ending it, a call that outlasts the daemon's probes of a
 * half-closed host (half-close.ts, PROBE_AFTER_MS) included — and then the entry exits.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { bridgeCommand, bridgeHome, stdioBridge, stringEnv } from "../helpers/bridge.js";
import { INITIALIZE } from "../../src/cli/hosts/pipe-entry.js";
import { alive, childrenOf, fixture, waitFor } from "../helpers/processes.js";

/** Bound on an entry's exit once the daemon ended its session. */
const EXIT_MS = 10_000;
/** Larger than the relay's 64 KiB reads and a socket's buffer: many reads, partial writes. */
const LARGE = 300 * 1024;
/** Longer than the daemon's first probes of a half-closed host (0, 50, 250 and 1000 ms). */
const SLEEP_MS = 1_500;

const line = (message: object): string => `${JSON.stringify(message)}\n`;

describe("the pipe entries against the daemon's MCP socket", () => {
  const home = bridgeHome("mcpool-pipe-relay-", "echo", () => ({
    echo: { command: process.execPath, args: [fixture("echo.mjs")] },
  }));
  const args = (): string[] => ["--server", "echo", "--socket", home.socketPath];

  it("the perl relay is one process, and carries frames larger than its reads both ways", async () => {
    const host = await stdioBridge(home, args(), {}, "perl");
    try {
      expect(childrenOf(host.transport.pid!)).toEqual([]);
      const text = "0123456789".repeat(LARGE / 10);
      const result = await host.client.callTool({ name: "echo", arguments: { text } });
      expect(result.content).toEqual([{ type: "text", text }]);
    } finally {
      await host.close();
    }
  });

  it.each(["perl", "lean"] as const)(
    "a host that closes stdin first gets every answer, then the entry exits (%s)",
    async (via) => {
      const entry = bridgeCommand(home, args(), via);
      const child = spawn(entry.command, entry.args, {
        env: stringEnv(home.env),
        stdio: ["pipe", "pipe", "ignore"],
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const text = "x".repeat(LARGE);
      child.stdin.end(
        INITIALIZE +
          line({ jsonrpc: "2.0", method: "notifications/initialized" }) +
          line({ jsonrpc: "2.0", id: 2, method: "tools/list" }) +
          line({
            jsonrpc: "2.0",
            id: 3,
            method: "tools/call",
            params: { name: "add", arguments: { a: 2, b: 3 } },
          }) +
          line({
            jsonrpc: "2.0",
            id: 4,
            method: "tools/call",
            params: { name: "echo", arguments: { text } },
          }) +
          line({
            jsonrpc: "2.0",
            id: 5,
            method: "tools/call",
            params: { name: "sleep", arguments: { ms: SLEEP_MS } },
          }),
      );
      try {
        await waitFor(() => !alive(child.pid!), EXIT_MS + SLEEP_MS, "the entry to exit");
      } finally {
        if (alive(child.pid!)) child.kill("SIGKILL");
        await exited;
      }
      const answers = new Map(
        out
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown> })
          .filter((m) => m.id !== undefined)
          .map((m) => [m.id, m.result]),
      );
      expect([...answers.keys()].sort()).toEqual([1, 2, 3, 4, 5]);
      expect((answers.get(2)?.tools as { name: string }[]).map((t) => t.name)).toContain("add");
      expect(answers.get(3)?.content).toEqual([{ type: "text", text: 'add({"a":2,"b":3})' }]);
      expect(answers.get(4)?.content).toEqual([{ type: "text", text }]);
      expect(answers.get(5)?.content).toEqual([{ type: "text", text: `slept ${SLEEP_MS}` }]);
    },
  );
});
