/**
 * After a reconnect (here `mcpool restart`, the hand-over, with the catalog changed meanwhile)
 * an entry tells its host that the tools list may have changed, in the host's era. A
 * 2026-07-28 host hears it only on its `subscriptions/listen` stream that took tool changes,
 * the notification naming the stream as a 2026-07-28 server direct names it (the oracle:
 * test/fixtures/modern-stdio.mjs, whose `grow` changes its list); never the unsolicited
 * legacy notification, which belongs to no stream. So through the lean bridge and the perl
 * relay, for a host that opened while the daemon served (warm) and one whose opening was
 * answered from the daemon's recording while it started (cold).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { readProcessStat } from "../../src/daemon/process/instance-lock.js";
import { scopeSocket } from "../helpers/bridge.js";
import { runCliAsync, type TestHome } from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { line, rawHost, type RawHost } from "../helpers/raw-host.js";

const fleet = useFleet();
const BOUND_MS = 30_000;
const TEST_MS = 150_000;
const STREAM = "tools-stream";

/** A 2026-07-28 host's envelope, on each of its requests. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "modern-host", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const DISCOVER = line({
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: { _meta: META },
});
const LIST = line({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } });
const LISTEN = line({
  jsonrpc: "2.0",
  id: STREAM,
  method: "subscriptions/listen",
  params: { notifications: { toolsListChanged: true }, _meta: META },
});
const LIST_AGAIN = line({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: META } });

const parsed = (l: string) =>
  JSON.parse(l) as { id?: unknown; method?: string; params?: Record<string, unknown> };
const isListChanged = (l: string): boolean =>
  parsed(l).method === "notifications/tools/list_changed";
const answers = (id: unknown) => (l: string) => parsed(l).id === id && !parsed(l).method;
const acknowledged = (l: string): boolean =>
  parsed(l).method === "notifications/subscriptions/acknowledged";

/**
 * The same listen with its id written as `7.0`: the number 7 written another way, one id as
 * JSON-RPC compares ids (a server direct names the stream 7).
 */
const LISTEN_7 = LISTEN.replace(`"id":"${STREAM}"`, '"id":7.0');

/** A direct server's lines, and a writer to its stdin; `end()` waits for it to exit. */
function direct(server: string): {
  lines: string[];
  write(text: string): void;
  end(): Promise<void>;
} {
  const child = spawn(process.execPath, [fixture(server)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines: string[] = [];
  let rest = "";
  child.stdout.on("data", (chunk: Buffer) => {
    rest += chunk.toString();
    const whole = rest.split("\n");
    rest = whole.pop()!;
    lines.push(...whole.filter(Boolean));
  });
  return {
    lines,
    write: (text) => void child.stdin.write(text),
    async end() {
      child.stdin.end();
      await waitFor(() => !alive(child.pid!), BOUND_MS, "the direct server to exit");
    },
  };
}

/**
 * What a 2025-11-25 server direct tells a host whose `server/discover` it refused and that
 * lists without `initialize` (the 2026-07-28 envelope on each request, as a host that lost
 * its era), when its list changes: the oracle for an entry's reconnect.
 */
async function directRefusedNotice(): Promise<string[]> {
  const server = direct("list-changed.mjs");
  try {
    server.write(DISCOVER + LIST);
    await waitFor(() => server.lines.some((l) => answers(2)(l)), BOUND_MS, "the direct listing");
    expect(parsed(server.lines.find(answers(1))!)).toHaveProperty("error");
    const add = { name: "add_tool", arguments: { name: "grown" }, _meta: META };
    server.write(line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: add }));
    await waitFor(() => server.lines.some(answers(3)), BOUND_MS, "the direct call's answer");
    // One more round trip: what the change sent has reached the host.
    server.write(LIST_AGAIN);
    await waitFor(() => server.lines.some(answers(9)), BOUND_MS, "the direct listing again");
    return server.lines.filter(isListChanged);
  } finally {
    await server.end();
  }
}

/** What a 2026-07-28 server direct sends on a tools listen stream when its list changes. */
async function directNotice(listen = LISTEN): Promise<unknown> {
  const server = direct("modern-stdio.mjs");
  try {
    server.write(DISCOVER + listen);
    await waitFor(
      () => server.lines.some(acknowledged),
      BOUND_MS,
      "the direct listen's acknowledgement",
    );
    const grow = { name: "grow", arguments: { name: "grown" }, _meta: META };
    server.write(line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: grow }));
    await waitFor(() => server.lines.some(isListChanged), BOUND_MS, "the direct list change");
    return JSON.parse(server.lines.find(isListChanged)!);
  } finally {
    await server.end();
  }
}

/**
 * Waits for the host to be told `expected` (a list change), then lists again: whatever the
 * entry said on reconnecting has reached the host by the answer.
 */
async function toldThenListed(host: RawHost, since: () => string[], expected: unknown) {
  const told = (l: string): boolean =>
    isListChanged(l) && isDeepStrictEqual(JSON.parse(l), expected);
  await waitFor(() => since().some(told), BOUND_MS, `the change told (${since()})`);
  host.child.stdin.write(LIST_AGAIN);
  await waitFor(() => since().some(answers(9)), BOUND_MS, "the tools listed again");
}

describe("after a hand-over restart, a 2026-07-28 host is told of a tools change on its stream", () => {
  let home: TestHome;
  const hosts: RawHost[] = [];
  const toolsFile = (): string => join(home.dir, "moving-tools.txt");
  const lockPath = (): string => join(home.socketPath, "..", "mcpool.lock");

  afterEach(async () => {
    for (const host of hosts.splice(0)) host.child.kill();
    if (home !== undefined) {
      rmSync(lockPath(), { force: true });
      await stopAll(daemonsFor(home.socketPath));
    }
  });

  /** A pool of a 2026-07-28 server and a 2025 one whose list a file changes, its daemon up. */
  const pool = async (): Promise<void> => {
    home = fleet.home("mcpool-reconnect-");
    home.writeConfig({
      // Its list is public (a cold entry may answer from it): the pool's recording is kept.
      modern: { command: process.execPath, args: [fixture("modern-cached.mjs")] },
      moving: {
        command: process.execPath,
        args: [fixture("echo.mjs")],
        env: { FIXTURE_TOOLS_FILE: toolsFile() },
      },
    });
    await fleet.daemon(home);
    const agent = await fleet.agent(home, "ready");
    await waitFor(
      async () => (await agent.state()).every((s) => s.status === "ready"),
      BOUND_MS,
      "both servers to be ready",
    );
    await agent.close();
    await waitFor(() => existsSync(scopeSocket(home, [])), BOUND_MS, "the pool's MCP socket");
  };

  /** Whether the daemon recorded the pool's answers to a `server/discover` opening. */
  const recorded = (): boolean => {
    const path = join(home.env.XDG_DATA_HOME!, "mcpool", "cold-answers-pool", "pool.json");
    if (!existsSync(path)) return false;
    const { openings } = JSON.parse(readFileSync(path, "utf8")) as {
      openings: { request: string; lists: unknown[] }[];
    };
    return openings.some((o) => o.request.includes('"server/discover"') && o.lists.length > 0);
  };

  /** This process holds the daemon's instance lock: every daemon started gives way. */
  const holdLock = (): void => {
    const startTime = readProcessStat(process.pid)?.startTime ?? null;
    const record = { pid: process.pid, startTime, nonce: "00000000feedbeef" };
    writeFileSync(lockPath(), `${JSON.stringify(record)}\n`, { flag: "wx", mode: 0o600 });
  };

  /** The host's opening answered from the recording while no daemon serves, then served. */
  const openCold = async (host: RawHost, warm: string[]): Promise<void> => {
    host.child.stdin.write(DISCOVER + LIST);
    // Answers are matched by id: the discovery may be answered after the listing sent with
    // it (it waits for what the listing runs on), from the recording before it.
    expect((await host.next(2)).sort()).toEqual([...warm].sort());
    // This process held the daemon's instance lock: no daemon served these answers.
    expect(existsSync(lockPath())).toBe(true);
    rmSync(lockPath());
  };

  /** The catalog changed, then `mcpool restart`: the host's lines from then on. */
  const restart = async (host: RawHost): Promise<() => string[]> => {
    writeFileSync(toolsFile(), "added_since\n");
    const from = host.lines.length;
    const old = daemonsFor(home.socketPath);
    const result = await runCliAsync(home, "restart", "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    await waitFor(() => old.every((pid) => !alive(pid)), BOUND_MS, "the old daemon to exit");
    return () => host.lines.slice(from);
  };

  for (const via of ["lean", "perl"] as const) {
    for (const opening of ["warm", "cold"] as const) {
      it(
        `through the ${via} entry, a host that opened ${opening}`,
        async () => {
          const expected = await directNotice();
          expect(expected).toMatchObject({
            params: { _meta: { "io.modelcontextprotocol/subscriptionId": STREAM } },
          });
          await pool();
          let host: RawHost;
          if (opening === "warm") {
            host = rawHost(home, via, "@pool");
            hosts.push(host);
            host.child.stdin.write(DISCOVER);
          } else {
            const recorder = rawHost(home, "lean", "@pool");
            hosts.push(recorder);
            recorder.child.stdin.write(DISCOVER + LIST);
            const warm = await recorder.next(2);
            await waitFor(recorded, BOUND_MS, "the daemon to record the pool's opening");
            recorder.child.stdin.end();
            await stopAll(daemonsFor(home.socketPath));
            holdLock();
            host = rawHost(home, via, "@pool");
            hosts.push(host);
            await openCold(host, warm);
          }
          host.child.stdin.write(LISTEN);
          await waitFor(() => host.lines.some(acknowledged), BOUND_MS, "the listen's ack");
          expect(parsed(host.lines.find(acknowledged)!).params).toMatchObject({
            notifications: { toolsListChanged: true },
          });
          const since = await restart(host);
          await toldThenListed(host, since, expected);
          expect(
            since()
              .filter(isListChanged)
              .map((l) => JSON.parse(l) as unknown),
          ).toEqual(
            since()
              .filter(isListChanged)
              .map(() => expected),
          );
        },
        TEST_MS,
      );
    }
  }

  for (const via of ["lean", "perl"] as const) {
    it(
      `through the ${via} entry, a stream whose id the host wrote as 7.0 (the daemon's 7)`,
      async () => {
        const expected = await directNotice(LISTEN_7);
        expect(expected).toMatchObject({
          params: { _meta: { "io.modelcontextprotocol/subscriptionId": 7 } },
        });
        await pool();
        const host = rawHost(home, via, "@pool");
        hosts.push(host);
        // The discovery's id written as 1.0 too: the daemon answers it as 1.
        host.child.stdin.write(DISCOVER.replace('"id":1,', '"id":1.0,') + LISTEN_7);
        await waitFor(() => host.lines.some(acknowledged), BOUND_MS, "the listen's ack");
        await waitFor(() => host.lines.some(answers(1)), BOUND_MS, "the discovery's answer");
        const since = await restart(host);
        await toldThenListed(host, since, expected);
        // The new daemon's acknowledgement of the stream sent again is the entry's: dropped.
        expect(host.lines.filter(acknowledged)).toHaveLength(1);
        expect(since().filter(isListChanged)).toHaveLength(1);
        // The discovery was answered: the loss answers it no second time (as in flight).
        expect(host.lines.filter(answers(1))).toHaveLength(1);
      },
      TEST_MS,
    );
  }
});

describe("after a hand-over restart, a host whose discovery was refused is told unsolicited", () => {
  let home: TestHome;
  const hosts: RawHost[] = [];

  afterEach(async () => {
    for (const host of hosts.splice(0)) host.child.kill();
    if (home !== undefined) await stopAll(daemonsFor(home.socketPath));
  });

  /** A daemon serving a legacy row whose list a file changes, and a host whose discovery it refused. */
  const refusedHost = async (
    via: "lean" | "perl",
  ): Promise<{ host: RawHost; toolsFile: string }> => {
    home = fleet.home("mcpool-reconnect-legacy-");
    const toolsFile = join(home.dir, "moving-tools.txt");
    home.writeConfig({
      moving: {
        command: process.execPath,
        args: [fixture("echo.mjs")],
        env: { FIXTURE_TOOLS_FILE: toolsFile },
      },
    });
    await fleet.daemon(home);
    const socket = scopeSocket(home, ["--server", "moving"]);
    await waitFor(() => existsSync(socket), BOUND_MS, "the row's MCP socket");
    const host = rawHost(home, via, "moving");
    hosts.push(host);
    // A legacy server's row refuses discovery: the host is served as a 2025 one.
    host.child.stdin.write(DISCOVER);
    await waitFor(() => host.lines.some(answers(1)), BOUND_MS, "the discovery's answer");
    expect(parsed(host.lines.find(answers(1))!)).toHaveProperty("error");
    return { host, toolsFile };
  };

  /**
   * The list changed, then `mcpool restart`: the host's lines from then on, once it was told
   * `told` list changes and then listed again (whatever the entry said on reconnecting has
   * reached the host by then).
   */
  const changeAndRestart = async (
    host: RawHost,
    toolsFile: string,
    told: number,
  ): Promise<string[]> => {
    writeFileSync(toolsFile, "added_since\n");
    const from = host.lines.length;
    const old = daemonsFor(home.socketPath);
    const result = await runCliAsync(home, "restart", "--json");
    expect(result.code).toBe(0);
    await waitFor(() => old.every((pid) => !alive(pid)), BOUND_MS, "the old daemon to exit");
    const since = (): string[] => host.lines.slice(from);
    await waitFor(
      () => since().filter(isListChanged).length >= told,
      BOUND_MS,
      `the change told (${since()})`,
    );
    host.child.stdin.write(LIST_AGAIN);
    await waitFor(
      () => host.lines.slice(from).some(answers(9)),
      BOUND_MS,
      "the tools listed again",
    );
    return host.lines.slice(from);
  };

  for (const via of ["lean", "perl"] as const) {
    it(
      `through the ${via} entry, though its later requests carry the 2026-07-28 envelope`,
      async () => {
        const { host, toolsFile } = await refusedHost(via);
        // It falls back to 2025 as a dual-era host does, yet its requests keep the envelope.
        const init = {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "dual-host", version: "1.0.0" },
        };
        host.child.stdin.write(line({ jsonrpc: "2.0", id: 3, method: "initialize", params: init }));
        await waitFor(() => host.lines.some(answers(3)), BOUND_MS, "the initialize's answer");
        host.child.stdin.write(line({ jsonrpc: "2.0", method: "notifications/initialized" }));
        host.child.stdin.write(LIST);
        await waitFor(() => host.lines.some(answers(2)), BOUND_MS, "the tools listed");
        const since = await changeAndRestart(host, toolsFile, 1);
        expect(since.filter(isListChanged).map((l) => JSON.parse(l) as unknown)).toEqual([
          { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
        ]);
      },
      TEST_MS,
    );

    it(
      `through the ${via} entry, though it never sent initialize (as a server direct tells it)`,
      async () => {
        const direct = await directRefusedNotice();
        expect(direct).toHaveLength(1);
        const { host, toolsFile } = await refusedHost(via);
        // It lists without falling back: the daemon serves it as the 2025 host it decided.
        host.child.stdin.write(LIST);
        await waitFor(() => host.lines.some(answers(2)), BOUND_MS, "the tools listed");
        const since = await changeAndRestart(host, toolsFile, direct.length);
        expect(since.filter(isListChanged).map((l) => JSON.parse(l) as unknown)).toEqual(
          direct.map((l) => JSON.parse(l) as unknown),
        );
      },
      TEST_MS,
    );
  }
});
