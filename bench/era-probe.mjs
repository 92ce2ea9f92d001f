#!/usr/bin/env node
/**
 * What finding a stdio server's era on a spare child costs.
 * A row's first dial without a verdict starts a spare child for `server/discover` and only
 * then the serving child (sequential); a pinned row starts one child. Median ms from sync()
 * to ready (its tools listed), over RUNS fresh pools (no tools cache, so every run is a
 * first-ever dial), and the processes the dial started, for a dual-era server (SDK v2,
 * legacy: 'serve'), a legacy SDK v1 server (echo: it answers the probe -32601), a legacy
 * server that exits on any pre-initialize request, and the reference servers
 * (server-everything, -filesystem, -memory: SDK v1, 2025-11-25 only). Each child is started
 * through `sh`, which notes its pid in a file before it execs the server.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { McpPool } from "../dist/index.js";
import { echoServerPath } from "../dist/demo/echo-server-path.js";
import { figure } from "./lib/report.mjs";
import { onCleanup, run } from "./lib/harness.mjs";

const RUNS = Number(process.env.RUNS ?? 7);
const fixtures = fileURLToPath(import.meta.resolve("../test/fixtures/"));
const require = createRequire(import.meta.url);
const reference = (name) =>
  join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), "dist", "index.js");
const dir = mkdtempSync(join(tmpdir(), "mcpool-bench-era-"));
onCleanup(() => rmSync(dir, { recursive: true, force: true }));
const servers = {
  dual: [`${fixtures}dual-stdio.mjs`],
  echo: [echoServerPath],
  strict: [`${fixtures}strict-legacy.mjs`],
  everything: [reference("server-everything")],
  filesystem: [reference("server-filesystem"), dir],
  memory: [reference("server-memory")],
};
/** Where each child started notes its pid. */
const pids = join(dir, "pids");

async function readyMs(args, protocol) {
  writeFileSync(pids, "");
  const noted = ["-c", `echo $$ >> '${pids}'; exec "$0" "$@"`, process.execPath, ...args];
  const env = { MEMORY_FILE_PATH: join(dir, "memory.jsonl") };
  const row = { id: "s", transport: "stdio", command: "/bin/sh", args: noted, env, protocol };
  const pool = new McpPool({ clientName: "bench-era-probe", log: {} });
  try {
    const started = performance.now();
    await pool.sync([row]);
    const ms = performance.now() - started;
    const state = pool.state().find((s) => s.id === "s");
    if (state?.status !== "ready") throw new Error(`${args[0]} ${protocol}: ${state?.error}`);
    const processes = readFileSync(pids, "utf8").trim().split("\n").length;
    return { ms, era: state.era, processes };
  } finally {
    await pool.close();
  }
}

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

run("Era probe", async () => {
  const figures = [];
  for (const [name, args] of Object.entries(servers)) {
    const pinned = name === "dual" ? "2026-07-28" : "legacy";
    const auto = [];
    const pin = [];
    let era;
    const processes = {};
    for (let i = 0; i < RUNS; i++) {
      const found = await readyMs(args, "auto");
      auto.push(found.ms);
      era = found.era;
      processes.auto = found.processes;
      const served = await readyMs(args, pinned);
      pin.push(served.ms);
      processes.pinned = served.processes;
    }
    const base = median(pin);
    figures.push(
      figure({
        name: `era-probe.${name}.first-dial`,
        unit: "ms",
        value: Math.round(median(auto)),
        baseline: Math.round(base),
        baselineLabel: `pinned ${pinned}`,
        era,
        processes,
        runs: { auto, pinned: pin },
      }),
    );
  }
  return figures;
});
