/**
 * The official MCP conformance server suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
 * pinned; `conformance server --requirements <revision>`, the scenarios that revision requires,
 * and the ones it does not score) through each path a host can be given, in front of a real
 * daemon pooling a fixture over stdio — every hop real. The paths (ENTRIES):
 * - `mcpool bridge --server fixture --http`, the bridge's own Streamable HTTP, both eras;
 * - the perl pipe `mcpool wire` writes (`perl …/relay/mcpool-pipe.pl ID <socket> <node>`), the
 *   lean `mcpool bridge --server fixture` (a byte pipe to the daemon's MCP socket) and the full
 *   CLI's (the SDK bridge on stdio, where the lean one hands over without a socket), each a
 *   stdio entry the runner reaches through a relay of transports that reads no message, one
 *   spawned entry per session: test/helpers/stdio-over-http.ts for a 2025-11-25 runner,
 *   test/helpers/modern-stdio-over-http.ts (SDK v2's own modern HTTP binding, every request
 *   written to the entry as it came and its answer returned as it is) for a 2026-07-28 one.
 *
 * The servers (SERVERS), each through every path:
 * - conformance-server.mjs, a 2025-11-25-only server, to a 2025-11-25 runner;
 * - conformance-modern.mjs, a 2026-07-28-only server, to a 2026-07-28 runner;
 * - conformance-dual.mjs (the modern server also answering `initialize`) to a 2026-07-28
 *   runner, its row on `auto` and pinned to `"2026-07-28"`;
 * - conformance-eras.mjs (a session opened by `initialize` is conformance-server.mjs, any other
 *   conformance-modern.mjs: a server of both eras whose 2025-11-25 face is whole, as the suite's
 *   own example server's is) to a 2025-11-25 runner, its row on `auto` and pinned to `"legacy"`.
 *
 * Each run is held to two things. Direct is the oracle: the same runner is run against the
 * server itself (behind the same relay, no pool), and every scenario that passes there, scored
 * or not, must pass through the pool. And every scenario the revision requires (read from the
 * package's own requirements file, so the count cannot drift from the pinned suite) must pass.
 * A run's `differs` names the scenarios that do not yet, each with why; one of those passing
 * fails the run too (the list is then stale).
 *
 * - The runner's client cannot send an Authorization header (it builds its transport from
 *   the URL alone), so the HTTP side runs with no token: loopback only, Host/Origin still
 *   checked — which is what its dns-rebinding-protection scenario tests.
 * - The runs are independent (each its own home, daemon and entry) and run side by side; the
 *   direct run of a server and revision is run once, however many runs compare with it. The
 *   runner is loaded once per run going at once (conformance-server-suite.ts's lanes).
 */
import { existsSync } from "node:fs";
import type { PoolClient } from "mcpool-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeCommand, httpBridge, scopeSocket, type BridgePath } from "../helpers/bridge.js";
import {
  client as poolClient,
  startDaemon,
  testHome,
  type RunningDaemon,
  type TestHome,
} from "../helpers/daemon.js";
import { requirements } from "../helpers/conformance-runner.js";
import {
  direct,
  LEGACY,
  MODERN,
  onlyWindowed,
  relayFront,
  rerun,
  runSuite,
  serverRunners,
  SUITE_TIMEOUT_MS,
  windowedNote,
  type Front,
  type Revision,
  type ScenarioResult,
} from "../helpers/conformance-server-suite.js";
import { fixture, waitFor } from "../helpers/processes.js";

/** A path a host can be given, and how the runner reaches it at a revision. */
interface Entry {
  name: string;
  front(home: TestHome, revision: Revision): Promise<Front>;
}

const ENTRIES: Entry[] = [
  {
    name: "mcpool bridge --server fixture --http",
    async front(home) {
      const bridge = await httpBridge(home, ["--server", "fixture", "--token", "none"]);
      return { url: bridge.url, stop: () => bridge.stop() };
    },
  },
  {
    name: "the perl pipe mcpool wire writes",
    front: (home, revision) => stdioFront(home, "perl", revision),
  },
  {
    name: "the lean mcpool bridge --server fixture",
    front: (home, revision) => stdioFront(home, "lean", revision),
  },
  {
    name: "the full CLI's mcpool bridge --server fixture on stdio",
    front: (home, revision) => stdioFront(home, "sdk", revision),
  },
];

/** The stdio entry a host would spawn on `via`, behind the relay of `revision`'s binding. */
async function stdioFront(home: TestHome, via: BridgePath, revision: Revision): Promise<Front> {
  const args = ["--server", "fixture", "--socket", home.socketPath];
  await waitFor(() => existsSync(scopeSocket(home, args)), 10_000, "the fixture's MCP socket");
  return relayFront({ ...bridgeCommand(home, args, via), env: home.env }, revision);
}

/** A server, the revision its runner speaks, and its row's `protocol` and known differences. */
interface Server {
  revision: Revision;
  server: string;
  /** The row's `protocol`: absent, `auto`. */
  protocol?: "legacy" | "2026-07-28";
  /** Scenarios that do not pass through the pool yet, each with why. */
  differs?: Record<string, string>;
}

/**
 * The 2025-11-25 runs first: the runner opens a session per scenario, and a stdio entry is
 * spawned per session, so they take the longest; started first, they end with the rest.
 */
const SERVERS: Server[] = [
  { revision: LEGACY, server: "conformance-server.mjs" },
  { revision: LEGACY, server: "conformance-eras.mjs" },
  { revision: LEGACY, server: "conformance-eras.mjs", protocol: "legacy" },
  { revision: MODERN, server: "conformance-modern.mjs" },
  { revision: MODERN, server: "conformance-dual.mjs" },
  { revision: MODERN, server: "conformance-dual.mjs", protocol: "2026-07-28" },
];

/** Every server through every path, named for the report. */
const RUNS = SERVERS.flatMap((server) =>
  ENTRIES.map((entry) => ({
    ...server,
    entry,
    through: `${entry.name}${server.protocol === undefined ? "" : `, its row pinned to ${server.protocol}`}`,
  })),
);

/** The report line of one scenario. */
function line(result: ScenarioResult, required: string[], atDirect?: ScenarioResult): string {
  const mark = result.failed.length === 0 ? "pass" : "FAIL";
  const why = result.failed.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`).join("; ");
  const scored = required.includes(result.scenario) ? "" : " (not scored)";
  const there =
    atDirect === undefined
      ? ""
      : atDirect.failed.length === 0
        ? ", direct passes"
        : ", direct fails";
  return `${mark}  ${result.scenario}${scored}  (${result.passed} checks passed, ${result.failed.length} failed, ${result.warnings} warnings${there})${why ? `  ${why}` : ""}`;
}

afterAll(() => serverRunners.close());

describe.concurrent.each(RUNS)(
  "the MCP conformance server suite at $revision ($server) through $through",
  ({ revision, server, protocol, differs = {}, entry }) => {
    let home: TestHome;
    let daemon: RunningDaemon;
    let front: Front;

    beforeAll(async () => {
      home = testHome("mcpool-conformance-");
      home.writeConfig({
        fixture: {
          command: process.execPath,
          args: [fixture(server)],
          ...(protocol === undefined ? {} : { protocol }),
        },
      });
      daemon = await startDaemon(home);
      const pool: PoolClient = await poolClient(home);
      await pool.close();
      front = await entry.front(home, revision);
    }, 120_000);

    afterAll(async () => {
      await front?.stop();
      await daemon?.stop();
      home?.remove();
    });

    it(
      "passes every scenario it passes direct and every one its revision requires",
      async () => {
        const oracle = direct(revision, server);
        const run = await runSuite(front.url, ["--requirements", revision]);
        const atDirect = await oracle;
        const { results } = run;
        const required = requirements(revision).server;
        const ran = new Set(results.map((r) => r.scenario));
        expect(required.length).toBeGreaterThan(0);
        expect(
          required.filter((name) => !ran.has(name)),
          run.output.slice(-4000),
        ).toEqual([]);

        const passing = results.filter((r) => r.failed.length === 0);
        const passingDirect = [...atDirect.values()].filter((r) => r.failed.length === 0);
        // The per-scenario report, in the test's output.
        console.log(
          [
            `conformance ${revision} (${server}) through ${entry.name}${protocol ? `, pinned to ${protocol}` : ""}: ` +
              `${passing.filter((r) => required.includes(r.scenario)).length}/${required.length} required scenarios, ` +
              `${passing.length} of ${results.length} scenarios (direct: ${passingDirect.length} of ${atDirect.size}), ` +
              `${results.reduce((sum, r) => sum + r.passed, 0)} checks passed`,
            ...results.map((r) => line(r, required, atDirect.get(r.scenario))),
          ].join("\n"),
        );

        const held = (r: ScenarioResult): boolean =>
          required.includes(r.scenario) || atDirect.get(r.scenario)?.failed.length === 0;
        const failed = results.filter(
          (r) => r.failed.length > 0 && held(r) && !(r.scenario in differs),
        );
        const failing: string[] = [];
        for (const result of failed) {
          const again = onlyWindowed(result)
            ? await rerun(front.url, result.scenario, revision)
            : result;
          if (again.failed.length === 0) {
            console.log(`pass  ${result.scenario} when run again alone (${windowedNote(result)})`);
            continue;
          }
          const there = atDirect.get(result.scenario);
          const note = there?.failed.length === 0 ? "passes direct" : "fails direct too";
          failing.push(
            `${again.scenario} (${note}): ${again.failed.map((c) => c.errorMessage).join("; ")}`,
          );
        }
        expect(failing).toEqual([]);
        const closed = results
          .filter((r) => r.scenario in differs && r.failed.length === 0)
          .map((r) => r.scenario);
        expect(closed, "a known difference passes now: take it off its list").toEqual([]);
      },
      3 * SUITE_TIMEOUT_MS + 30_000,
    );
  },
);
