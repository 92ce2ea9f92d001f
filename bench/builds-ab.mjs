/**
 * `node bench/builds-ab.mjs [label=]/other/checkout ... [--out FILE]`: the warm hop and the
 * idle memory of this checkout beside other builds (each a checkout with `dist/` and
 * `client/dist/` built), in alternating rounds on one machine.
 *
 * The hop: each build is a daemon with one echo row called through that build's own
 * `mcpool-client` (the whole hop as a user of that build gets it), beside the bare relay
 * (agents/bare-relay.mjs with its own echo child). 10,000 warm-up calls per arm, then
 * `BENCH_AB_ROUNDS` (6) rounds of `BENCH_AB_CALLS` (1,000) sequential calls per arm, the
 * order reversed every other round; per round and arm the p50, the p99, the ratio to the
 * relay's of the same round, and the daemon's CPU per call (every thread's schedstat).
 *
 * The idle memory: per round a fresh daemon of each build, the same work for each (2,000
 * echo calls, taking turns call by call), nobody connected, then `BENCH_AB_IDLE_MS`
 * (35,000: V8's memory reducer has collected by then, see idle.mjs) and VmRSS read from
 * both (and 2 s after the work, as memory.mjs reads it); `BENCH_AB_IDLE_ROUNDS` (5) rounds, the start order reversed every other round.
 *
 * Medians over the rounds with their min–max, and the load average at each round.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, repoRoot, rows, startDaemon } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { cpuUs, rssMB } from "./lib/procs.mjs";
import { environment, note } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

const argv = process.argv.slice(2);
const outAt = argv.indexOf("--out");
const out = outAt === -1 ? undefined : argv[outAt + 1];
const given = argv.filter((_, i) => outAt === -1 || (i !== outAt && i !== outAt + 1));
if (given.length === 0)
  throw new Error("usage: node bench/builds-ab.mjs [label=]/other/checkout ...");

const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 6);
const CALLS = Number(process.env.BENCH_AB_CALLS ?? 1000);
const WARMUP = Number(process.env.BENCH_AB_WARMUP ?? 10_000);
const IDLE_ROUNDS = Number(process.env.BENCH_AB_IDLE_ROUNDS ?? 5);
const IDLE_MS = Number(process.env.BENCH_AB_IDLE_MS ?? 35_000);
const IDLE_WORK_CALLS = 2000;
/** A first read of the idle RSS, as memory.mjs takes it: 2 s after the last client left. */
const EARLY_MS = 2000;
const ARGS = { text: "hello" };

const builds = [
  ...given.map((arg) => {
    const at = arg.indexOf("=");
    const root = resolve(at === -1 ? arg : arg.slice(at + 1));
    return { label: at === -1 ? root.split("/").pop() : arg.slice(0, at), root };
  }),
  { label: "this", root: resolve(repoRoot) },
].map((build) => ({ ...build, cli: join(build.root, "dist/cli/main.js") }));

const load = () => loadavg().map((l) => Number(l.toFixed(2)));
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A build's daemon on a fresh home, and one connection through that build's own client. */
async function daemonOf(build) {
  const { connect } = await import(pathToFileURL(join(build.root, "client/dist/index.js")).href);
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home, { cli: build.cli });
  const pool = await connect({ socketPath: home.socketPath, clientName: `ab-${build.label}` });
  onCleanup(() => pool.close());
  for (let tries = 0; ; tries++) {
    const state = await pool.state();
    if (state.length === 1 && state[0].status === "ready") break;
    if (tries > 1200) throw new Error(`${build.label}: echo not ready: ${JSON.stringify(state)}`);
    await sleep(50);
  }
  return { daemon, pool, call: () => pool.call("echo__echo", ARGS) };
}

async function timed(call, n) {
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    samples[i] = performance.now() - started;
  }
  return samples;
}

const spread = (xs) => ({
  median: Number(median(xs).toFixed(4)),
  min: Number(Math.min(...xs).toFixed(4)),
  max: Number(Math.max(...xs).toFixed(4)),
});

async function hop() {
  const arms = [];
  for (const build of builds) {
    const { daemon, call } = await daemonOf(build);
    arms.push({ label: build.label, pid: daemon.pid, call });
  }
  const home = benchHome();
  const relaySocket = join(home.dir, "relay.sock");
  const echo = rows.echo();
  await startAgent("bare-relay", [relaySocket, echo.command, ...echo.args]);
  const relay = await lineClient(relaySocket);
  onCleanup(() => relay.close());
  arms.push({
    label: "relay",
    call: () => relay.request("tools/call", { name: "echo", arguments: ARGS }),
  });
  for (const arm of arms) {
    await timed(arm.call, WARMUP);
    Object.assign(arm, { p50: [], p99: [], cpu: [] });
  }
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? arms : [...arms].reverse();
    for (const arm of order) {
      const before = arm.pid === undefined ? 0 : cpuUs(arm.pid);
      const samples = await timed(arm.call, CALLS);
      if (arm.pid !== undefined) arm.cpu.push((cpuUs(arm.pid) - before) / CALLS);
      arm.p50.push(percentile(samples, 50));
      arm.p99.push(percentile(samples, 99));
    }
    rounds.push({ order: order.map((a) => a.label), loadavg: load() });
  }
  const relayArm = arms.at(-1);
  const result = {};
  for (const arm of arms) {
    const ratio50 = arm.p50.map((v, i) => v / relayArm.p50[i]);
    const ratio99 = arm.p99.map((v, i) => v / relayArm.p99[i]);
    result[arm.label] = {
      p50Ms: spread(arm.p50),
      p99Ms: spread(arm.p99),
      ...(arm === relayArm
        ? {}
        : {
            p50VsRelay: spread(ratio50),
            p99VsRelay: spread(ratio99),
            daemonCpuUsPerCall: spread(arm.cpu),
          }),
      perRound: {
        p50: arm.p50.map((v) => Number(v.toFixed(4))),
        p99: arm.p99.map((v) => Number(v.toFixed(4))),
      },
    };
    note(
      `hop ${arm.label.padEnd(8)} p50 ${median(arm.p50).toFixed(4)} ms [${arm.p50.map((v) => v.toFixed(3)).join(" ")}]` +
        ` p99 ${median(arm.p99).toFixed(3)}` +
        (arm === relayArm
          ? ""
          : ` ÷relay p50 ${median(ratio50).toFixed(3)} [${ratio50.map((v) => v.toFixed(2)).join(" ")}]` +
            ` p99 ${median(ratio99).toFixed(3)} CPU ${median(arm.cpu).toFixed(0)} µs/call`),
    );
  }
  return { calls: CALLS, rounds: ROUNDS, warmup: WARMUP, arms: result, roundsLoad: rounds };
}

async function idle() {
  const rss = Object.fromEntries(builds.map((b) => [b.label, []]));
  const early = Object.fromEntries(builds.map((b) => [b.label, []]));
  const rounds = [];
  for (let r = 0; r < IDLE_ROUNDS; r++) {
    const order = r % 2 === 0 ? builds : [...builds].reverse();
    const live = [];
    for (const build of order) live.push({ build, ...(await daemonOf(build)) });
    for (let i = 0; i < IDLE_WORK_CALLS; i++) for (const d of live) await d.call();
    for (const d of live) await d.pool.close();
    await sleep(EARLY_MS);
    for (const d of live) early[d.build.label].push(rssMB(d.daemon.pid));
    await sleep(IDLE_MS - EARLY_MS);
    for (const d of live) rss[d.build.label].push(rssMB(d.daemon.pid));
    rounds.push({ order: order.map((b) => b.label), loadavg: load() });
    for (const d of live) await d.daemon.stop();
    note(
      `idle round ${r + 1}: ${live.map((d) => `${d.build.label} ${rss[d.build.label].at(-1).toFixed(1)} MB`).join(", ")}`,
    );
  }
  const result = {};
  for (const [label, values] of Object.entries(rss)) {
    result[label] = {
      rssMB: spread(values),
      perRound: values.map((v) => Number(v.toFixed(2))),
      rssMBAfter2s: spread(early[label]),
    };
    note(
      `idle ${label.padEnd(8)} RSS ${median(values).toFixed(2)} MB [${values.map((v) => v.toFixed(1)).join(" ")}]`,
    );
  }
  return {
    workCalls: IDLE_WORK_CALLS,
    idleMs: IDLE_MS,
    rounds: IDLE_ROUNDS,
    builds: result,
    roundsLoad: rounds,
  };
}

run("builds A/B: hop and idle memory", async () => {
  const loadStart = load();
  note(`load average at start ${loadStart.join(" ")}`);
  const hopResult = await hop();
  const idleResult = IDLE_ROUNDS > 0 ? await idle() : undefined;
  const summary = {
    name: "buildsAb",
    builds: Object.fromEntries(builds.map((b) => [b.label, b.root])),
    hop: hopResult,
    idle: idleResult,
    loadavgStart: loadStart,
    loadavgEnd: load(),
    environment: environment(),
  };
  note(`load average at end ${summary.loadavgEnd.join(" ")}`);
  if (out !== undefined) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  return [];
});
