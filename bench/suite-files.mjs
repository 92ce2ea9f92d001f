#!/usr/bin/env node
/**
 * `node bench/suite-files.mjs`: after a whole `vitest run`, keeps what each test file took
 * (vitest's own record of the run, node_modules/.vite/vitest/…/results.json) in
 * bench/figures/suite-files.json. test/sequencer.ts starts the longest files first from it,
 * so that on a fresh checkout (no vitest cache) the workers end together instead of one
 * running a two-minute file alone at the end. Prints the total and the ten longest files.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath, URL } from "node:url";
import process from "node:process";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".vite", "vitest");
const OUT = join(ROOT, "bench", "figures", "suite-files.json");

/** The results.json of the latest run: vitest keeps one per config hash. */
function latestResults() {
  let latest;
  for (const dir of readdirSync(CACHE)) {
    const file = join(CACHE, dir, "results.json");
    try {
      const mtime = statSync(file).mtimeMs;
      if (latest === undefined || mtime > latest.mtime) latest = { file, mtime };
    } catch {
      // A directory without results: not a run's.
    }
  }
  if (latest === undefined) {
    console.error(`bench/suite-files: no results.json under ${CACHE}; run the whole suite first`);
    process.exit(1);
  }
  return latest;
}

const { file, mtime } = latestResults();
const { results } = JSON.parse(readFileSync(file, "utf8"));
const files = Object.fromEntries(
  results
    .map(([key, { duration }]) => [key, Math.round(duration)])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
const totalMs = Object.values(files).reduce((sum, ms) => sum + ms, 0);
const figure = {
  name: "suite.files.ms",
  unit: "ms",
  measured: new Date(mtime).toISOString(),
  files,
  totalMs,
  environment: {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    platform: process.platform,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadavg1m: os.loadavg()[0],
  },
};
writeFileSync(OUT, `${JSON.stringify(figure, null, 2)}\n`);
const longest = Object.entries(files)
  .sort(([, a], [, b]) => b - a)
  .slice(0, 10);
console.error(`${Object.keys(files).length} files, ${(totalMs / 1000).toFixed(0)} s in all`);
for (const [key, ms] of longest) console.error(`${(ms / 1000).toFixed(1).padStart(7)} s  ${key}`);
