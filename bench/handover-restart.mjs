/**
 * A restart with 10 stateful rows: the hand-over (`mcpool restart`, the daemon passes its
 * socket and its children's pipes to a new daemon) against a cold restart (`mcpool shutdown`
 * and a new `mcpool serve`). Each row is the counter fixture (test/fixtures/counter.mjs): it
 * counts in memory, so a count that goes on proves its process and memory went on. Figures:
 * children restarted (pid changed), counts lost, and the time from asking for the restart
 * until every row answers a call again; median of BENCH_HANDOVER_ROUNDS (5) of each, in
 * alternation.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { join } from "node:path";
import { connect } from "mcpool-client";
import { benchHome, cliPath, repoRoot, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { figure, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const ROWS = 10;
const ROUNDS = Number(process.env.BENCH_HANDOVER_ROUNDS ?? 5);
const counter = { command: process.execPath, args: [join(repoRoot, "test/fixtures/counter.mjs")] };
const ids = Array.from({ length: ROWS }, (_, i) => `c${i}`);

/** Runs the CLI in `home` to its end; rejects on a non-zero exit. */
function cli(home, ...args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: home.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`mcpool ${args.join(" ")}: ${code} ${out}`)),
    );
  });
}

/** Every row's count and pid, each read by one call (`count`: adds one first). */
async function counts(home, tool) {
  const pool = await connect({ socketPath: home.socketPath, clientName: "bench-handover" });
  try {
    const answers = await Promise.all(ids.map((id) => pool.call(`${id}__${tool}`, {})));
    return answers.map((text) => text.split(" ").map(Number));
  } finally {
    await pool.close();
  }
}

/** Dials until a daemon answers on `home`'s socket (the restart's window), within 60 s. */
async function answering(home) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await counts(home, "count");
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** One restart of `kind` on a warm daemon in `home`: its figures. */
async function restartOnce(home, kind) {
  const before = await counts(home, "peek");
  const started = performance.now();
  if (kind === "handover") await cli(home, "restart");
  else {
    await cli(home, "shutdown");
    await startDaemon(home);
  }
  const after = await answering(home);
  const ms = performance.now() - started;
  const restarted = after.filter(([, pid], i) => pid !== before[i][1]).length;
  const lost = after.filter(([count], i) => count !== before[i][0] + 1).length;
  return { ms, restarted, lost };
}

async function main() {
  const home = benchHome("mcpool-bench-handover-");
  home.writeConfig(Object.fromEntries(ids.map((id) => [id, counter])));
  await startDaemon(home);
  {
    const pool = await connect({ socketPath: home.socketPath, clientName: "bench-handover" });
    await waitReady(pool, ROWS);
    await pool.close();
  }
  await counts(home, "count");
  const results = { handover: [], cold: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ["handover", "cold"]) results[kind].push(await restartOnce(home, kind));
  }
  await cli(home, "shutdown");
  const median = (kind, key) =>
    percentile(
      results[kind].map((r) => r[key]),
      50,
    );
  const coldMs = median("cold", "ms");
  return [
    figure({
      name: "handover: time until every row answers",
      unit: "ms",
      value: median("handover", "ms"),
      baseline: coldMs,
      baselineLabel: "cold restart (shutdown + serve)",
      checks: [["ratio", "<=", 0.5]],
      rows: ROWS,
      rounds: ROUNDS,
      samples: results.handover.map((r) => round(r.ms)),
      coldSamples: results.cold.map((r) => round(r.ms)),
    }),
    figure({
      name: "handover: children restarted",
      unit: "children",
      value: Math.max(...results.handover.map((r) => r.restarted)),
      baseline: Math.min(...results.cold.map((r) => r.restarted)),
      baselineLabel: "cold restart",
      checks: [["value", "==", 0]],
    }),
    figure({
      name: "handover: rows whose in-memory count was lost",
      unit: "rows",
      value: Math.max(...results.handover.map((r) => r.lost)),
      baseline: Math.min(...results.cold.map((r) => r.lost)),
      baselineLabel: "cold restart",
      checks: [["value", "==", 0]],
    }),
  ];
}

run("handover restart", main);
