/**
 * Attach: a new agent connects to a warm daemon and has a ~100-tool catalog,
 * vs the agent spawning, initializing and listing the same servers itself (in parallel, as
 * an agent would): server-everything, -memory, -filesystem and the echo fixture with enough
 * generated tools to reach ~100. Alternating rounds: one cold spawn, then a batch of attaches.
 */
import { performance } from "node:perf_hooks";
import { connect } from "mcpool-client";
import { benchHome, referenceRows, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { directClient, listAll } from "./lib/direct.mjs";
import { run } from "./lib/harness.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const TARGET_TOOLS = 100;
const ROUNDS = 5;
const ATTACHES_PER_ROUND = 40;

/** Spawns, initializes and lists every row at once; the tools listed, and when it was done. */
async function spawnAndList(servers) {
  const started = performance.now();
  const opened = await Promise.all(
    Object.values(servers).map(async (row) => {
      const direct = await directClient(row, "bench-attach");
      return { direct, tools: await listAll(direct.client) };
    }),
  );
  const ms = performance.now() - started;
  await Promise.all(opened.map(({ direct }) => direct.close()));
  return { ms, tools: opened.reduce((sum, o) => sum + o.tools.length, 0), opened };
}

async function attach(socketPath) {
  const started = performance.now();
  const pool = await connect({ socketPath, clientName: "bench-attach" });
  const catalog = await pool.catalog();
  const ms = performance.now() - started;
  await pool.close();
  return { ms, tools: catalog.reduce((sum, server) => sum + server.tools.length, 0) };
}

run("Attach", async () => {
  const home = benchHome();
  const servers = {
    ...referenceRows(home),
    echo: rows.echo(),
  };
  // Calibration (also the baseline's warm-up): how many tools the reference servers bring.
  const calibration = await spawnAndList(servers);
  const fixtureTools = Math.max(0, TARGET_TOOLS - calibration.tools);
  servers.echo = rows.echo({ FIXTURE_TOOLS: String(fixtureTools) });
  note(`reference servers + echo list ${calibration.tools} tools; echo gets ${fixtureTools} more`);

  home.writeConfig(servers);
  await startDaemon(home);
  const warm = await connect({ socketPath: home.socketPath, clientName: "bench-attach-wait" });
  await waitReady(warm, Object.keys(servers).length);
  await warm.close();
  for (let i = 0; i < 10; i++) await attach(home.socketPath);

  const spawned = [];
  const attached = [];
  let catalogTools = 0;
  let spawnedTools = 0;
  for (let pass = 0; pass < ROUNDS; pass++) {
    const cold = await spawnAndList(servers);
    spawned.push(cold.ms);
    spawnedTools = cold.tools;
    for (let i = 0; i < ATTACHES_PER_ROUND; i++) {
      const warmAttach = await attach(home.socketPath);
      attached.push(warmAttach.ms);
      catalogTools = warmAttach.tools;
    }
  }
  note(`catalog ${catalogTools} tools from the daemon; ${spawnedTools} listed directly`);
  const detail = {
    tools: catalogTools,
    attaches: attached.length,
    spawns: spawned.length,
    attachP99: round(percentile(attached, 99)),
    speedup: round(percentile(spawned, 50) / percentile(attached, 50)),
  };
  return [
    figure({
      name: "attach.p50",
      unit: "ms",
      value: percentile(attached, 50),
      baseline: percentile(spawned, 50),
      baselineLabel: "spawn + initialize + list the 4 servers directly (parallel)",
      checks: [
        ["value", "<=", 2],
        ["ratio", "<=", 0.01],
      ],
      ...detail,
    }),
  ];
});
