/**
 * An entry that has to start the daemon answers its host's opening and listings from what
 * the daemon answered them before (src/bridge/lean/cold-answers.ts), byte for byte, and
 * carries the session on to the daemon once it serves: a call then goes through. Proven by
 * order, not by time: the daemon's instance lock is held by this test while the host asks,
 * so no daemon can serve (each one started gives way) until the test lets go, after the
 * answers came. A row changed since (its cache no longer its own), or an entry of another
 * build of the same version, is served as before: no answer until a daemon serves. A
 * 2026-07-28 host is recorded and answered the same way. A list found changed once the daemon
 * answers is said to a legacy host as a server says it (how a 2026-07-28 host is told, on its
 * listen subscriptions: test/unit/lean-host-era.test.ts). A host done with the recorded
 * answers before any daemon serves still leaves the daemon its entry started serving.
 */
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  existsSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { INITIALIZE } from "../../src/cli/hosts/pipe-entry.js";
import { readProcessStat } from "../../src/daemon/process/instance-lock.js";
import { binPath, scopeSocket } from "../helpers/bridge.js";
import { startDaemon, testHome, type TestHome } from "../helpers/daemon.js";
import { daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { line, rawHost, type RawHost } from "../helpers/raw-host.js";

/** This tree: its dist/, package.json and node_modules. */
const repo = dirname(dirname(dirname(binPath)));

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

const PING = line({ jsonrpc: "2.0", id: 3, method: "ping" });

/** A 2026-07-28 host's envelope, on each of its requests. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern-host", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

const MODERN_OPENING =
  line({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: META } }) +
  line({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } });

const MODERN_CALL = line({
  jsonrpc: "2.0",
  id: 3,
  method: "tools/call",
  params: { name: "echo", arguments: { text: "through the daemon" }, _meta: META },
});

/** Whether the recording at `path` holds an opening by `method` with a listing after it. */
function recorded(path: string, method: string): boolean {
  if (!existsSync(path)) return false;
  const { openings } = JSON.parse(readFileSync(path, "utf8")) as {
    openings: { request: string; lists: unknown[] }[];
  };
  return openings.some((o) => o.request.includes(`"${method}"`) && o.lists.length > 0);
}

describe("a cold entry answers its host's first look from the daemon's last answers", () => {
  let home: TestHome;
  let warm: string[];
  let warmModern: string[];
  let warmMoving: string[];
  const warmPool: Record<"@pool" | "@catalog", string[]> = { "@pool": [], "@catalog": [] };
  const hosts: RawHost[] = [];
  const lockPath = (): string => join(home.socketPath, "..", "mcpool.lock");
  const recording = (scope: string): string =>
    scope.startsWith("@")
      ? join(home.env.XDG_DATA_HOME!, "mcpool", "cold-answers-pool", `${scope.slice(1)}.json`)
      : join(home.env.XDG_DATA_HOME!, "mcpool", "cold-answers", `${scope}.json`);
  /** The tools server `id` adds, one a line: written by a test, its row the same. */
  const toolsFile = (id: string): string => join(home.dir, `${id}-tools.txt`);
  /** A server whose list a test changes. */
  const moving = (id: string) => ({
    command: process.execPath,
    args: [fixture("echo.mjs")],
    env: { FIXTURE_TOOLS_FILE: toolsFile(id) },
  });
  const row = (extra: string[] = []) => ({
    echo: { command: process.execPath, args: [fixture("echo.mjs"), ...extra] },
    "legacy-moving": moving("legacy-moving"),
  });

  /** A warm session through the daemon: what it answers `opening` is given back, and recorded. */
  const warmSession = async (scope: string, opening: string, method: string) => {
    const host = rawHost(home, "lean", scope);
    hosts.push(host);
    host.child.stdin.write(opening);
    const answers = await host.next(2);
    await waitFor(
      () => recorded(recording(scope), method),
      20_000,
      `the daemon to keep ${scope}'s first answers to ${method}`,
    );
    host.child.stdin.end();
    return answers;
  };

  /** This process holds the daemon's instance lock: every daemon started gives way. */
  const holdLock = (): void => {
    const startTime = readProcessStat(process.pid)?.startTime ?? null;
    const record = { pid: process.pid, startTime, nonce: "00000000feedbeef" };
    writeFileSync(lockPath(), `${JSON.stringify(record)}\n`, { flag: "wx", mode: 0o600 });
  };

  /** A daemon started for this home is seen, then gone: it gave way to the held lock. */
  const startedDaemonGaveWay = async (): Promise<void> => {
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
    warm = await warmSession("echo", OPENING, "initialize");
    warmModern = await warmSession("echo", MODERN_OPENING, "server/discover");
    // The pool's own scopes last: each row's tools are cached by then, as their answers need.
    warmPool["@pool"] = await warmSession("@pool", OPENING, "initialize");
    warmPool["@catalog"] = await warmSession("@catalog", OPENING, "initialize");
    warmMoving = await warmSession("legacy-moving", OPENING, "initialize");
    await daemon.stop();
  });

  afterEach(async () => {
    for (const host of hosts.splice(0)) host.child.kill();
    rmSync(lockPath(), { force: true });
    await stopAll(daemonsFor(home.socketPath));
  });

  // Also when the warm sessions failed (no afterEach then): nothing outlives the file.
  afterAll(async () => {
    for (const host of hosts.splice(0)) host.child.kill();
    if (home !== undefined) await stopAll(daemonsFor(home.socketPath));
    home?.remove();
  });

  const called = { id: 3, result: { content: [{ type: "text", text: "through the daemon" }] } };
  const pinged = { id: 3, result: {} };
  /** Each opening answered cold: on which scope, by which entries, and what goes on after. */
  const openings = {
    "initialize (a legacy host)": {
      scope: "echo",
      vias: ["lean", "perl"],
      opening: OPENING,
      then: [CALL, called],
      warm: () => warm,
    },
    "server/discover (a 2026-07-28 host)": {
      scope: "echo",
      vias: ["lean", "perl"],
      opening: MODERN_OPENING,
      then: [MODERN_CALL, called],
      warm: () => warmModern,
    },
    "initialize on the whole pool (@pool)": {
      scope: "@pool",
      vias: ["lean", "perl"],
      opening: OPENING,
      then: [PING, pinged],
      warm: () => warmPool["@pool"],
    },
    "initialize on the pool's catalogue (--catalog)": {
      scope: "@catalog",
      vias: ["lean"],
      opening: OPENING,
      then: [PING, pinged],
      warm: () => warmPool["@catalog"],
    },
  } as const;
  const cases = Object.entries(openings).flatMap(([what, { vias }]) =>
    vias.map((via) => [what as keyof typeof openings, via] as const),
  );

  it.each(cases)(
    "answers %s and tools/list before any daemon serves, as the daemon did, then goes on through it (%s)",
    async (what, via) => {
      const { scope, opening, then, warm: warmAnswers } = openings[what];
      holdLock();
      const host = rawHost(home, via, scope);
      hosts.push(host);
      host.child.stdin.write(opening);
      const cold = await host.next(2);
      // The lock is still ours: no daemon has served; these are the daemon's own bytes.
      expect(existsSync(lockPath())).toBe(true);
      expect(cold).toEqual(warmAnswers());
      host.child.stdin.write(then[0]);
      rmSync(lockPath());
      // The answer is found by its id: a pool's notification may come before it.
      const answers = (l: string): boolean => (JSON.parse(l) as { id?: unknown }).id === then[1].id;
      await waitFor(() => host.lines.slice(2).some(answers), 30_000, "the answer");
      const answer = host.lines.slice(2).find(answers);
      expect(JSON.parse(answer!)).toMatchObject(then[1]);
      // Nothing else reached the host: the recorded list is still the daemon's. A pool's
      // daemon just started says its lists changed as its servers come up, to every session.
      const rest = host.lines.slice(2).filter((l) => l !== answer);
      const told = scope.startsWith("@") ? rest.filter((l) => !/list_changed/.test(l)) : rest;
      expect(told, host.lines.join("")).toEqual([]);
    },
  );

  /** How a host is done with its entry: its stdin closed, or the signal Claude Code's `mcp list` sends. */
  const ENDINGS = {
    "closes stdin": (host: RawHost) => void host.child.stdin.end(),
    "sends SIGTERM": (host: RawHost) => void host.child.kill("SIGTERM"),
  };

  it.each([
    ["lean", "closes stdin"],
    ["perl", "closes stdin"],
    ["lean", "sends SIGTERM"],
    ["perl", "sends SIGTERM"],
  ] as const)(
    "leaves the daemon it starts serving, though its host is done with the recorded answers before any daemon serves (%s, host %s)",
    async (via, ending) => {
      holdLock();
      const host = rawHost(home, via, "echo");
      hosts.push(host);
      host.child.stdin.write(OPENING);
      expect(await host.next(2)).toEqual(warm);
      // At once: before the entry has spawned a daemon, as often as not.
      ENDINGS[ending](host);
      // The host is done; the daemon the entry started gives way to the held lock.
      await startedDaemonGaveWay();
      // The entry stays: its start is not over until a daemon serves.
      expect([host.child.exitCode, host.child.signalCode]).toEqual([null, null]);
      rmSync(lockPath());
      await waitFor(
        () => host.child.exitCode !== null || host.child.signalCode !== null,
        30_000,
        "the entry to exit once its daemon serves",
      );
      expect(host.child.exitCode).toBe(0);
      expect(daemonsFor(home.socketPath)).toHaveLength(1);
    },
  );

  // A host built on rmcp (Codex) kills its servers' processes (SIGKILL) as it drops them: an
  // entry cannot wait for anything then, so a daemon must be on its way before the host has
  // its answers.
  it.each(["lean", "perl"] as const)(
    "leaves a daemon serving though its host kills it (SIGKILL) the moment it has the recorded answers (%s)",
    async (via) => {
      const host = rawHost(home, via, "echo");
      hosts.push(host);
      host.child.stdin.write(OPENING);
      expect(await host.next(2)).toEqual(warm);
      host.child.kill("SIGKILL");
      await waitFor(
        () => existsSync(home.socketPath) && daemonsFor(home.socketPath).length === 1,
        20_000,
        "a daemon serving, started by the entry its host killed",
      );
      const after = rawHost(home, "lean", "echo");
      hosts.push(after);
      after.child.stdin.write(INITIALIZE + PING);
      const answers = (await after.next(2)).map((l) => JSON.parse(l) as unknown);
      expect(answers, JSON.stringify(answers)).toContainEqual(expect.objectContaining(pinged));
    },
  );

  describe("a list found changed once the daemon answers", () => {
    /**
     * Server legacy-moving's list changed, then a cold host that opens as the warm one did,
     * answered from the recording.
     */
    const coldAfterChange = async (): Promise<RawHost> => {
      writeFileSync(toolsFile("legacy-moving"), "added_since\n");
      holdLock();
      const host = rawHost(home, "lean", "legacy-moving");
      hosts.push(host);
      host.child.stdin.write(OPENING);
      expect(await host.next(2)).toEqual(warmMoving);
      return host;
    };

    it("is said to a legacy host as a server says it: notifications/tools/list_changed", async () => {
      const host = await coldAfterChange();
      rmSync(lockPath());
      const [, , notice] = await host.next(3);
      expect(JSON.parse(notice!)).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
      });
    });
  });

  /**
   * A copy of this build with one byte of code more, the same version: another build. Beside
   * its own package.json (ES modules) and this tree's node_modules.
   */
  const otherBuild = (): string => {
    const root = join(home.dir, "other-build");
    cpSync(join(repo, "dist"), join(root, "dist"), { recursive: true });
    copyFileSync(join(repo, "package.json"), join(root, "package.json"));
    symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
    appendFileSync(join(root, "dist", "version.js"), "\n// another build of the same version\n");
    return join(root, "dist", "cli", "bin.js");
  };

  const rowChanged = (scope: string) => () => {
    home.writeConfig(row(["--changed"]));
    return { scope, bin: binPath, undo: () => home.writeConfig(row()) };
  };
  const notTrusted = {
    "a row changed since": rowChanged("echo"),
    "one of the pool's rows changed since (@pool)": rowChanged("@pool"),
    "another build of the same mcpool version": () => ({
      scope: "echo",
      bin: otherBuild(),
      undo: () => {},
    }),
  };

  it.each(Object.keys(notTrusted) as (keyof typeof notTrusted)[])(
    "%s: served as before, no answer until a daemon serves",
    async (what) => {
      const { scope, bin, undo } = notTrusted[what]();
      try {
        holdLock();
        const host = rawHost(home, "lean", scope, bin);
        hosts.push(host);
        host.child.stdin.write(OPENING);
        // The entry has decided and started a daemon, which gave way to the held lock.
        await startedDaemonGaveWay();
        expect(host.lines).toEqual([]);
        rmSync(lockPath());
        const [opening] = await host.next(1);
        expect(JSON.parse(opening!)).toMatchObject({ id: 1, result: { serverInfo: {} } });
      } finally {
        undo();
      }
    },
  );
});
