/**
 * P13 host eras (issue 31 item 6): what serving a 2026-07-28 host costs next to a legacy one.
 * The bridge's server side is SDK v1's `Server` for a legacy host and SDK v2's entries for a
 * modern one (src/bridge/era-switch.ts): the same echo call, sequential, p50/p99, through the
 * daemon's MCP socket (the lean `mcpool bridge`) by the SDK v1 Client (legacy) and by the
 * SDK v2 Client pinned to 2026-07-28 (modern), alternating rounds so drift hits both. Then the
 * daemon's RSS with one idle legacy host session, and after a modern host's session has
 * loaded SDK v2 into it (the v2 side is loaded on the first modern host only).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { benchHome, client, repoRoot, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { rssMB } from "./lib/procs.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const CALLS = Number(process.env.BENCH_P13_CALLS ?? 500);
const WARMUP = Number(process.env.BENCH_P13_WARMUP ?? 1000);
const ROUNDS = 10;
const SETTLE_MS = 2000;
const binJs = join(repoRoot, "dist/cli/bin.js");

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** `mcpool bridge --server echo` (lean: a byte pipe to the daemon's MCP socket) for `home`. */
function entry(home) {
  return {
    command: process.execPath,
    args: [binJs, "bridge", "--server", "echo", "--socket", home.socketPath],
    env: Object.fromEntries(Object.entries(home.env).filter(([, v]) => typeof v === "string")),
  };
}

async function legacyHost(home) {
  const host = new LegacyClient({ name: "bench-p13-legacy", version: "0" });
  await host.connect(new LegacyStdio(entry(home)));
  return host;
}

async function modernHost(home) {
  const host = new ModernClient(
    { name: "bench-p13-modern", version: "0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await host.connect(new ModernStdio(entry(home)));
  if (host.getProtocolEra() !== "modern") throw new Error("the modern host did not connect modern");
  return host;
}

async function timed(host, calls, samples) {
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await host.callTool({ name: "echo", arguments: { text: "p13" } });
    samples?.push(performance.now() - started);
  }
}

run("P13 host eras", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-p13");
  await waitReady(pool, 1);
  await pool.close();

  const legacy = await legacyHost(home);
  await timed(legacy, WARMUP);
  await settle();
  const legacyRss = rssMB(daemon.pid);

  const modern = await modernHost(home);
  await timed(modern, WARMUP);
  await settle();
  const bothRss = rssMB(daemon.pid);

  const samples = { legacy: [], modern: [] };
  const per = Math.ceil(CALLS / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    await timed(legacy, per, samples.legacy);
    await timed(modern, per, samples.modern);
  }
  await legacy.close();
  await modern.close();
  await daemon.stop();

  const p = (arm, q) => percentile(samples[arm], q);
  note(
    `echo through the MCP socket: legacy host p50 ${round(p("legacy", 50))} ms p99 ${round(p("legacy", 99))} ms; modern host p50 ${round(p("modern", 50))} ms p99 ${round(p("modern", 99))} ms`,
  );
  note(
    `daemon RSS: one legacy host session ${round(legacyRss)} MB; and a modern one too (SDK v2 loaded) ${round(bothRss)} MB`,
  );
  return [
    figure({
      name: "P13.modernHopP50",
      unit: "ms",
      value: p("modern", 50),
      baseline: p("legacy", 50),
      baselineLabel: "the same call by a legacy host (SDK v1 Server side)",
      checks: [["ratio", "<=", 1.05]],
      calls: CALLS,
    }),
    figure({
      name: "P13.modernHopP99",
      unit: "ms",
      value: p("modern", 99),
      baseline: p("legacy", 99),
      baselineLabel: "the same call by a legacy host (SDK v1 Server side)",
      calls: CALLS,
    }),
    figure({
      name: "P13.rssWithModernHost",
      unit: "MB",
      value: bothRss,
      baseline: legacyRss,
      baselineLabel: "the daemon serving one legacy host session on its MCP socket",
    }),
  ];
});
