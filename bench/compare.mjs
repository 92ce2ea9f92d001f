/**
 * Builds side by side: hop.mjs (sequential echo p50/p99) and throughput.mjs (16 connections, calls/s)
 * through one daemon per given CLI, and the direct SDK arm, all alternating in the same
 * rounds, so a fix can be judged on a noisy machine.
 *   node bench/compare.mjs [label=]/path/to/dist/cli/main.js ...
 * With no argument it compares this checkout's build with nothing but the direct arm.
 */
import { performance } from "node:perf_hooks";
import process from "node:process";
import { connect } from "mcpool-client";
import { onCleanup } from "./lib/cleanup.mjs";
import { benchHome, cliPath, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { directClient, listAll } from "./lib/direct.mjs";
import { run } from "./lib/harness.mjs";
import { callsPerSecond } from "./lib/drive.mjs";
import { figure } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const ROUNDS = 6;
const SEQUENTIAL_PER_ROUND = 300;
const CONCURRENT_MS = 1500;
const CALLERS = 16;
const ARGS = { text: "hello" };

const builds = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : [cliPath]).map(
  (arg, i) => {
    const at = arg.indexOf("=");
    return at === -1
      ? { label: `build${i}`, cli: arg }
      : { label: arg.slice(0, at), cli: arg.slice(at + 1) };
  },
);

async function sequential(call, n, into) {
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    into.push(performance.now() - started);
  }
}

run("compare builds", async () => {
  const arms = {};
  for (const { label, cli } of builds) {
    const home = benchHome();
    home.writeConfig({ echo: rows.echo() });
    await startDaemon(home, { cli });
    const clients = [];
    for (let i = 0; i < CALLERS; i++) {
      const pool = await connect({ socketPath: home.socketPath, clientName: `compare-${i}` });
      onCleanup(() => pool.close());
      clients.push(pool);
    }
    await waitReady(clients[0], 1);
    arms[label] = {
      one: () => clients[0].call("echo__echo", ARGS),
      many: clients.map((pool) => () => pool.call("echo__echo", ARGS)),
    };
  }
  const direct = await directClient(rows.echo());
  await listAll(direct.client);
  const call = () => direct.client.callTool({ name: "echo", arguments: ARGS });
  arms.direct = { one: call, many: Array.from({ length: CALLERS }, () => call) };

  const names = Object.keys(arms);
  const latency = Object.fromEntries(names.map((n) => [n, []]));
  const rate = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) await sequential(arms[name].one, 300, []);
  for (let pass = 0; pass < ROUNDS; pass++) {
    const order = pass % 2 === 0 ? names : [...names].reverse();
    for (const name of order) await sequential(arms[name].one, SEQUENTIAL_PER_ROUND, latency[name]);
    for (const name of order) rate[name].push(await callsPerSecond(arms[name].many, CONCURRENT_MS));
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const figures = [];
  for (const { label } of builds) {
    for (const p of [50, 99]) {
      figures.push(
        figure({
          name: `${label}.hop.p${p}`,
          unit: "ms",
          value: percentile(latency[label], p),
          baseline: percentile(latency.direct, p),
          baselineLabel: "direct SDK client, same rounds",
          checks: [["ratio", "<=", p === 50 ? 1.6 : 2]],
        }),
      );
    }
    figures.push(
      figure({
        name: `${label}.throughput`,
        unit: "calls/s",
        value: mean(rate[label]),
        baseline: mean(rate.direct),
        baselineLabel: "direct SDK client, same rounds",
        checks: [["ratio", ">=", 0.5]],
        perRound: rate[label].map(Math.round),
      }),
    );
  }
  return figures;
});
