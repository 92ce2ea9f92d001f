/**
 * `npm run bench:profile`: the hop.mjs and throughput.mjs hot paths under `node --cpu-prof`. For each
 * workload a daemon is started with --cpu-prof in a temp home, driven, stopped with SIGTERM
 * (the profile is written on exit) and analysed; the hop workload's client side (this
 * process) is profiled too, through the inspector. Profiles are kept for DevTools.
 *   node bench/profile.mjs [--dir DIR] [--top N]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { connect } from "mcpool-client";
import { analyse, describe } from "./analyse-cpuprofile.mjs";
import { benchHome, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { note } from "./lib/report.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args[at + 1];
};
const dir = option("--dir", undefined) ?? mkdtempSync(join(tmpdir(), "mcpool-profile-"));
const top = Number(option("--top", 25));
// Sampling every 250 µs instead of V8's 1 ms: a call takes a fraction of a millisecond.
const INTERVAL_US = 250;
const SEQUENTIAL_CALLS = 5000;
const CONNECTIONS = 16;
const CONCURRENT_MS = 5000;
const ARGS = { text: "hello" };
/** Now on V8's profile clock (monotonic µs), so windows can be cut from a daemon's profile. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function profiledDaemon(label, drive) {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const profileDir = join(dir, label);
  mkdirSync(profileDir, { recursive: true });
  const daemon = await startDaemon(home, {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${INTERVAL_US}`],
  });
  const clients = [];
  for (let i = 0; i < (label === "throughput" ? CONNECTIONS : 1); i++) {
    const pool = await connect({ socketPath: home.socketPath, clientName: `profile-${i}` });
    onCleanup(() => pool.close());
    clients.push(pool);
  }
  await waitReady(clients[0], 1);
  const summary = await drive(clients);
  // What the daemon does when its clients hang up, apart from the workload itself.
  const closing = { fromUs: nowUs() };
  await Promise.all(clients.map((pool) => pool.close()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  closing.toUs = nowUs();
  await daemon.stop();
  const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
  if (!file) throw new Error(`the daemon wrote no profile in ${profileDir}`);
  return { file: join(profileDir, file), summary, closing };
}

async function sequential([pool]) {
  for (let i = 0; i < 500; i++) await pool.call("echo__echo", ARGS);
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: INTERVAL_US });
  await session.post("Profiler.start");
  const window = { fromUs: nowUs() };
  const started = performance.now();
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) await pool.call("echo__echo", ARGS);
  const ms = performance.now() - started;
  window.toUs = nowUs();
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  const clientFile = join(dir, "hop-client.cpuprofile");
  writeFileSync(clientFile, JSON.stringify(profile));
  return { calls: SEQUENTIAL_CALLS, meanMs: ms / SEQUENTIAL_CALLS, clientFile, window };
}

async function concurrent(clients) {
  const window = { fromUs: nowUs() };
  const deadline = performance.now() + CONCURRENT_MS;
  let calls = 0;
  await Promise.all(
    clients.map(async (pool) => {
      while (performance.now() < deadline) {
        await pool.call("echo__echo", ARGS);
        calls += 1;
      }
    }),
  );
  window.toUs = nowUs();
  return { calls, perSecond: Math.round((calls / CONCURRENT_MS) * 1000), window };
}

run("profile", async () => {
  note(`profiles in ${dir}`);
  const hop = await profiledDaemon("hop", sequential);
  const throughput = await profiledDaemon("throughput", concurrent);
  const load = (file) => JSON.parse(readFileSync(file, "utf8"));
  const [hopDaemon, hopClient, throughputDaemon] = [
    load(hop.file),
    load(hop.summary.clientFile),
    load(throughput.file),
  ];
  const report = [
    describe(
      analyse(hopDaemon, hop.summary.window),
      top,
      `daemon, hop workload (${hop.summary.calls} sequential echo calls, ${hop.summary.meanMs.toFixed(3)} ms mean) — ${hop.file}`,
    ),
    describe(
      analyse(hopClient),
      top,
      `client (this process), hop workload — ${hop.summary.clientFile}`,
    ),
    describe(
      analyse(throughputDaemon, throughput.summary.window),
      top,
      `daemon, throughput workload (${CONNECTIONS} connections, ${throughput.summary.perSecond} calls/s) — ${throughput.file}`,
    ),
    describe(
      analyse(throughputDaemon, throughput.closing),
      10,
      `daemon, throughput: the ${CONNECTIONS} clients hang up (${throughput.summary.calls} calls made on them)`,
    ),
  ];
  process.stderr.write(`\n${report.join("\n\n────────────────────────────────────────\n\n")}\n`);
  return [];
});
