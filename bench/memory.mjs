/**
 * Memory: the daemon's RSS (VmRSS) with one ready echo server — idle after
 * some work, with 20 connected agents, and with 200 — and from those the cost of each
 * connection beyond the 20th, idle and after every connection has called. The agents are
 * mcpool-client connections from this process (the daemon's RSS is what is measured). The
 * baseline is a bare Node process listening on a Unix socket.
 */
import { join } from "node:path";
import process from "node:process";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, client, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { rssMB } from "./lib/procs.mjs";
import { figure, note, round } from "./lib/report.mjs";

const FEW = 20;
const MANY = Number(process.env.BENCH_MEMORY_AGENTS ?? 200);
const CALLS_EACH = 20;
/** Long enough for the allocations of the step before to be collected or to stay. */
const SETTLE_MS = 2000;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

async function connectAll(home, from, to) {
  const pools = [];
  for (let i = from; i < to; i++) pools.push(await client(home, `bench-memory-${i}`));
  return pools;
}

async function callAll(pools) {
  await Promise.all(
    pools.map(async (pool) => {
      for (let i = 0; i < CALLS_EACH; i++) await pool.call("echo__echo", { text: "memory" });
    }),
  );
}

run("Memory", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const bare = await startAgent("bare-node", [join(home.dir, "bare.sock")]);

  const first = await client(home, "bench-memory-first");
  await waitReady(first, 1);
  await callAll([first]);
  await first.close();
  await settle();
  const idleMB = rssMB(daemon.pid);
  const bareMB = rssMB(bare.pid);

  const few = await connectAll(home, 0, FEW);
  await callAll(few);
  await settle();
  const fewMB = rssMB(daemon.pid);

  const more = await connectAll(home, FEW, MANY);
  await settle();
  const manyIdleMB = rssMB(daemon.pid);
  await callAll([...few, ...more]);
  await settle();
  const manyCallingMB = rssMB(daemon.pid);
  const extra = MANY - FEW;
  const perIdleKB = ((manyIdleMB - fewMB) * 1024) / extra;
  const perCallingKB = ((manyCallingMB - fewMB) * 1024) / extra;
  note(
    `daemon RSS: idle ${round(idleMB)} MB, ${FEW} agents ${round(fewMB)} MB, ${MANY} idle ${round(manyIdleMB)} MB, ${MANY} after calling ${round(manyCallingMB)} MB`,
  );
  await Promise.all([...few, ...more].map((pool) => pool.close()));
  await bare.stop();
  await daemon.stop();

  const baseline = {
    baseline: bareMB,
    baselineLabel: "bare Node process listening on a Unix socket",
  };
  return [
    figure({
      name: "memory.idleRss",
      unit: "MB",
      value: idleMB,
      ...baseline,
      checks: [["value", "<=", 60]],
    }),
    figure({
      name: "memory.rss20Agents",
      unit: "MB",
      value: fewMB,
      ...baseline,
      checks: [["value", "<=", 80]],
    }),
    figure({
      name: "memory.perConnectionIdle",
      unit: "KB",
      value: perIdleKB,
      checks: [["value", "<=", 200]],
      connections: MANY,
    }),
    figure({
      name: "memory.perConnectionCalling",
      unit: "KB",
      value: perCallingKB,
      checks: [["value", "<=", 200]],
      connections: MANY,
      callsEach: CALLS_EACH,
    }),
  ];
});
