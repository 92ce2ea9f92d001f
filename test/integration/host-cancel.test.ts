/**
 * A host killed mid-call cancels that call upstream at once on the MCP socket front
 * (test/faults.ts, "a host holding the MCP sockets or the lean bridge is killed mid-call"): the
 * host, in a process of its own, reaches the pooled server through `mcpool bridge --server ID`
 * (the lean byte pipe) or through the perl relay `mcpool wire` writes, and is SIGKILLed while
 * its call waits; or it holds the MCP socket itself and drops it. The pooled server must get
 * notifications/cancelled well before the half-close bound (HALF_CLOSE_ANSWER_MS, 30 s) would
 * end the session (test/integration/pipe-relay.test.ts: a host that only closes its stdin, and
 * is alive, still gets its answers).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  bridgeCommand,
  bridgeHome,
  scopeSocket,
  stringEnv,
  type BridgePath,
} from "../helpers/bridge.js";
import { INITIALIZE } from "../../src/cli/hosts/pipe-entry.js";
import { alive, fixture, waitFor } from "../helpers/processes.js";

/** Far below the 30 s a half-closed session is given: the cancel must not wait for it. */
const CANCEL_MS = 10_000;
/** Bound on a host reaching its server: spawn, initialize, the call under way. */
const START_MS = 20_000;

const line = (message: object): string => `${JSON.stringify(message)}\n`;
const call = (id: number, name: string, args: object = {}): string =>
  line({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const INITIALIZED = line({ jsonrpc: "2.0", method: "notifications/initialized" });

/** The hosts: an SDK Client over a Node child's socketpairs, or perl over two plain pipes. */
const HOSTS = {
  node: (entry: string[]) => [process.execPath, fixture("stdio-host.mjs"), ...entry],
  pipes: (entry: string[]) => ["perl", fixture("pipe-host.pl"), ...entry],
} as const;

describe("a host killed mid-call on the MCP socket front", () => {
  const home = bridgeHome("mcpool-host-cancel-", "slow", (at) => ({
    slow: {
      command: process.execPath,
      args: [fixture("cancel-log.mjs")],
      env: { CANCEL_LOG: join(at.dir, "cancel.log") },
    },
  }));
  const log = join(home.dir, "cancel.log");
  const args = (): string[] => ["--server", "slow", "--socket", home.socketPath];
  const lines = (): string[] => (existsSync(log) ? readFileSync(log, "utf8").split("\n") : []);
  /** The number the fixture gives the next call it starts. */
  const nextCall = (): number => lines().filter((l) => l.startsWith("started ")).length + 1;

  /** Kills `child` if it runs, and resolves once it is reaped. */
  async function reap(child: ChildProcess, exited: Promise<void>): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  }

  it.each([
    ["node", "lean"],
    ["node", "perl"],
    ["pipes", "lean"],
    ["pipes", "perl"],
  ] as const)(
    "a %s host SIGKILLed mid-call through the %s entry cancels the call at once, and the entry exits",
    async (hostKind, via: BridgePath) => {
      const entry = bridgeCommand(home, args(), via);
      const [command, ...hostArgs] = HOSTS[hostKind]([entry.command, ...entry.args]);
      const n = nextCall();
      const host = spawn(command!, hostArgs, {
        env: { ...stringEnv(home.env), HOST_TOOL: "wait" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      host.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      host.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<void>((resolve) => host.once("exit", () => resolve()));
      let entryPid = 0;
      try {
        await waitFor(() => /pid \d+/.test(out) || host.exitCode !== null, START_MS, "the host");
        entryPid = Number(/pid (\d+)/.exec(out)?.[1]);
        expect(entryPid, err).toBeGreaterThan(0);
        await waitFor(() => lines().includes(`started ${n}`), START_MS, "the call to start");
        host.kill("SIGKILL");
        await exited;
        await waitFor(() => lines().includes(`cancelled ${n}`), CANCEL_MS, "the server's cancel");
        expect(lines()).toContain(`cancelled ${n}`);
        const pid = entryPid;
        await waitFor(() => !alive(pid), CANCEL_MS, "the entry to exit");
      } finally {
        await reap(host, exited);
        if (entryPid > 0 && alive(entryPid)) {
          process.kill(entryPid, "SIGKILL");
          const pid = entryPid;
          await waitFor(() => !alive(pid), 10_000, "the entry to die");
        }
      }
    },
  );

  it("a host holding the MCP socket itself that drops it mid-call cancels the call at once", async () => {
    const n = nextCall();
    const socket = connect(scopeSocket(home, args()));
    socket.on("error", () => undefined);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(INITIALIZE + INITIALIZED + call(2, "wait"));
    try {
      await waitFor(() => lines().includes(`started ${n}`), START_MS, "the call to start");
    } finally {
      socket.destroy();
    }
    await waitFor(() => lines().includes(`cancelled ${n}`), CANCEL_MS, "the server's cancel");
    expect(lines()).toContain(`cancelled ${n}`);
  });
});
