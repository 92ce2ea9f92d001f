#!/usr/bin/env node
/**
 * What finding a stdio server's era on a spare child costs.
 * A row's first dial without a verdict starts a spare child for `server/discover` and only
 * then the serving child (sequential); a pinned row starts one child. Median ms from sync()
 * to ready, over RUNS fresh pools (no tools cache, so every run is a first-ever dial), for a
 * dual-era server (SDK v2, legacy: 'serve'), a legacy SDK v1 server (echo: it answers the
 * probe -32601) and a legacy server that exits on any pre-initialize request.
 */
import { performance } from "node:perf_hooks";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { McpPool } from "../dist/index.js";
import { echoServerPath } from "../dist/demo/echo-server-path.js";
import { figure } from "./lib/report.mjs";
import { run } from "./lib/harness.mjs";

const RUNS = Number(process.env.RUNS ?? 7);
const fixtures = fileURLToPath(import.meta.resolve("../test/fixtures/"));
const servers = {
  dual: `${fixtures}dual-stdio.mjs`,
  echo: echoServerPath,
  strict: `${fixtures}strict-legacy.mjs`,
};

async function readyMs(args, protocol) {
  const row = { id: "s", transport: "stdio", command: process.execPath, args, protocol };
  const pool = new McpPool({ clientName: "bench-era-probe", log: {} });
  try {
    const started = performance.now();
    await pool.sync([row]);
    const ms = performance.now() - started;
    const state = pool.state().find((s) => s.id === "s");
    if (state?.status !== "ready") throw new Error(`${args[0]} ${protocol}: ${state?.error}`);
    return { ms, era: state.era };
  } finally {
    await pool.close();
  }
}

const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

run("Era probe", async () => {
  const figures = [];
  for (const [name, path] of Object.entries(servers)) {
    const pinned = name === "dual" ? "2026-07-28" : "legacy";
    const auto = [];
    const pin = [];
    let era;
    for (let i = 0; i < RUNS; i++) {
      const found = await readyMs([path], "auto");
      auto.push(found.ms);
      era = found.era;
      pin.push((await readyMs([path], pinned)).ms);
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
      }),
    );
  }
  return figures;
});
