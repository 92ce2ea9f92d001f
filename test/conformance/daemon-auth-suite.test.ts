/**
 * The official MCP conformance client auth scenarios, as users sign in (SPEC E5): each
 * scenario's server url goes into the mcp.json of a real `mcpool serve`, a person signs in
 * with the real `mcpool login --no-browser` (daemon-adapter.mjs plays only the browser),
 * and an agent calls the server's tool through the daemon. Step-up, the sign-in bound and
 * the machine grants are mcpool's own, not the adapter's.
 *
 * Every `auth/*` scenario of `--suite all` runs, cross-app-access-complete-flow (SEP-990
 * enterprise-managed authorization) among them, as a `"grant": "id-jag"` row.
 *
 * Each scenario gets its own runner (`--scenario`), CONCURRENCY at a time: a scenario
 * starts a daemon and up to four CLI processes, and 22 of them at once on two shared cores
 * spend their time starting Node, not signing in. As in client-suite.test.ts, a scenario
 * that fails is run once more alone, and only a failure there fails this test; the rerun is
 * reported either way.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { conformance, soloOutcome } from "../helpers/conformance-runner.js";

const ADAPTER = fileURLToPath(new URL("./daemon-adapter.mjs", import.meta.url));

/** The auth scenarios of @modelcontextprotocol/conformance 0.1.16 run through the daemon. */
const SCENARIOS = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
  "auth/cross-app-access-complete-flow",
];
/** Runners at once. */
const CONCURRENCY = 3;
/** The runner's bound on one client (the adapter, its daemon and its logins), ms. */
const CLIENT_TIMEOUT_MS = 120_000;
/** Bound on one runner, ms: the client's bound plus the runner's own start and stop. */
const SCENARIO_BOUND_MS = 150_000;
/** Bound on the whole test: every wave at its bound, then every scenario rerun alone. */
const TEST_BOUND_MS =
  Math.ceil(SCENARIOS.length / CONCURRENCY) * SCENARIO_BOUND_MS +
  SCENARIOS.length * SCENARIO_BOUND_MS;

async function runScenario(name: string): Promise<{ passed: boolean; counts: string }> {
  const run = await conformance(
    ADAPTER,
    ["--scenario", name],
    SCENARIO_BOUND_MS,
    CLIENT_TIMEOUT_MS,
  );
  const outcome = soloOutcome(run.output);
  if (!outcome.passed)
    console.log(`conformance (daemon): ${name} output:\n${run.output.slice(-3000)}`);
  return outcome;
}

describe("the MCP conformance client auth scenarios through the daemon and `mcpool login`", () => {
  it(
    "passes every auth scenario with a real daemon, `mcpool login --no-browser` and an agent",
    async () => {
      const results = new Map<string, { passed: boolean; counts: string }>();
      const queue = [...SCENARIOS];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
            results.set(name, await runScenario(name));
          }
        }),
      );
      const stillFailing: string[] = [];
      for (const name of SCENARIOS) {
        const first = results.get(name)!;
        if (first.passed) {
          console.log(`conformance (daemon): ${name}: ${first.counts}`);
          continue;
        }
        const alone = await runScenario(name);
        console.log(
          `conformance (daemon): ${name} failed among others (${first.counts}); alone it ${alone.passed ? "passed" : "failed"} (${alone.counts})`,
        );
        if (!alone.passed) stillFailing.push(`${name}: ${alone.counts}`);
      }
      console.log(
        `conformance (daemon): ${SCENARIOS.length - stillFailing.length}/${SCENARIOS.length} auth scenarios pass`,
      );
      expect(stillFailing).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
