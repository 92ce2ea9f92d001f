/**
 * Host eras: what serving a 2026-07-28 host costs next to a legacy one,
 * and what moving the legacy hosts to SDK v2 too would cost them.
 * The bridge's server side is SDK v1's `Server` for a legacy host and SDK v2's entries for a
 * modern one (src/bridge/modern/era-switch.ts): the same echo call, sequential, p50/p99, through the
 * daemon's MCP socket (the lean `mcpool bridge`) by the SDK v1 Client (legacy) and by the
 * SDK v2 Client pinned to 2026-07-28 (modern), alternating rounds so drift hits both. Then the
 * daemon's RSS with one idle legacy host session, and after a modern host's session has
 * loaded SDK v2 into it (the v2 side is loaded on the first modern host only).
 * Then the prototype of the other choice, in this process: a legacy host (SDK v1 Client) on
 * an in-memory pair to `createBridge()`, served by today's SDK v1 `Server` against SDK v2's
 * `serveStdio` (which serves the legacy era too) with the bridge's v2 server (modern/bridge.ts),
 * alternating rounds; and a fresh Node's RSS once the server side of each is loaded.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { connect } from "mcpool-client";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { benchHome, client, repoRoot, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { rssMB } from "./lib/procs.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { percentile } from "./lib/stats.mjs";

const CALLS = Number(process.env.BENCH_HOST_ERAS_CALLS ?? 500);
const WARMUP = Number(process.env.BENCH_HOST_ERAS_WARMUP ?? 1000);
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
  const host = new LegacyClient({ name: "bench-host-eras-legacy", version: "0" });
  await host.connect(new LegacyStdio(entry(home)));
  return host;
}

async function modernHost(home) {
  const host = new ModernClient(
    { name: "bench-host-eras-modern", version: "0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await host.connect(new ModernStdio(entry(home)));
  if (host.getProtocolEra() !== "modern") throw new Error("the modern host did not connect modern");
  return host;
}

async function timed(host, calls, samples) {
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await host.callTool({ name: "echo", arguments: { text: "host-eras" } });
    samples?.push(performance.now() - started);
  }
}

run("Host eras", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-host-eras");
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

  // The prototype: the same legacy host, served by SDK v1 (today) or by SDK v2.
  const { createBridge } = await import(join(repoRoot, "dist/bridge/index.js"));
  const { connectionIdentity } = await import(join(repoRoot, "dist/bridge/core/conversation.js"));
  const upstream = await connect({ socketPath: home.socketPath, clientName: "bench-host-eras" });
  const bridge = await createBridge({ client: upstream, server: "echo" });
  const served = { v1: [], v2: [] };
  const hosts = {};
  for (const side of ["v1", "v2"]) {
    const [hostEnd, bridgeEnd] = InMemoryTransport.createLinkedPair();
    if (side === "v1") await bridge.createServer().connect(bridgeEnd);
    else {
      const modernSide = await bridge.modern();
      const identity = connectionIdentity({});
      serveStdio(() => modernSide.createServer(identity, false), { transport: bridgeEnd });
    }
    const host = new LegacyClient({ name: `bench-host-eras-${side}`, version: "0" });
    await host.connect(hostEnd);
    await timed(host, WARMUP);
    hosts[side] = host;
  }
  for (let r = 0; r < ROUNDS; r++) {
    await timed(hosts.v1, per, served.v1);
    await timed(hosts.v2, per, served.v2);
  }
  await Promise.all(Object.values(hosts).map((host) => host.close()));
  await bridge.close();
  await upstream.close();
  await daemon.stop();
  const loadedMB = (modules) =>
    Number(
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `${modules.map((m) => `await import(${JSON.stringify(m)});`).join("")} globalThis.gc?.(); process.stdout.write(String(process.memoryUsage().rss / 1048576));`,
        ],
        { cwd: repoRoot },
      ).toString(),
    );
  const v1Only = [
    "@modelcontextprotocol/sdk/server/index.js",
    "@modelcontextprotocol/sdk/server/stdio.js",
  ];
  const v1MB = loadedMB(v1Only);
  const v2MB = loadedMB(["@modelcontextprotocol/server", "@modelcontextprotocol/server/stdio"]);
  const bothMB = loadedMB([
    ...v1Only,
    "@modelcontextprotocol/server",
    "@modelcontextprotocol/server/stdio",
  ]);
  const q = (arm, at) => percentile(served[arm], at);

  const p = (arm, q) => percentile(samples[arm], q);
  note(
    `echo through the MCP socket: legacy host p50 ${round(p("legacy", 50))} ms p99 ${round(p("legacy", 99))} ms; modern host p50 ${round(p("modern", 50))} ms p99 ${round(p("modern", 99))} ms`,
  );
  note(
    `daemon RSS: one legacy host session ${round(legacyRss)} MB; and a modern one too (SDK v2 loaded) ${round(bothRss)} MB`,
  );
  note(
    `a legacy host in process: SDK v1 Server p50 ${round(q("v1", 50))} ms, SDK v2 serveStdio p50 ${round(q("v2", 50))} ms; a fresh Node with the server side loaded: v1 ${round(v1MB)} MB, v2 ${round(v2MB)} MB, both ${round(bothMB)} MB`,
  );
  return [
    figure({
      name: "hostEras.legacyHostOnV2P50",
      unit: "ms",
      value: q("v2", 50),
      baseline: q("v1", 50),
      baselineLabel: "the same legacy host on SDK v1's Server (today)",
      checks: [["ratio", "<=", 1.05]],
      calls: CALLS,
    }),
    figure({
      name: "hostEras.serverSideRssV2",
      unit: "MB",
      value: v2MB,
      baseline: v1MB,
      baselineLabel: "a fresh Node with SDK v1's server side loaded",
    }),
    figure({
      name: "hostEras.serverSideRssBoth",
      unit: "MB",
      value: bothMB,
      baseline: v1MB,
      baselineLabel: "a fresh Node with SDK v1's server side loaded",
    }),
    figure({
      name: "hostEras.modernHopP50",
      unit: "ms",
      value: p("modern", 50),
      baseline: p("legacy", 50),
      baselineLabel: "the same call by a legacy host (SDK v1 Server side)",
      checks: [["ratio", "<=", 1.05]],
      calls: CALLS,
    }),
    figure({
      name: "hostEras.modernHopP99",
      unit: "ms",
      value: p("modern", 99),
      baseline: p("legacy", 99),
      baselineLabel: "the same call by a legacy host (SDK v1 Server side)",
      calls: CALLS,
    }),
    figure({
      name: "hostEras.rssWithModernHost",
      unit: "MB",
      value: bothRss,
      baseline: legacyRss,
      baselineLabel: "the daemon serving one legacy host session on its MCP socket",
    }),
  ];
});
