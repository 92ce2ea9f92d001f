/**
 * `node bench/callpath-ab.mjs BASE_CLI [ROUNDS]`: the call path of this build against another
 * (BASE_CLI, e.g. a copy of dist/ before a change), in alternating rounds on one machine
 * (issue 16). Each arm is a daemon with one echo row; per round and arm: the daemon's CPU per
 * sequential call (utime+stime over the calls, as P11), the p50 of those calls (P1's loop)
 * and 16 connections calling for a while (P3's loop). The client side is this checkout's.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { connect } from "mcpool-client";
import { benchHome, cliPath, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { note } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

const [baseCli, roundsArg] = process.argv.slice(2);
if (!baseCli) throw new Error("usage: node bench/callpath-ab.mjs BASE_CLI [ROUNDS]");
const ROUNDS = Number(roundsArg ?? 4);
const CALLS = Number(process.env.BENCH_AB_CALLS ?? 2000);
const RATE_MS = Number(process.env.BENCH_AB_RATE_MS ?? 2000);
const CONNECTIONS = 16;
const ARGS = { text: "hello" };
const TICKS_PER_S = 100;

function cpuUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
}

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
  for (let i = 0; i < 500; i++) await pools[0].call("echo__echo", ARGS);
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
  const arms = [await arm("base", baseCli), await arm("this", cliPath)];
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
      `${a.label.padEnd(5)} CPU/call ${median(a.cpu).toFixed(0)} µs [${a.cpu.map((v) => v.toFixed(0)).join(" ")}]` +
        `  p50 ${median(a.p50).toFixed(3)} ms  16-way ${median(a.rate).toFixed(0)} calls/s [${a.rate.map((v) => v.toFixed(0)).join(" ")}]`,
    );
  }
  return [];
});
