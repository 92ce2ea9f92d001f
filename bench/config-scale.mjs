/**
 * Config scale: an `mcp.json` of 1k, 3k, 10k and 30k lazy stdio rows.
 * In-process: parse + validate (parseMcpJson, validateServers) and a reconcile of a lazy
 * McpPool with the daemon's file tools cache (sync, then state()), each timed once per size
 * after a warm-up on the smallest. Then a real daemon per size: the file is saved over an
 * empty config while one connection sends `hello` back to back and another polls `status`
 * until every row is registered; the slowest hello and status answers are the figures.
 * Linearity is the ms per 1,000 rows at 30k over the same at 3k (1.0 is linear).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { McpPool } from "../dist/index.js";
import { parseMcpJson, validateServers } from "../dist/config/index.js";
import { createFileToolsCache } from "../dist/daemon/stores/tools-cache.js";
import { benchHome, client, startDaemon } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { figure, note } from "./lib/report.mjs";

const SIZES = (process.env.BENCH_CONFIG_SCALE_ROWS ?? "1000,3000,10000,30000")
  .split(",")
  .map(Number);
/** The size the ≤ 1 s target is judged at. */
const TARGET_ROWS = 10_000;
const TARGET_MS = 1000;
/** How often the status poller asks; each answer lists every row, so not back to back. */
const STATUS_EVERY_MS = Number(process.env.BENCH_CONFIG_SCALE_STATUS_EVERY_MS ?? 200);
/** A daemon that has not registered every row in this long is stuck. */
const LOAD_BOUND_MS = 180_000;

function servers(count) {
  const out = {};
  for (let i = 0; i < count; i++) {
    out[`row-${i}`] = { command: "node", args: ["server.js", "--port", String(i)], lazy: true };
  }
  return out;
}

const configText = (count) => JSON.stringify({ mcpServers: servers(count) }, null, 2);

function inProcess(count) {
  const text = configText(count);
  const started = performance.now();
  const parsed = parseMcpJson(text, { env: {} });
  const problems = validateServers(parsed.rows);
  const parseMs = performance.now() - started;
  if (parsed.rows.length !== count || problems.length > 0)
    throw new Error(`expected ${count} valid rows, got ${parsed.rows.length} and ${problems[0]}`);
  return { rows: parsed.rows, parseMs };
}

async function reconcile(rows) {
  const pool = new McpPool({
    clientName: "bench",
    lazy: true,
    log: {},
    toolsCache: createFileToolsCache(mkdtempSync(join(tmpdir(), "mcpool-config-scale-cache-"))),
  });
  try {
    const started = performance.now();
    await pool.sync(rows);
    const registered = pool.state().length;
    const ms = performance.now() - started;
    if (registered !== rows.length) throw new Error(`registered ${registered} of ${rows.length}`);
    return ms;
  } finally {
    await pool.close();
  }
}

/** One daemon, its config swapped for `count` rows while hello and status are timed. */
async function daemonLoad(count) {
  const home = benchHome("mcpool-config-scale-");
  home.writeConfig({});
  const daemon = await startDaemon(home);
  try {
    const pinger = await lineClient(home.socketPath);
    const watcher = await client(home, "config-scale-status");
    const hello = { protocolVersion: 1, clientName: "config-scale", pid: process.pid };
    await pinger.request("hello", hello);

    let done = false;
    let maxHello = 0;
    let hellos = 0;
    const pinging = (async () => {
      while (!done) {
        const t = performance.now();
        await pinger.request("hello", hello);
        maxHello = Math.max(maxHello, performance.now() - t);
        hellos++;
      }
    })();

    const started = performance.now();
    home.writeConfig(servers(count));
    let maxStatus = 0;
    let loadedMs;
    while (loadedMs === undefined) {
      const t = performance.now();
      const status = await watcher.status();
      maxStatus = Math.max(maxStatus, performance.now() - t);
      if (status.servers.length === count) loadedMs = performance.now() - started;
      else if (performance.now() - started > LOAD_BOUND_MS)
        throw new Error(`${status.servers.length} of ${count} rows after ${LOAD_BOUND_MS} ms`);
      else await new Promise((resolve) => setTimeout(resolve, STATUS_EVERY_MS));
    }
    done = true;
    await pinging;
    pinger.close();
    return { loadedMs, maxHello, maxStatus, hellos };
  } finally {
    await daemon.stop();
  }
}

run("Config scale", async () => {
  // Warm-up: the first parse and reconcile pay for JIT compilation.
  await reconcile(inProcess(SIZES[0]).rows);
  const measured = [];
  for (const count of SIZES) {
    const { rows, parseMs } = inProcess(count);
    const reconcileMs = await reconcile(rows);
    const daemon = await daemonLoad(count);
    note(
      `${count} rows: parse+validate ${parseMs.toFixed(0)} ms, reconcile ${reconcileMs.toFixed(0)} ms; daemon registered all in ${daemon.loadedMs.toFixed(0)} ms, max hello ${daemon.maxHello.toFixed(1)} ms (${daemon.hellos} sent), max status ${daemon.maxStatus.toFixed(1)} ms`,
    );
    measured.push({ count, parseMs, reconcileMs, ...daemon });
  }

  const figures = [];
  for (const m of measured) {
    const total = m.parseMs + m.reconcileMs;
    figures.push(
      figure({
        name: `configScale.rows${m.count / 1000}k.parseReconcile`,
        unit: "ms",
        value: total,
        baseline: null,
        checks: m.count === TARGET_ROWS ? [["value", "<=", TARGET_MS]] : [],
        parseValidateMs: m.parseMs,
        reconcileMs: m.reconcileMs,
      }),
      figure({
        name: `configScale.rows${m.count / 1000}k.maxHello`,
        unit: "ms",
        value: m.maxHello,
        baseline: null,
        daemonLoadedMs: m.loadedMs,
        maxStatusMs: m.maxStatus,
        hellos: m.hellos,
      }),
    );
  }
  const perK = (m) => (m.parseMs + m.reconcileMs) / (m.count / 1000);
  const small = measured.find((m) => m.count === 3000) ?? measured[0];
  const large = measured.at(-1);
  if (small && large && small !== large) {
    figures.push(
      figure({
        name: "configScale.linearity",
        unit: "ms per 1k rows",
        value: perK(large),
        baseline: perK(small),
        baselineLabel: `at ${small.count / 1000}k rows`,
        checks: [["ratio", "<=", 1.5]],
        targetText: `ms per 1k rows at ${large.count / 1000}k ≤ 1.5× that at ${small.count / 1000}k`,
      }),
    );
  }
  return figures;
});
