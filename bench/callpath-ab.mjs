/**
 * `node bench/callpath-ab.mjs CLI...`: the call path of this build against others (each CLI
 * e.g. a copy of dist/cli/main.js before a change), in alternating rounds on one machine.
 * Each arm is a daemon with one echo row; per round and arm: the daemon's CPU per
 * sequential call (its threads' schedstat run time over the calls), the p50 of those calls (the loop of hop.mjs)
 * and 16 connections calling for a while (the loop of throughput.mjs). The client side is this checkout's.
 */
import { loadavg } from "node:os";
import { basename, dirname } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { connect } from "mcpool-client";
import { benchHome, cliPath, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { cpuUs } from "./lib/procs.mjs";
import { note } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

const others = process.argv.slice(2);
if (others.length === 0) throw new Error("usage: node bench/callpath-ab.mjs CLI...");
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_AB_CALLS ?? 2000);
const RATE_MS = Number(process.env.BENCH_AB_RATE_MS ?? 2000);
const CONNECTIONS = 16;
const WARMUP_CALLS = 10_000;
const ARGS = { text: "hello" };

async function arm(label, cli) {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home, { cli });
  const pools = await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => {
      const pool = await connect({ socketPath: home.socketPath, clientName: `ab-${label}-${i}` });
      onCleanup(() => pool.close());
      return pool;
    }),
  );
  await waitReady(pools[0], 1);
  // A daemon's CPU per call settles only after thousands of calls (V8 optimising a long path).
  for (let i = 0; i < WARMUP_CALLS; i++) await pools[0].call("echo__echo", ARGS);
  return { label, daemon, pools, cpu: [], p50: [], rate: [] };
}

async function round(a) {
  const [first] = a.pools;
  const samples = [];
  const before = cpuUs(a.daemon.pid);
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await first.call("echo__echo", ARGS);
    samples.push(performance.now() - started);
  }
  a.cpu.push((cpuUs(a.daemon.pid) - before) / CALLS);
  a.p50.push(percentile(samples, 50));
  const deadline = performance.now() + RATE_MS;
  const started = performance.now();
  let calls = 0;
  await Promise.all(
    a.pools.map(async (pool) => {
      while (performance.now() < deadline) {
        await pool.call("echo__echo", ARGS);
        calls += 1;
      }
    }),
  );
  a.rate.push((calls / (performance.now() - started)) * 1000);
}

run("call path A/B", async () => {
  note(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const arms = [];
  // Each other build is named by the folder its dist/ is in.
  for (const cli of others) arms.push(await arm(basename(dirname(dirname(dirname(cli)))), cli));
  arms.push(await arm("this", cliPath));
  // A first round each, not counted: the JIT settles.
  for (const a of arms) {
    await round(a);
    a.cpu.length = a.p50.length = a.rate.length = 0;
  }
  for (let r = 0; r < ROUNDS; r++)
    for (const a of r % 2 ? [...arms].reverse() : arms) await round(a);
  note(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  for (const a of arms) {
    note(
      `${a.label.padEnd(6)} CPU/call ${median(a.cpu).toFixed(0)} µs [${a.cpu.map((v) => v.toFixed(0)).join(" ")}]` +
        `  p50 ${median(a.p50).toFixed(3)} ms  16-way ${median(a.rate).toFixed(0)} calls/s [${a.rate.map((v) => v.toFixed(0)).join(" ")}]`,
    );
  }
  return [];
});
