/**
 * The official MCP conformance server suite
 * (@modelcontextprotocol/conformance 0.2.0-alpha.12, pinned; `conformance server
 * --requirements 2025-11-25`, the scenarios that revision requires) through each
 * path a host can be given, in front of a real daemon pooling
 * test/fixtures/conformance-server.mjs over stdio — every hop real:
 * - `mcpool bridge --server fixture --http`, the bridge's own Streamable HTTP;
 * - the perl pipe `mcpool wire` writes (`perl …/relay/mcpool-pipe.pl ID <socket> <node>`) and the lean `mcpool
 *   bridge --server fixture` (a byte pipe to the daemon's MCP socket), each a stdio entry the
 *   runner reaches through test/helpers/stdio-over-http.ts, a relay of transports that reads
 *   no message, one spawned entry per session.
 *
 * - The runner imports `fs.globSync`, which Node 20 lacks: it runs under
 *   test/helpers/node20-glob-sync.mjs (`--import`).
 * - The runner's client cannot send an Authorization header (it builds its transport from
 *   the URL alone), so the HTTP side runs with no token: loopback only, Host/Origin still
 *   checked — which is what its dns-rebinding-protection scenario tests.
 *
 * And `--requirements 2026-07-28` through the same three paths in front of
 * test/fixtures/conformance-modern.mjs, a modern-only server (and through `--http` in front of
 * conformance-dual.mjs, the same server speaking both eras):
 * a modern runner, the bridge's modern side, the pool's modern upstream. The stdio entries
 * are reached through test/helpers/modern-stdio-over-http.ts: the modern HTTP binding is
 * SDK v2's there, every request goes to the entry as it came and its answer comes back as
 * it is.
 *
 * And `--requirements 2025-11-25` in front of conformance-eras.mjs, a server of both eras whose
 * 2025-11-25 face is whole (through `--http` and the lean bridge, its row on `auto`; through
 * `--http` pinned to 2025-11-25), held to the server itself: the runner is run direct against
 * it too, and each required scenario it passes there must pass through the pool, but those
 * the run names as differing, each with why.
 *
 * Every other run: every scenario the revision requires (read from the package's own requirements file, so
 * the count cannot drift from the pinned suite) must pass but the KNOWN_GAPS, each with its
 * reason; the runner's not-scored ones (`extension`, `added-after-release`, `pending`) run
 * too and are reported, not counted.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
import { requirements, RUNNER as runner } from "../helpers/conformance-runner.js";
import { fixture, waitFor } from "../helpers/processes.js";
import { stdioOverHttp } from "../helpers/stdio-over-http.js";
import { modernStdioOverHttp } from "../helpers/modern-stdio-over-http.js";

const preload = fileURLToPath(new URL("../helpers/node20-glob-sync.mjs", import.meta.url));

/** Bound on the whole suite: ~35 scenarios of a few hundred ms each, on a loaded machine. */
const SUITE_TIMEOUT_MS = 240_000;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: Check[];
  warnings: number;
}

/** `<out>/server-<scenario>-<timestamp>/checks.json`, one per scenario. */
function readResults(out: string): ScenarioResult[] {
  return readdirSync(out)
    .filter((dir) => existsSync(join(out, dir, "checks.json")))
    .map((dir) => {
      const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
      const checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) as Check[];
      return {
        scenario,
        passed: checks.filter((c) => c.status === "SUCCESS").length,
        failed: checks.filter((c) => c.status === "FAILURE"),
        warnings: checks.filter((c) => c.status === "WARNING").length,
      };
    })
    .sort((a, b) => a.scenario.localeCompare(b.scenario));
}

/** A way in for the runner: the URL it is given, and how to stop what serves it. */
interface Front {
  url: string;
  stop(): Promise<void>;
}

/** The paths the suite runs through, one runner each (a run takes a minute or more). */
const PATHS: [string, (home: TestHome) => Promise<Front>][] = [
  [
    "mcpool bridge --server fixture --http",
    async (home) => {
      const bridge = await httpBridge(home, ["--server", "fixture", "--token", "none"]);
      return { url: bridge.url, stop: () => bridge.stop() };
    },
  ],
  ["the perl pipe mcpool wire writes", (home) => stdioFront(home, "perl")],
  ["the lean mcpool bridge --server fixture", (home) => stdioFront(home, "lean")],
];

/** The stdio entry a host would spawn on `via`, behind the transport relay. */
async function stdioFront(home: TestHome, via: BridgePath): Promise<Front> {
  const args = ["--server", "fixture", "--socket", home.socketPath];
  await waitFor(() => existsSync(scopeSocket(home, args)), 10_000, "the fixture's MCP socket");
  const relay = await stdioOverHttp({ ...bridgeCommand(home, args, via), env: home.env });
  return { url: relay.url, stop: () => relay.close() };
}

/**
 * What a run adds: its row's settings beyond the command (`protocol`, to pin its era); and
 * `direct`, to hold the run to what the same runner gets from the server itself (behind the
 * transport relay, no pool) instead of to KNOWN_GAPS: every required scenario that passes
 * direct must pass through the pool.
 */
interface RunOptions {
  row?: Record<string, unknown>;
  direct?: boolean;
  /** Required scenarios that pass direct and not yet through the pool, each with why. */
  differs?: Record<string, string>;
}

/**
 * The runs: each revision with its own fixture (2026-07-28: test/fixtures/conformance-modern.mjs,
 * a modern-only server the pool holds in the modern era), through every path.
 */
const RUNS: [string, string, string, (home: TestHome) => Promise<Front>, RunOptions?][] = [
  ...PATHS.map(([name, start]): [string, string, string, typeof start] => [
    "2025-11-25",
    "conformance-server.mjs",
    name,
    start,
  ]),
  ["2026-07-28", "conformance-modern.mjs", PATHS[0]![0], PATHS[0]![1]],
  ["2026-07-28", "conformance-modern.mjs", PATHS[1]![0], (home) => modernStdioFront(home, "perl")],
  ["2026-07-28", "conformance-modern.mjs", PATHS[2]![0], (home) => modernStdioFront(home, "lean")],
  // The same server speaking both eras, its row on `auto`: the pool holds it in 2026-07-28.
  ["2026-07-28", "conformance-dual.mjs", PATHS[0]![0], PATHS[0]![1]],
  // A 2025-11-25 client of that server: direct, its `initialize` opens a 2025-11-25 session.
  // Its row on `auto` and pinned to 2025-11-25, each scenario it passes direct must pass.
  ["2025-11-25", "conformance-eras.mjs", PATHS[0]![0], PATHS[0]![1], { direct: true }],
  ["2025-11-25", "conformance-eras.mjs", PATHS[2]![0], PATHS[2]![1], { direct: true }],
  [
    "2025-11-25",
    "conformance-eras.mjs",
    `${PATHS[0]![0]}, its row pinned to 2025-11-25`,
    PATHS[0]![1],
    { direct: true, row: { protocol: "legacy" } },
  ],
];

/**
 * The stdio entry a modern host would spawn on `via`, behind the modern HTTP binding
 * (test/helpers/modern-stdio-over-http.ts: SDK v2's own, every request written to the entry
 * and its answer returned as it is).
 */
async function modernStdioFront(home: TestHome, via: BridgePath): Promise<Front> {
  const args = ["--server", "fixture", "--socket", home.socketPath];
  await waitFor(() => existsSync(scopeSocket(home, args)), 10_000, "the fixture's MCP socket");
  const relay = await modernStdioOverHttp({ ...bridgeCommand(home, args, via), env: home.env });
  return { url: relay.url, stop: () => relay.close() };
}

/**
 * Required scenarios of a revision that the pool cannot pass yet, each with why; any other
 * required scenario failing fails the run, and so does one of these passing (the list is
 * then stale).
 */
const KNOWN_GAPS: Record<string, Record<string, string>> = {
  "2025-11-25": {},
  "2026-07-28": {},
};

/**
 * Checks of the pinned suite that read a response stream for a fixed window of its own
 * (500–1,500 ms, an AbortController in the runner) and fail when too few frames came in it.
 * On a loaded machine a call through the entry, the daemon and the child can take longer
 * than that window, so a scenario that failed only such checks is run again alone, up to
 * RERUNS times; a failure of any other check counts at once, and so does one that fails
 * every run.
 */
const WINDOWED_CHECKS = [
  "Failed to receive progressive stream chunk execution frames",
  "Logging target endpoint context dropped or failed to yield frame structures",
  "Failed to open or receive frames from the subscriptions/listen stream endpoint",
  "Failed to open stream line or tracking frames are missing completely",
  "subscriptions/listen stream carried no notification frames to inspect",
];
const RERUNS = 2;

const windowed = (check: Check): boolean =>
  WINDOWED_CHECKS.some((message) => check.errorMessage?.includes(message) === true);
const onlyWindowed = (result: ScenarioResult): boolean => result.failed.every(windowed);
const windowedNote = (result: ScenarioResult): string =>
  `the first run missed the suite's own stream window: ${result.failed.map((c) => c.id).join(", ")}`;

/** The runner on `front` with `args`, its results in `out`. */
function runSuite(
  front: Front,
  out: string,
  args: string[],
  home: TestHome,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", preload, runner, "server", "--url", front.url, ...args, "--output-dir", out],
      { cwd: out, env: home.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the suite did not finish within ${SUITE_TIMEOUT_MS} ms`));
    }, SUITE_TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** `scenario` run alone up to RERUNS times until it passes; its last result. */
async function rerun(
  front: Front,
  scenario: string,
  revision: string,
  home: TestHome,
): Promise<ScenarioResult> {
  let last: ScenarioResult | undefined;
  for (let attempt = 0; attempt < RERUNS; attempt++) {
    const out = mkdtempSync(join(tmpdir(), "mcpool-conformance-again-"));
    try {
      await runSuite(front, out, ["--scenario", scenario, "--spec-version", revision], home);
      last = readResults(out).find((r) => r.scenario === scenario);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    if (last === undefined) throw new Error(`${scenario} run alone wrote no results`);
    if (last.failed.length === 0 || !onlyWindowed(last)) return last;
  }
  return last!;
}

/** Per revision and server, the required scenarios it fails direct, each with why. */
const directFailures = new Map<string, Promise<Record<string, string>>>();

/** The required scenarios of `revision` that `server` fails direct: the runner once, memoised. */
function failingDirect(
  revision: string,
  server: string,
  home: TestHome,
): Promise<Record<string, string>> {
  const key = `${revision} ${server}`;
  const known = directFailures.get(key);
  if (known !== undefined) return known;
  const found = (async () => {
    const relay = await stdioOverHttp({ command: process.execPath, args: [fixture(server)] });
    const out = mkdtempSync(join(tmpdir(), "mcpool-conformance-direct-"));
    try {
      await runSuite(
        { url: relay.url, stop: () => relay.close() },
        out,
        ["--requirements", revision],
        home,
      );
      const required = requirements(revision).server;
      return Object.fromEntries(
        readResults(out)
          .filter((r) => r.failed.length > 0 && required.includes(r.scenario))
          .map((r) => [
            r.scenario,
            `fails direct: ${r.failed.map((c) => c.errorMessage).join("; ")}`,
          ]),
      );
    } finally {
      await relay.close();
      rmSync(out, { recursive: true, force: true });
    }
  })();
  directFailures.set(key, found);
  return found;
}

describe.each(RUNS)(
  "the MCP conformance server suite at %s (%s) through %s",
  (REVISION, server, _name, start, options) => {
    let home: TestHome;
    let daemon: RunningDaemon;
    let front: Front;
    let out: string;

    beforeAll(async () => {
      home = testHome("mcpool-conformance-");
      home.writeConfig({
        fixture: { command: process.execPath, args: [fixture(server)], ...options?.row },
      });
      daemon = await startDaemon(home);
      const pool: PoolClient = await poolClient(home);
      await pool.close();
      front = await start(home);
      out = mkdtempSync(join(tmpdir(), "mcpool-conformance-out-"));
    });

    afterAll(async () => {
      await front?.stop();
      await daemon?.stop();
      home?.remove();
      if (out) rmSync(out, { recursive: true, force: true });
    });

    it(
      "passes at least the scenarios it passes today, and fails no other",
      async () => {
        const run = await runSuite(front, out, ["--requirements", REVISION], home);
        const results = readResults(out);
        const required = requirements(REVISION).server;
        const ran = new Set(results.map((r) => r.scenario));
        expect(required.length).toBeGreaterThan(0);
        expect(
          required.filter((name) => !ran.has(name)),
          run.output.slice(-4000),
        ).toEqual([]);

        const passing = results.filter((r) => r.failed.length === 0);
        const checks = results.reduce((sum, r) => sum + r.passed, 0);
        const lines = results.map((r) => {
          const mark = r.failed.length === 0 ? "pass" : "FAIL";
          const why = r.failed.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`).join("; ");
          const scored = required.includes(r.scenario) ? "" : " (not scored)";
          return `${mark}  ${r.scenario}${scored}  (${r.passed} checks passed, ${r.failed.length} failed, ${r.warnings} warnings)${why ? `  ${why}` : ""}`;
        });
        // The per-scenario report, in the test's output.
        console.log(
          [
            `conformance ${REVISION}: ${passing.filter((r) => required.includes(r.scenario)).length}/${required.length} required scenarios, ${checks} checks passed`,
            ...lines,
          ].join("\n"),
        );

        const known = options?.direct === true ? (options.differs ?? {}) : KNOWN_GAPS[REVISION];
        const gaps =
          options?.direct === true
            ? { ...(await failingDirect(REVISION, server, home)), ...known }
            : (known ?? {});
        const failed = results.filter(
          (r) => r.failed.length > 0 && required.includes(r.scenario) && !(r.scenario in gaps),
        );
        const failing: string[] = [];
        for (const result of failed) {
          const again = onlyWindowed(result)
            ? await rerun(front, result.scenario, REVISION, home)
            : result;
          if (again.failed.length > 0) {
            failing.push(
              `${again.scenario}: ${again.failed.map((c) => c.errorMessage).join("; ")}`,
            );
          } else {
            console.log(`pass  ${result.scenario} when run again alone (${windowedNote(result)})`);
          }
        }
        expect(failing).toEqual([]);
        // Through the pool a scenario may pass that fails direct; a known gap may not.
        const closed = results
          .filter((r) => r.scenario in (known ?? {}) && r.failed.length === 0)
          .map((r) => r.scenario);
        expect(closed, "a known gap passes now: take it off its list").toEqual([]);
      },
      2 * SUITE_TIMEOUT_MS + 30_000,
    );
  },
);
