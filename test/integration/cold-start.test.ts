/**
 * An entry that has to start the daemon answers its host's opening and listings from what
 * the daemon answered them before (src/bridge/lean/cold-answers.ts), byte for byte, and
 * carries the session on to the daemon once it serves: a call then goes through. Proven by
 * order, not by time: the daemon's instance lock is held by this test while the host asks,
 * so no daemon can serve (each one started gives way) until the test lets go, after the
 * answers came. A row changed since (its cache no longer its own) is served as before: no
 * answer until a daemon serves.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { INITIALIZE } from "../../src/cli/hosts/pipe-entry.js";
import { readProcessStat } from "../../src/daemon/process/instance-lock.js";
import { bridgeCommand, scopeSocket, stringEnv, type BridgePath } from "../helpers/bridge.js";
import { startDaemon, testHome, type TestHome } from "../helpers/daemon.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";

const line = (message: object): string => `${JSON.stringify(message)}\n`;

const OPENING =
  INITIALIZE +
  line({ jsonrpc: "2.0", method: "notifications/initialized" }) +
  line({ jsonrpc: "2.0", id: 2, method: "tools/list" });

const CALL = line({
  jsonrpc: "2.0",
  id: 3,
  method: "tools/call",
  params: { name: "echo", arguments: { text: "through the daemon" } },
});

/** A host on an entry's stdio: what it writes, the lines it is answered, in order. */
interface RawHost {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  next(count: number): Promise<string[]>;
}

function rawHost(home: TestHome, via: BridgePath): RawHost {
  const entry = bridgeCommand(home, ["--server", "echo", "--socket", home.socketPath], via);
  const child = spawn(entry.command, entry.args, { env: stringEnv(home.env) });
  const lines: string[] = [];
  let rest = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    rest += chunk.toString();
    let at = rest.indexOf("\n");
    while (at !== -1) {
      lines.push(rest.slice(0, at + 1));
      rest = rest.slice(at + 1);
      at = rest.indexOf("\n");
    }
  });
  return {
    child,
    lines,
    async next(count) {
      await waitFor(() => lines.length >= count, 30_000, `${count} lines (${stderr})`);
      return lines.slice(0, count);
    },
  };
}

describe("a cold entry answers its host's first look from the daemon's last answers", () => {
  let home: TestHome;
  let warm: string[];
  const hosts: RawHost[] = [];
  const lockPath = (): string => join(home.socketPath, "..", "mcpool.lock");
  const recording = (): string =>
    join(home.env.XDG_DATA_HOME!, "mcpool", "cold-answers", "echo.json");
  const row = (extra: string[] = []) => ({
    echo: { command: process.execPath, args: [fixture("echo.mjs"), ...extra] },
  });

  /** This process holds the daemon's instance lock: every daemon started gives way. */
  const holdLock = (): void => {
    const startTime = readProcessStat(process.pid)?.startTime ?? null;
    const record = { pid: process.pid, startTime, nonce: "00000000feedbeef" };
    writeFileSync(lockPath(), `${JSON.stringify(record)}\n`, { flag: "wx", mode: 0o600 });
  };

  beforeAll(async () => {
    home = testHome("mcpool-cold-start-");
    home.writeConfig(row());
    const daemon = await startDaemon(home);
    await waitFor(
      () => existsSync(scopeSocket(home, ["--server", "echo"])),
      20_000,
      "echo's socket",
    );
    // A warm session through the daemon: what it answers is recorded.
    const host = rawHost(home, "lean");
    host.child.stdin.write(OPENING);
    warm = await host.next(2);
    await waitFor(
      () => existsSync(recording()) && readFileSync(recording(), "utf8").includes("tools/list"),
      20_000,
      "the daemon to keep its first answers",
    );
    host.child.stdin.end();
    await daemon.stop();
  });

  afterEach(async () => {
    for (const host of hosts.splice(0)) host.child.kill();
    rmSync(lockPath(), { force: true });
    await stopAll(daemonsFor(home.socketPath));
  });

  afterAll(() => home?.remove());

  it.each(["lean", "perl"] as const)(
    "answers initialize and tools/list before any daemon serves, as the daemon did, then calls through it (%s)",
    async (via) => {
      holdLock();
      const host = rawHost(home, via);
      hosts.push(host);
      host.child.stdin.write(OPENING);
      const cold = await host.next(2);
      // The lock is still ours: no daemon has served; these are the daemon's own bytes.
      expect(existsSync(lockPath())).toBe(true);
      expect(cold).toEqual(warm);
      host.child.stdin.write(CALL);
      rmSync(lockPath());
      const [, , answer] = await host.next(3);
      expect(JSON.parse(answer!)).toMatchObject({
        id: 3,
        result: { content: [{ type: "text", text: "through the daemon" }] },
      });
      // Nothing else reached the host: the recorded list is still the daemon's.
      expect(host.lines).toHaveLength(3);
    },
  );

  it("a row changed since is served as before: no answer until a daemon serves", async () => {
    home.writeConfig(row(["--changed"]));
    try {
      holdLock();
      const host = rawHost(home, "lean");
      hosts.push(host);
      host.child.stdin.write(OPENING);
      // The entry has decided and started a daemon, which gave way to the held lock.
      let seen = false;
      await waitFor(
        () => {
          const now = daemonsFor(home.socketPath).length > 0;
          const gone = seen && !now;
          seen ||= now;
          return gone;
        },
        30_000,
        "a started daemon to give way",
      );
      expect(host.lines).toEqual([]);
      rmSync(lockPath());
      const [opening] = await host.next(1);
      expect(JSON.parse(opening!)).toMatchObject({ id: 1, result: { serverInfo: {} } });
    } finally {
      home.writeConfig(row());
    }
  });
});
