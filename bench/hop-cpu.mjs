/**
 * `node bench/hop-cpu.mjs [CLI...] [--out FILE]`: the CPU a warm sequential echo call costs
 * through the daemon against the bare relay (agents/bare-relay.mjs), measured as CPU time
 * rather than latency, which load on a shared machine inflates far less. Per round and arm,
 * `BENCH_HOP_CPU_CALLS` (3,000) sequential calls: the CPU of the process in the middle (every
 * thread's `/proc/<pid>/task/*\/schedstat`, ns), of its echo child, and of this process (the
 * caller: `mcpool-client` for a daemon, the bench's line client for the relay), each per
 * call, and the calls' p50. Each CLI given is one more daemon arm (a build before a change,
 * named by the folder its dist/ is in), beside this checkout's; every arm gets 10,000
 * warm-up calls, then `BENCH_HOP_CPU_ROUNDS` (6) rounds in alternating order. Prints one
 * JSON object with the medians, and a table on stderr.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { basename, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { connect } from "mcpool-client";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, cliPath, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { cpuUs, descendants } from "./lib/procs.mjs";
import { note, round } from "./lib/report.mjs";
import { median, percentile } from "./lib/stats.mjs";

const argv = process.argv.slice(2);
const outAt = argv.indexOf("--out");
const out = outAt === -1 ? undefined : argv[outAt + 1];
const others = argv.filter((_, i) => i !== outAt && i !== outAt + 1);
const ROUNDS = Number(process.env.BENCH_HOP_CPU_ROUNDS ?? 6);
const CALLS = Number(process.env.BENCH_HOP_CPU_CALLS ?? 3000);
const WARMUP = Number(process.env.BENCH_HOP_CPU_WARMUP ?? 10_000);
const ARGS = { text: "hello" };

/** This process's CPU so far, µs. */
const selfUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

function armOf(label, pid, call) {
  const [child] = descendants(pid);
  if (child === undefined) throw new Error(`${label}: no echo child under pid ${pid}`);
  return { label, pid, child, call, middle: [], echo: [], caller: [], p50: [] };
}

async function daemonArm(label, cli) {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home, { cli });
  const pool = await connect({ socketPath: home.socketPath, clientName: `hop-cpu-${label}` });
  onCleanup(() => pool.close());
  await waitReady(pool, 1);
  return armOf(label, daemon.pid, () => pool.call("echo__echo", ARGS));
}

async function relayArm() {
  const home = benchHome();
  const socket = join(home.dir, "relay.sock");
  const echo = rows.echo();
  const agent = await startAgent("bare-relay", [socket, echo.command, ...echo.args]);
  const relay = await lineClient(socket);
  onCleanup(() => relay.close());
  return armOf("relay", agent.pid, () =>
    relay.request("tools/call", { name: "echo", arguments: ARGS }),
  );
}

async function measure(arm) {
  const samples = new Array(CALLS);
  const before = [cpuUs(arm.pid), cpuUs(arm.child), selfUs()];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await arm.call();
    samples[i] = performance.now() - started;
  }
  const after = [cpuUs(arm.pid), cpuUs(arm.child), selfUs()];
  arm.middle.push((after[0] - before[0]) / CALLS);
  arm.echo.push((after[1] - before[1]) / CALLS);
  arm.caller.push((after[2] - before[2]) / CALLS);
  arm.p50.push(percentile(samples, 50));
}

run("hop CPU", async () => {
  const loadStart = loadavg()[0];
  const arms = [];
  for (const cli of others) {
    arms.push(await daemonArm(basename(dirname(dirname(dirname(cli)))), cli));
  }
  arms.push(await daemonArm("this", cliPath));
  arms.push(await relayArm());
  for (const arm of arms) for (let i = 0; i < WARMUP; i++) await arm.call();
  for (let r = 0; r < ROUNDS; r++) {
    for (const arm of r % 2 ? [...arms].reverse() : arms) await measure(arm);
  }
  const relay = arms.at(-1);
  const summary = {
    name: "hop.cpuPerCall",
    unit: "µs",
    calls: CALLS,
    rounds: ROUNDS,
    warmup: WARMUP,
    loadavg1m: [round(loadStart), round(loadavg()[0])],
    arms: Object.fromEntries(
      arms.map((arm) => [
        arm.label,
        {
          middle: round(median(arm.middle)),
          echoChild: round(median(arm.echo)),
          caller: round(median(arm.caller)),
          p50Ms: round(median(arm.p50), 4),
          middleVsRelay: round(median(arm.middle) / median(relay.middle)),
          callerVsRelay: round(median(arm.caller) / median(relay.caller)),
          p50VsRelay: round(median(arm.p50) / median(relay.p50)),
          rounds: {
            middle: arm.middle.map((v) => round(v)),
            caller: arm.caller.map((v) => round(v)),
            p50Ms: arm.p50.map((v) => round(v, 4)),
          },
        },
      ]),
    ),
  };
  for (const arm of arms) {
    const s = summary.arms[arm.label];
    note(
      `${arm.label.padEnd(12)} middle ${s.middle} µs (${s.middleVsRelay}×)  echo ${s.echoChild} µs  ` +
        `caller ${s.caller} µs (${s.callerVsRelay}×)  p50 ${s.p50Ms} ms (${s.p50VsRelay}×)`,
    );
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (out !== undefined) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  return [];
});
