/**
 * The official MCP conformance client scenarios (@modelcontextprotocol/conformance
 * 0.2.0-alpha.12, `client --requirements 2025-11-25`: what that revision requires of a
 * client, and the not-scored extensions beside them) against client-adapter.mjs, which makes
 * the built McpPool the client under test. The runner needs `fs.globSync`, which Node 20
 * lacks: test/helpers/node20-glob-sync.mjs supplies it.
 *
 * The runner starts every scenario at once. One check is about time: sse-retry measures
 * how long the client waits before reconnecting (500 ms asked, 1 s counts as "ignoring the
 * retry field"), and on two cores shared with two dozen other starting clients that measures
 * the machine. A required scenario that fails in the suite is therefore run once more on its
 * own, and only a failure there fails this test; the rerun is reported either way. The
 * not-scored scenarios are reported, never counted (the README's conformance table).
 *
 * The runs go one after another through one runner lane (conformance-runner.ts), which
 * loads the runner once for all of them.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  clientArgs,
  requirements,
  RunnerLanes,
  soloOutcome,
  summary,
} from "../helpers/conformance-runner.js";

const ADAPTER = fileURLToPath(new URL("./client-adapter.mjs", import.meta.url));

/** The revision whose required client scenarios the pool must pass. */
const REVISION = "2025-11-25";
/** Bound on the whole suite, ms: every client at once, each up to two minutes in the runner. */
const SUITE_BOUND_MS = 300_000;
/** The runner's own per-client bound, ms (its default of 30 s is short for 25 at once). */
const CLIENT_TIMEOUT_MS = 120_000;
/** Bound on one scenario run alone, ms. */
const SOLO_BOUND_MS = 60_000;

const lanes = new RunnerLanes();
const conformance = (args: string[], boundMs: number) =>
  lanes.run(clientArgs(ADAPTER, args, CLIENT_TIMEOUT_MS), boundMs);

describe("the MCP conformance client suite", () => {
  afterAll(() => lanes.close());

  it(
    `passes every client scenario ${REVISION} requires, with the pool as the client`,
    async () => {
      const required = requirements(REVISION).client;
      const suite = await conformance(["--requirements", REVISION], SUITE_BOUND_MS);
      const scenarios = summary(suite.output);
      expect(
        required.filter((name) => !scenarios.has(name)),
        suite.output.slice(-4000),
      ).toEqual([]);

      const stillFailing: string[] = [];
      for (const name of required) {
        const outcome = scenarios.get(name)!;
        if (outcome.failed === 0 && outcome.warnings === 0) continue;
        const solo = await conformance(
          ["--scenario", name, "--spec-version", REVISION],
          SOLO_BOUND_MS,
        );
        const passed = soloOutcome(solo.output).passed;
        console.log(
          `conformance: ${name} failed in the suite (${outcome.reasons.join("; ")}); alone it ${passed ? "passed" : "failed"}`,
        );
        if (!passed) stillFailing.push(`${name}: ${outcome.reasons.join("; ")}`);
      }
      const extra = [...scenarios].filter(([name]) => !required.includes(name));
      console.log(
        [
          `conformance ${REVISION}: ${required.length - stillFailing.length}/${required.length} required client scenarios pass`,
          ...extra.map(
            ([name, o]) =>
              `  not scored: ${name} ${o.failed === 0 ? "passes" : `fails (${o.reasons.join("; ")})`}`,
          ),
        ].join("\n"),
      );
      expect(stillFailing).toEqual([]);
    },
    SUITE_BOUND_MS + 4 * SOLO_BOUND_MS,
  );

  // 2026-07-28 at the modern wire: every required scenario but sign-in, whose provider here
  // is the adapter's own (the SDK's auth()); the daemon's suite holds mcpool's sign-in to them.
  const modern = requirements("2026-07-28").client.filter((name) => !name.startsWith("auth/"));
  it.each(modern)(
    "passes %s, which 2026-07-28 requires, with the pool as the client",
    async (name) => {
      const run = await conformance(
        ["--scenario", name, "--spec-version", "2026-07-28"],
        SOLO_BOUND_MS,
      );
      expect(soloOutcome(run.output).passed, run.output.slice(-4000)).toBe(true);
    },
    SOLO_BOUND_MS + 10_000,
  );
});
