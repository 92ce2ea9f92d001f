/**
 * The official MCP conformance client scenarios (`@modelcontextprotocol/conformance client
 * --suite all`) against client-adapter.mjs, which makes the built McpPool the client under
 * test. The runner needs `fs.globSync`, which Node 20 lacks: test/helpers/node20-glob-sync.mjs
 * supplies it.
 *
 * The runner starts all 26 scenarios at once. One check is about time: sse-retry measures
 * how long the client waits before reconnecting (500 ms asked, 1 s counts as "ignoring the
 * retry field"), and on two cores shared with 25 other starting clients that measures the
 * machine. A scenario that fails in the suite is therefore run once more on its own, and
 * only a failure there fails this test; the rerun is reported either way.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  conformance as runConformance,
  soloOutcome,
  summary,
} from "../helpers/conformance-runner.js";

const ADAPTER = fileURLToPath(new URL("./client-adapter.mjs", import.meta.url));

/** The client scenarios of @modelcontextprotocol/conformance 0.1.16's `--suite all`. */
const EXPECTED_SCENARIOS = 26;
/** Bound on the whole suite, ms: 26 clients at once, each up to two minutes in the runner. */
const SUITE_BOUND_MS = 300_000;
/** The runner's own per-client bound, ms (its default of 30 s is short for 26 at once). */
const CLIENT_TIMEOUT_MS = 120_000;
/** Bound on one scenario run alone, ms. */
const SOLO_BOUND_MS = 60_000;

const conformance = (args: string[], boundMs: number) =>
  runConformance(ADAPTER, args, boundMs, CLIENT_TIMEOUT_MS);

describe("the MCP conformance client suite", () => {
  it(
    "passes every scenario of `--suite all` with the pool as the client",
    async () => {
      const suite = await conformance(["--suite", "all"], SUITE_BOUND_MS);
      const scenarios = summary(suite.output);
      expect(scenarios.size, suite.output.slice(-4000)).toBe(EXPECTED_SCENARIOS);

      const failing = [...scenarios].filter(([, o]) => o.failed > 0 || o.warnings > 0);
      const stillFailing: string[] = [];
      for (const [name, outcome] of failing) {
        const solo = await conformance(["--scenario", name], SOLO_BOUND_MS);
        const passed = soloOutcome(solo.output).passed;
        console.log(
          `conformance: ${name} failed in the suite (${outcome.reasons.join("; ")}); alone it ${passed ? "passed" : "failed"}`,
        );
        if (!passed) stillFailing.push(`${name}: ${outcome.reasons.join("; ")}`);
      }
      const passing = scenarios.size - stillFailing.length;
      console.log(`conformance: ${passing}/${scenarios.size} client scenarios pass`);
      expect(stillFailing).toEqual([]);
    },
    SUITE_BOUND_MS + 4 * SOLO_BOUND_MS,
  );
});
