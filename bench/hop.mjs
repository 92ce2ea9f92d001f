/**
 * Hop cost: a trivial tools/call, sequential, p50/p99 — the SDK Client
 * in-process against a stdio echo child vs the same fixture through client → socket →
 * daemon → child. Both arms are warm and alternate in rounds, so drift hits both.
 * Also with `sleep {ms: 1}`, where the hop should vanish in the tool's own time.
 * A third arm times the floor of any hop on this machine: one NDJSON line to a bare Node
 * process on a Unix socket and back (0.02–0.07 ms on the machines first measured). A
 * fourth is the yardstick the call path is held to: a bare relay process (agents/bare-relay.mjs) that owns
 * its own echo child and forwards each line under a fresh id — a second process and a socket
 * hop, and nothing else. The daemon is judged against both the direct client and the relay.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, client, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { directClient, listAll } from "./lib/direct.mjs";
import { run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { onCleanup } from "./lib/cleanup.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const CALLS = Number(process.env.BENCH_HOP_CALLS ?? 2000);
const ROUNDS = 10;
/**
 * Calls each arm makes before it is timed. A process gets faster over its first thousands of
 * calls as V8 optimises it, and the daemon, with far more code on the path than the relay,
 * for longer: its CPU per call settles after about 8,000 (413 µs a call over its first
 * 1,000, ~80 µs from its 9th). 10,000 leave every arm warm, as a daemon in use is;
 * the first calls after a start are timed apart (hop.echo.cold). The sleep case comes after
 * the echo case on the same processes, already warm.
 */
const WARMUP = Number(process.env.BENCH_HOP_WARMUP ?? 10_000);
/** The first calls after a start, timed one call per arm in turn. */
const COLD_CALLS = 1000;

const CASES = [
  { label: "echo", tool: "echo", args: { text: "hello" }, calls: CALLS, warmup: WARMUP },
  { label: "sleep1ms", tool: "sleep", args: { ms: 1 }, calls: CALLS, warmup: 500 },
];

async function sample(call, n, into) {
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    into.push(performance.now() - started);
  }
}

/**
 * The first COLD_CALLS echo calls of each arm after its start (the daemon has only listed
 * its tools), one call per arm in turn, so each process is as new as the others at each turn.
 */
async function coldFigure(arms) {
  const samples = { direct: [], daemon: [], relay: [] };
  for (let i = 0; i < COLD_CALLS; i++) {
    for (const arm of Object.keys(samples)) await sample(arms[arm], 1, samples[arm]);
  }
  return figure({
    name: "hop.echo.cold.p50.vsRelay",
    unit: "ms",
    value: percentile(samples.daemon, 50),
    baseline: percentile(samples.relay, 50),
    baselineLabel: `bare relay process, its first ${COLD_CALLS} calls too`,
    checks: [],
    note: `the first ${COLD_CALLS} calls after each process started, one per arm in turn`,
    directP50: round(percentile(samples.direct, 50)),
    calls: COLD_CALLS,
  });
}

run("Hop cost", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  await startDaemon(home);
  const pool = await client(home, "bench-hop");
  await waitReady(pool, 1);
  const direct = await directClient(rows.echo());
  await listAll(direct.client);
  await pool.tools();
  const bareSocket = join(home.dir, "bare.sock");
  await startAgent("bare-node", [bareSocket]);
  const bare = await lineClient(bareSocket);
  onCleanup(() => bare.close());
  const relaySocket = join(home.dir, "relay.sock");
  const echo = rows.echo();
  await startAgent("bare-relay", [relaySocket, echo.command, ...echo.args]);
  const relay = await lineClient(relaySocket);
  onCleanup(() => relay.close());

  const figures = [];
  /** Each arm's call of `tool`: in process, through the daemon, to the bare socket, relayed. */
  const armsFor = (tool, args) => ({
    direct: () => direct.client.callTool({ name: tool, arguments: args }),
    daemon: () => pool.call(`echo__${tool}`, args),
    floor: () => bare.request("tools/call", { name: tool, arguments: args }),
    relay: () => relay.request("tools/call", { name: tool, arguments: args }),
  });
  figures.push(await coldFigure(armsFor(CASES[0].tool, CASES[0].args)));
  for (const { label, tool, args, calls, warmup } of CASES) {
    const arms = armsFor(tool, args);
    const samples = { direct: [], daemon: [], floor: [], relay: [] };
    const withFloor = label === "echo";
    const names = withFloor
      ? ["direct", "daemon", "relay", "floor"]
      : ["direct", "daemon", "relay"];
    for (const arm of names) await sample(arms[arm], warmup, []);
    const perRound = Math.ceil(calls / ROUNDS);
    for (let pass = 0; pass < ROUNDS; pass++) {
      const order = pass % 2 === 0 ? names : [...names].reverse();
      for (const arm of order) await sample(arms[arm], perRound, samples[arm]);
    }
    note(`${label}: ${samples.direct.length} calls per arm in ${ROUNDS} alternating rounds`);
    const detail = { calls: samples.daemon.length, rounds: ROUNDS, warmup };
    const [p50Limit, p99Limit] = label === "echo" ? [1.6, 2] : [1.05, undefined];
    for (const [p, limit] of [
      [50, p50Limit],
      [99, p99Limit],
    ]) {
      figures.push(
        figure({
          name: `hop.${label}.p${p}`,
          unit: "ms",
          value: percentile(samples.daemon, p),
          baseline: percentile(samples.direct, p),
          baselineLabel: "SDK Client in-process → same stdio child",
          checks: limit === undefined ? [] : [["ratio", "<=", limit]],
          ...detail,
        }),
      );
    }
    // The targets against the relay: p50 ≤ 1.25×, p99 ≤ 1.5× (echo only).
    for (const [p, limit] of [
      [50, label === "echo" ? 1.25 : undefined],
      [99, label === "echo" ? 1.5 : undefined],
    ]) {
      figures.push(
        figure({
          name: `hop.${label}.p${p}.vsRelay`,
          unit: "ms",
          value: percentile(samples.daemon, p),
          baseline: percentile(samples.relay, p),
          baselineLabel: "bare relay process (own echo child, fresh ids, no validation)",
          checks: limit === undefined ? [] : [["ratio", "<=", limit]],
          relayVsDirect: round(percentile(samples.relay, p) / percentile(samples.direct, p)),
          ...detail,
        }),
      );
    }
    if (withFloor) {
      const direct50 = percentile(samples.direct, 50);
      figures.push(
        figure({
          name: "hop.socketFloor.p50",
          unit: "ms",
          value: percentile(samples.floor, 50),
          baseline: direct50,
          baselineLabel: "SDK Client in-process → stdio child (the baseline of hop.mjs)",
          checks: [],
          note: "one NDJSON round trip to a bare Node process on a Unix socket: the least a hop adds",
          hopAdded: round(percentile(samples.daemon, 50) - direct50),
          hopBudgetAt1_6: round(0.6 * direct50),
          ...detail,
        }),
      );
    }
  }
  return figures;
});
