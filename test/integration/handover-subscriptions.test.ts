/**
 * A host's resource subscriptions across `mcpool restart` (the hand-over), against the same
 * session where nothing restarts: a host subscribed to note://1 of test/fixtures/log-levels.mjs
 * keeps getting `notifications/resources/updated` after the hand-over without subscribing
 * again, and its unsubscribe after it ends them. The server is sent what it is sent direct:
 * one subscribe, one unsubscribe (the adopted child is the same process, and its subscription
 * never ended). Through each entry — `mcpool bridge` (the SDK bridge), the lean bridge and the
 * perl relay — for a 2025 host (`resources/subscribe`, compared with the session direct) and a
 * 2026-07-28 host (`subscriptions/listen`, whose one stream carries the updates again;
 * compared with the same session through a pool that does not restart, the fixture being a
 * 2025 server, pooled beside a 2026-07-28 one so that such a host is served in its era). And a hand-over that fails: the old daemon serves on, and the host, its entry
 * back on it, sees the same as direct. And an update the server sends as the new daemon lists
 * its adopted child's tools, before the new daemon has taken the subscriptions up, reaches the
 * host once, as the same update reaches it direct. And with two hosts of one URI through the
 * lean bridge or the perl relay — one subscribed before the hand-over, whose entry comes back
 * only after the other, new one subscribed — the update the first missed goes to it alone,
 * as direct: its entry names its host the same on each connection.
 */
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  MODERN,
  BRIDGE_PATHS,
  bridgeCommand,
  stdioBridge,
  stringEnv,
  type BridgePath,
} from "../helpers/bridge.js";
import {
  installedCli,
  runCli,
  runCliAsync,
  startDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { useFleet } from "../helpers/fleet.js";
import { alive, daemonsFor, fixture, stopAll, waitFor } from "../helpers/processes.js";
import { stdioOverHttp } from "../helpers/stdio-over-http.js";

const fleet = useFleet();
const BOUND_MS = 20_000;
const TEST_MS = 120_000;
const server = { command: process.execPath, args: [fixture("log-levels.mjs")] };

/** What a host does and sees; `restart` runs between its two touches (direct: nothing). */
interface Seen {
  updated: string[];
  touches: string[];
  sent: string;
}

/** The tool answer's text. */
function text(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("");
}

/** The session's host side, whatever its era: a call, and how it subscribes and lets go. */
interface HostSession {
  call(name: string): Promise<string>;
  subscribe(): Promise<void>;
  unsubscribe(): Promise<void>;
  updated: string[];
}

/**
 * subscribe (held by the server once answered), touch (an update), `between` (the
 * hand-over), touch (an update, with no subscribe again), unsubscribe, touch (none), and
 * what the server was sent.
 */
async function session(host: HostSession, between: () => Promise<void>): Promise<Seen> {
  const touches: string[] = [];
  const touch = async (): Promise<void> => void touches.push(await host.call("touch"));
  await host.subscribe();
  // Answered (or, in 2026-07-28, acknowledged) once the server holds it, as direct.
  expect(await host.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
  await touch();
  await waitFor(() => host.updated.length === 1, BOUND_MS, `the first update (${touches})`);
  await between();
  await touch();
  await waitFor(() => host.updated.length === 2, BOUND_MS, `an update after (${touches})`);
  await host.unsubscribe();
  // A 2026-07-28 host's unsubscribe is its stream's end, a notification: through the pool it
  // reaches the server as its own request, which a call sent next may overtake (direct, one
  // pipe keeps them in order). The touch after it waits until the server has heard it.
  await waitFor(
    async () => (await host.call("subscribes")) === "subscribes 1 unsubscribes 1",
    BOUND_MS,
    "the server to hear the unsubscribe",
  );
  await touch();
  // One more round trip: an update on its way has arrived.
  const sent = await host.call("subscribes");
  return { updated: [...host.updated], touches, sent };
}

function legacyHost(client: Client): HostSession {
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  return {
    updated,
    call: async (name) => text(await client.callTool({ name, arguments: {} })),
    subscribe: async () => void (await client.subscribeResource({ uri: "note://1" })),
    unsubscribe: async () => void (await client.unsubscribeResource({ uri: "note://1" })),
  };
}

/** A modern host on the pool's scope, where `talk`'s tools are `talk__…`. */
function modernHost(client: ModernClient): HostSession {
  const updated: string[] = [];
  client.setNotificationHandler("notifications/resources/updated", (notification) => {
    updated.push(String((notification.params as { uri?: unknown }).uri));
  });
  let stream: Awaited<ReturnType<ModernClient["listen"]>> | undefined;
  return {
    updated,
    call: async (name) => text(await client.callTool({ name: `talk__${name}`, arguments: {} })),
    subscribe: async () => {
      stream = await client.listen({ resourceSubscriptions: ["note://1"] });
    },
    unsubscribe: async () => {
      await stream?.close();
    },
  };
}

const nothing = async (): Promise<void> => undefined;

/** The session direct to the fixture: the oracle. */
async function direct(): Promise<Seen> {
  const client = new Client({ name: "direct", version: "1.0.0" });
  await client.connect(new StdioClientTransport(server));
  try {
    return await session(legacyHost(client), nothing);
  } finally {
    await client.close();
  }
}

/** A 2025 host through `via` on `talk`'s MCP socket, its session run with `between`. */
async function bridgedSession(
  home: TestHome,
  via: BridgePath,
  between: () => Promise<void>,
): Promise<Seen> {
  const host = await stdioBridge(home, ["--server", "talk"], {}, via);
  try {
    return await session(legacyHost(host.client), between);
  } finally {
    await host.close();
  }
}

/** A 2026-07-28 host through `via`, its session run with `between` as its hand-over. */
async function modernSession(
  home: TestHome,
  via: BridgePath,
  between: () => Promise<void>,
): Promise<Seen> {
  const transport = new ModernStdio({
    ...bridgeCommand(home, [], via),
    env: stringEnv(home.env),
    stderr: "pipe",
  });
  const client = new ModernClient({ name: `modern-${via}`, version: "1.0.0" }, MODERN);
  await client.connect(transport);
  const pid = transport.pid;
  try {
    expect(client.getProtocolEra()).toBe("modern");
    return await session(modernHost(client), between);
  } finally {
    await client.close().catch(() => undefined);
    if (pid !== null) await waitFor(() => !alive(pid), BOUND_MS, "the entry to exit");
  }
}

/**
 * `talk` serving, its capabilities known, as a server direct has them from the start: a
 * bridge that opens before its server has started offers no resource subscriptions.
 */
async function talkReady(home: TestHome): Promise<void> {
  const agent = await fleet.agent(home, "ready");
  await waitFor(
    async () => (await agent.state()).every((s) => s.status === "ready"),
    BOUND_MS,
    "talk to be ready",
  );
}

/**
 * A daemon serving `talk`, and the hand-over `mcpool restart` that keeps its child. For a
 * 2026-07-28 host (`era: "modern"`) a 2026-07-28 server beside it: a pool whose servers all
 * speak only 2025 serves its hosts as such a server does direct.
 */
async function pool(
  era: "legacy" | "modern" = "legacy",
  talk: typeof server = server,
): Promise<{ home: TestHome; restart(): Promise<void> }> {
  const home = fleet.home();
  const modern = { command: process.execPath, args: [fixture("modern-cached.mjs")] };
  home.writeConfig(era === "modern" ? { talk, cached: modern } : { talk });
  await fleet.daemon(home);
  await talkReady(home);
  return {
    home,
    async restart() {
      const old = daemonsFor(home.socketPath);
      const restart = runCli(home, "restart", "--json");
      expect(restart.stderr).toBe("");
      expect(restart.code).toBe(0);
      expect((JSON.parse(restart.stdout) as { adopted: string[] }).adopted).toContain("talk");
      await waitFor(() => old.every((pid) => !alive(pid)), BOUND_MS, "the old daemon to exit");
    },
  };
}

/**
 * Direct, two sessions of one server: the first subscribes, the server sends an update (its
 * second tools/list), then the second subscribes; what each heard, after a round trip.
 */
async function directPair(listing: typeof server): Promise<{ had: string[]; came: string[] }> {
  const session = async (lists: number): Promise<string[]> => {
    const client = new Client({ name: "direct", version: "1.0.0" });
    await client.connect(new StdioClientTransport(listing));
    try {
      const host = legacyHost(client);
      await host.subscribe();
      for (let n = 0; n < lists; n++) await client.listTools();
      await host.call("subscribes");
      return [...host.updated];
    } finally {
      await client.close();
    }
  };
  // The second session's own server sends its update only on a second listing: it lists once.
  return { had: await session(2), came: await session(1) };
}

describe("a host's resource subscriptions across a hand-over restart", () => {
  for (const via of ["lean", "perl"] as const) {
    it(
      `gives the update missed across the hand-over to the ${via} entry's host that had the place, not to a newer one`,
      async () => {
        const listing = { ...server, args: [...server.args, "--update-on-list=2"] };
        const expected = await directPair(listing);
        expect(expected).toEqual({ had: ["note://1"], came: [] });
        const { home, restart } = await pool("legacy", listing);
        try {
          const had = await stdioBridge(home, ["--server", "talk"], {}, via);
          const hadHost = legacyHost(had.client);
          try {
            await hadHost.subscribe();
            expect(await hadHost.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
            // Its entry sleeps through the hand-over: it dials the new daemon only once woken.
            const pid = had.transport.pid!;
            process.kill(pid, "SIGSTOP");
            let came: Awaited<ReturnType<typeof stdioBridge>> | undefined;
            try {
              // The new daemon lists the adopted child: the server sends its update then.
              await restart();
              came = await stdioBridge(home, ["--server", "talk"], {}, via);
              const cameHost = legacyHost(came.client);
              await cameHost.subscribe();
              // The subscription lives on in the same child: no second subscribe upstream.
              expect(await cameHost.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
              process.kill(pid, "SIGCONT");
              await waitFor(() => hadHost.updated.length > 0, BOUND_MS, "the missed update");
              // A round trip each: an update on its way has arrived.
              await hadHost.call("subscribes");
              await cameHost.call("subscribes");
              expect({ had: hadHost.updated, came: cameHost.updated }).toEqual(expected);
            } finally {
              process.kill(pid, "SIGCONT");
              await came?.close();
            }
          } finally {
            await had.close();
          }
        } finally {
          await stopAll(daemonsFor(home.socketPath));
        }
      },
      TEST_MS,
    );
  }

  it(
    "a 2025 host of an http row sees what it sees direct: the moved session's subscription is taken up",
    async () => {
      const expected = await direct();
      // The same fixture behind Streamable HTTP: one child per session, and the session moves.
      const remote = await stdioOverHttp(server);
      const home = fleet.home();
      home.writeConfig({ talk: { type: "http", url: remote.url, protocol: "legacy" } });
      try {
        await fleet.daemon(home);
        // An http row is dialled on its first use: this one, before the bridge opens.
        await (await fleet.agent(home, "first")).call("talk__subscribes");
        await talkReady(home);
        // Beside the test, not blocking it: this process serves the http row.
        const restart = async (): Promise<void> => {
          const old = daemonsFor(home.socketPath);
          const handed = await runCliAsync(home, "restart", "--json");
          expect(handed.stderr).toBe("");
          expect(handed.code).toBe(0);
          await waitFor(() => old.every((pid) => !alive(pid)), BOUND_MS, "the old daemon to exit");
        };
        // The entry's subscribe again after the restart takes the kept place: the server
        // (the same child, behind the same session) is sent one subscribe, as direct.
        expect(await bridgedSession(home, "sdk", restart)).toEqual(expected);
      } finally {
        await stopAll(daemonsFor(home.socketPath));
        await remote.close();
      }
    },
    TEST_MS,
  );

  for (const via of BRIDGE_PATHS) {
    it(
      `a 2025 host through the ${via} entry sees what it sees direct when the hand-over fails`,
      async () => {
        const expected = await direct();
        const home = fleet.home();
        home.writeConfig({ talk: server });
        // The installed code the restart starts, until an "upgrade" that cannot start.
        const installed = installedCli(home);
        const old = await startDaemon(home, [], { bin: installed });
        try {
          await talkReady(home);
          const host = await stdioBridge(home, ["--server", "talk"], {}, via);
          const failed = async (): Promise<void> => {
            writeFileSync(installed, "process.exit(7);\n");
            const restart = runCli(home, "restart");
            expect(restart.code).toBe(1);
            expect(restart.stderr).toContain("so this one serves on");
          };
          try {
            expect(await session(legacyHost(host.client), failed)).toEqual(expected);
            expect(daemonsFor(home.socketPath)).toEqual([old.pid]);
          } finally {
            await host.close();
          }
        } finally {
          await old.stop();
          await stopAll(daemonsFor(home.socketPath));
        }
      },
      TEST_MS,
    );

    it(
      `a 2025 host through the ${via} entry sees what it sees direct`,
      async () => {
        const expected = await direct();
        expect(expected.updated).toEqual(["note://1", "note://1"]);
        expect(expected.sent).toBe("subscribes 1 unsubscribes 1");
        const { home, restart } = await pool();
        try {
          expect(await bridgedSession(home, via, restart)).toEqual(expected);
        } finally {
          await stopAll(daemonsFor(home.socketPath));
        }
      },
      TEST_MS,
    );

    it(
      `a 2026-07-28 host through the ${via} entry hears on its listen stream what it hears direct`,
      async () => {
        // `talk` speaks 2025 only: the oracle is the same session where nothing
        // restarts, through a pool of its own, and it is what a 2025 host sees direct.
        const unrestarted = await pool("modern");
        let expected: Seen;
        try {
          expected = await modernSession(unrestarted.home, via, nothing);
        } finally {
          await stopAll(daemonsFor(unrestarted.home.socketPath));
        }
        expect(expected.updated).toEqual(["note://1", "note://1"]);
        expect(expected.sent).toBe("subscribes 1 unsubscribes 1");
        const { home, restart } = await pool("modern");
        try {
          expect(await modernSession(home, via, restart)).toEqual(expected);
        } finally {
          await stopAll(daemonsFor(home.socketPath));
        }
      },
      TEST_MS,
    );
  }

  it(
    "a 2025 host through the sdk entry hears the update the server sent as the new daemon listed its tools",
    async () => {
      // The fixture sends the update just before it answers its second tools/list: direct,
      // the host's second listing; through the pool, the new daemon's listing of the child it
      // adopted (the old daemon listed it once, as it started it).
      const listing = { ...server, args: [...server.args, "--update-on-list=2"] };
      const client = new Client({ name: "direct", version: "1.0.0" });
      await client.connect(new StdioClientTransport(listing));
      let expected: string[];
      try {
        const directHost = legacyHost(client);
        await directHost.subscribe();
        await client.listTools();
        await client.listTools();
        // One more round trip: an update on its way has arrived.
        expect(await directHost.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
        expected = [...directHost.updated];
      } finally {
        await client.close();
      }
      expect(expected).toEqual(["note://1"]);
      const { home, restart } = await pool("legacy", listing);
      try {
        const host = await stdioBridge(home, ["--server", "talk"], {}, "sdk");
        try {
          const pooled = legacyHost(host.client);
          await pooled.subscribe();
          // A round trip first: no update came before the restart (the old daemon did not
          // list the child again), so the one after it is the new daemon's listing's.
          expect(await pooled.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
          expect(pooled.updated).toEqual([]);
          await restart();
          await waitFor(() => pooled.updated.length > 0, BOUND_MS, "the update after the restart");
          expect(await pooled.call("subscribes")).toBe("subscribes 1 unsubscribes 0");
          expect(pooled.updated).toEqual(expected);
        } finally {
          await host.close();
        }
      } finally {
        await stopAll(daemonsFor(home.socketPath));
      }
    },
    TEST_MS,
  );
});
