/**
 * The official MCP conformance client scenarios (@modelcontextprotocol/conformance
 * 0.2.0-alpha.12), as users sign in: each scenario's server url goes into the
 * mcp.json of a real `mcpool serve`, a person signs in with the real `mcpool login
 * --no-browser` (daemon-adapter.mjs plays only the browser), and an agent calls the server's
 * tool through the daemon. Step-up, the sign-in bound, the issuer checks and the machine
 * grants are mcpool's own, not the adapter's. What runs:
 *
 * - every client scenario 2025-11-25 requires, at the legacy wire, and every one 2026-07-28
 *   requires, at the modern wire (the suite's own requirements files): the sign-in rules of
 *   each revision (RFC 9207 `iss`, metadata issuer, migration, resource mismatch, offline
 *   access), the per-request `_meta` and its version retry (SEP-2575), MRTR (SEP-2322), the
 *   Mcp-Method/Mcp-Name and Mcp-Param-* headers and the tools refused for bad marks
 *   (SEP-2243), and no network `$ref` followed (SEP-2106);
 * - the extensions mcpool implements (client credentials, SEP-990's ID-JAG) and the
 *   2025-03-26 back-compatibility pair, each at its own revision.
 *
 * Each scenario is a run of its own (`--scenario`), CONCURRENCY at a time: a scenario
 * starts a daemon and up to four CLI processes, and 30 of them at once on two shared cores
 * spend their time starting Node, not signing in. The runs go through CONCURRENCY runner
 * lanes (conformance-runner.ts), each of which loads the runner once and runs its scenarios
 * one after another. As in client-suite.test.ts, a scenario that fails is run once more
 * alone, by a runner of its own, and only a failure there fails this test; the rerun is
 * reported either way.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  clientArgs,
  conformance,
  requirements,
  RunnerLanes,
  soloOutcome,
  type Run,
} from "../helpers/conformance-runner.js";

const ADAPTER = fileURLToPath(new URL("./daemon-adapter.mjs", import.meta.url));

/** Each revision's required client scenarios, run at that revision. */
const atRevision = (revision: string): [string, string[]][] =>
  requirements(revision).client.map((name) => [name, ["--spec-version", revision]]);
/** A scenario and the runner flags it runs with. */
const SCENARIOS: [string, string[]][] = [
  ...atRevision("2025-11-25"),
  ...atRevision("2026-07-28"),
  ["auth/client-credentials-basic", []],
  ["auth/client-credentials-jwt", []],
  ["auth/enterprise-managed-authorization", []],
  ["auth/2025-03-26-oauth-metadata-backcompat", ["--spec-version", "2025-03-26"]],
  ["auth/2025-03-26-oauth-endpoint-fallback", ["--spec-version", "2025-03-26"]],
];
/** A scenario as the report names it: the same one runs at more than one revision. */
const label = ([name, flags]: [string, string[]]): string =>
  flags.length === 0 ? name : `${name} (${flags.join(" ")})`;
/** Runners at once: a scenario mostly waits on its own children, so five end sooner than three. */
const CONCURRENCY = 5;
/** The runner's bound on one client (the adapter, its daemon and its logins), ms. */
const CLIENT_TIMEOUT_MS = 120_000;
/** Bound on one runner, ms: the client's bound plus the runner's own start and stop. */
const SCENARIO_BOUND_MS = 150_000;
/** Bound on the whole test: every wave at its bound, then every scenario rerun alone. */
const TEST_BOUND_MS =
  Math.ceil(SCENARIOS.length / CONCURRENCY) * SCENARIO_BOUND_MS +
  SCENARIOS.length * SCENARIO_BOUND_MS;

/** A scenario run by `lanes`, or alone by a runner of its own. */
async function runScenario(
  [name, flags]: [string, string[]],
  lanes?: RunnerLanes,
): Promise<{
  passed: boolean;
  counts: string;
}> {
  const args = ["--scenario", name, ...flags];
  const run: Run = lanes
    ? await lanes.run(clientArgs(ADAPTER, args, CLIENT_TIMEOUT_MS), SCENARIO_BOUND_MS)
    : await conformance(ADAPTER, args, SCENARIO_BOUND_MS, CLIENT_TIMEOUT_MS);
  const outcome = soloOutcome(run.output);
  if (!outcome.passed)
    console.log(`conformance (daemon): ${name} output:\n${run.output.slice(-3000)}`);
  return outcome;
}

describe("the MCP conformance client scenarios through the daemon and `mcpool login`", () => {
  it(
    "passes every scenario with a real daemon, `mcpool login --no-browser` and an agent",
    async () => {
      const results = new Map<string, { passed: boolean; counts: string }>();
      const queue = [...SCENARIOS];
      const lanes = new RunnerLanes();
      try {
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
              results.set(label(next), await runScenario(next, lanes));
            }
          }),
        );
      } finally {
        await lanes.close();
      }
      const stillFailing: string[] = [];
      for (const scenario of SCENARIOS) {
        const name = label(scenario);
        const first = results.get(name)!;
        if (first.passed) {
          console.log(`conformance (daemon): ${name}: ${first.counts}`);
          continue;
        }
        const alone = await runScenario(scenario);
        console.log(
          `conformance (daemon): ${name} failed among others (${first.counts}); alone it ${alone.passed ? "passed" : "failed"} (${alone.counts})`,
        );
        if (!alone.passed) stillFailing.push(`${name}: ${alone.counts}`);
      }
      console.log(
        `conformance (daemon): ${SCENARIOS.length - stillFailing.length}/${SCENARIOS.length} client scenarios pass`,
      );
      expect(stillFailing).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
