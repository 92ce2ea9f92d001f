/**
 * `node bench/hop-alloc.mjs [--out FILE] [--top N]`: what a warm sequential echo call
 * allocates, by function, with the daemon (`createDaemon` of this checkout's dist/) and
 * `mcpool-client` in this one process and the echo child outside it. V8's sampling heap
 * profiler counts every sampled allocation, the young ones a scavenge freed included, so
 * the figure is the garbage a call leaves for the collector: unlike a time, load does not
 * move it. Also this process's CPU per call (daemon and client together), as a second look
 * beside bench/hop-cpu.mjs, and the collections over those calls (v8.GCProfiler): how many,
 * their cost, and the bytes the scavenges moved to the old generation a call — what a call
 * leaves alive past a scavenge, which the collector pays to copy and later to mark.
 * 10,000 warm-up calls, then `BENCH_HOP_ALLOC_CALLS` (5,000) sampled and as many timed.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import process from "node:process";
import v8 from "node:v8";
import { connect } from "mcpool-client";
import { createDaemon } from "../dist/daemon/daemon.js";
import { benchHome, rows } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { note, round } from "./lib/report.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(name);
  return at === -1 ? fallback : argv[at + 1];
};
const out = option("--out", undefined);
const top = Number(option("--top", 30));
const CALLS = Number(process.env.BENCH_HOP_ALLOC_CALLS ?? 5000);
const WARMUP = 10_000;
const ARGS = { text: "hello" };
/** Bytes between samples: small, as a call allocates a few hundred bytes in a place. */
const SAMPLING_INTERVAL = 128;

/** `url:line` of a frame, short: the part of the path from dist/ or node_modules/ on. */
function where(frame) {
  const url = frame.url.replace(/^.*\/(dist|node_modules)\//, "$1/").replace(/^file:\/\/.*\//, "");
  return `${frame.functionName || "(anonymous)"} ${url}:${frame.lineNumber + 1}`;
}

/** Used bytes of V8's old space in one GCProfiler look. */
const oldSpace = (look) =>
  look.heapSpaceStatistics.find((space) => space.spaceName === "old_space").spaceUsedSize;

/** The collections GCProfiler saw over `calls`: counts, µs a call, bytes promoted a call. */
function collections(statistics, calls) {
  const count = (type) => statistics.filter((gc) => gc.gcType === type).length;
  const scavenges = statistics.filter((gc) => gc.gcType === "Scavenge");
  const promoted = scavenges.reduce(
    (sum, gc) => sum + oldSpace(gc.afterGC) - oldSpace(gc.beforeGC),
    0,
  );
  return {
    scavenges: count("Scavenge"),
    markCompacts: count("MarkSweepCompact"),
    gcUsPerCall: round(statistics.reduce((sum, gc) => sum + gc.cost, 0) / calls),
    promotedBytesPerCall: round(promoted / calls),
  };
}

/** Bytes per call by the function that allocated them, largest first. */
function byFunction(profile, calls) {
  const totals = new Map();
  let all = 0;
  const walk = (node) => {
    const key = where(node.callFrame);
    totals.set(key, (totals.get(key) ?? 0) + node.selfSize);
    all += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const rowsOut = [...totals]
    .sort((a, b) => b[1] - a[1])
    .map(([fn, bytes]) => ({ fn, bytes: round(bytes / calls) }));
  return { perCall: round(all / calls), rows: rowsOut };
}

run("hop allocations", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  // The temp home's XDG folders, as a daemon of its own would have them.
  for (const key of Object.keys(home.env)) {
    if (key.startsWith("XDG_") || key === "HOME") process.env[key] = home.env[key];
  }
  const quiet = () => undefined;
  const daemon = await createDaemon({
    socketPath: home.socketPath,
    configPath: home.configPath,
    log: {
      info: quiet,
      error: (m) => process.stderr.write(`${m}\n`),
      path: join(home.dir, "log"),
      problem: undefined,
    },
  });
  const started = await daemon.start();
  if (!started.started) throw new Error(`the daemon did not start: ${JSON.stringify(started)}`);
  onCleanup(() => daemon.stop());
  const pool = await connect({ socketPath: home.socketPath, clientName: "hop-alloc" });
  onCleanup(() => pool.close());
  await daemon.settled();
  for (let i = 0; i < WARMUP; i++) await pool.call("echo__echo", ARGS);

  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < CALLS; i++) await pool.call("echo__echo", ARGS);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  session.disconnect();

  const gc = new v8.GCProfiler();
  gc.start();
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await pool.call("echo__echo", ARGS);
  const cpu = process.cpuUsage(before);
  const collected = collections(gc.stop().statistics, CALLS);

  const allocated = byFunction(profile, CALLS);
  const summary = {
    name: "hop.allocationsPerCall",
    unit: "B",
    value: allocated.perCall,
    cpuPerCallUs: round((cpu.user + cpu.system) / CALLS),
    ...collected,
    calls: CALLS,
    warmup: WARMUP,
    samplingInterval: SAMPLING_INTERVAL,
    top: allocated.rows.slice(0, top),
  };
  note(
    `${summary.value} B a call, ${summary.cpuPerCallUs} µs of CPU a call (daemon and client); ` +
      `${collected.scavenges} scavenges, ${collected.markCompacts} full collections, ` +
      `${collected.gcUsPerCall} µs of collection and ${collected.promotedBytesPerCall} B promoted a call`,
  );
  for (const { fn, bytes } of summary.top) note(`${String(bytes).padStart(7)} B  ${fn}`);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (out !== undefined) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  return [];
});
