/**
 * Throughput's one loop: every caller calls again as soon as its call returns, until `ms`
 * have passed. Shared by throughput.mjs, call-scale.mjs and `compare.mjs`, so their rates are taken alike.
 */
import { performance } from "node:perf_hooks";

/** `callers` loop calling for `ms`; the calls completed and the time they took, ms. */
export async function drive(callers, ms) {
  const started = performance.now();
  const deadline = started + ms;
  let calls = 0;
  await Promise.all(
    callers.map(async (call) => {
      while (performance.now() < deadline) {
        await call();
        calls += 1;
      }
    }),
  );
  return { calls, ms: performance.now() - started };
}

/** Calls a second over one drive(). */
export async function callsPerSecond(callers, ms) {
  const round = await drive(callers, ms);
  return (round.calls / round.ms) * 1000;
}
