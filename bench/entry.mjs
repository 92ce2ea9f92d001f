/**
 * Entry: what one host session's server entry costs. Per entry — the server
 * itself, `mcpool bridge` through the SDK (main.js), the lean bridge (the `mcpool`
 * executable, a byte pipe to the daemon's MCP socket), a perl relay to that socket, and socat
 * and `nc -U` when this machine has them (wire prefers them to perl) — the time
 * from spawn to the tools/list answer (initialize, initialized and tools/list written at
 * once) and the VmRSS of the spawned process (and of it with its descendants, the whole
 * entry) at that moment, median of RUNS runs, on a warm
 * daemon. Floors: a bare `node` and a bare `perl` started the same way, answering one line.
 * Then the machine-wide figure: 3 hosts × 5 servers, each host session spawning its own
 * servers (unwired) against the same sessions wired (lean bridge, perl pipe), RSS summed over
 * every process involved, the daemon and its children included when wired.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { benchHome, client, repoRoot, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { descendants, kill, rssMB, totalRssMB, until } from "./lib/procs.mjs";
import { figure, note } from "./lib/report.mjs";
import { median } from "./lib/stats.mjs";

const RUNS = Number(process.env.BENCH_ENTRY_RUNS ?? 7);
const HOSTS = 3;
const mainJs = join(repoRoot, "dist/cli/main.js");
const binJs = join(repoRoot, "dist/cli/bin.js");
const { pipeCandidates } = await import(join(repoRoot, "dist/cli/hosts/pipe-entry.js"));
const { onPath } = await import(join(repoRoot, "dist/cli/service/env.js"));
const { mcpSocketPath } = await import(join(repoRoot, "dist/bridge/lean/mcp-socket-paths.js"));

const HANDSHAKE = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench-entry", version: "0" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join("");

/**
 * Spawns `command args`, writes `input`, resolves when a stdout line passes `done`: the ms
 * from spawn and the spawned process's RSS (and its tree's) then. `keep` leaves it running.
 */
function session(
  command,
  args,
  { input = HANDSHAKE, done = (l) => l.includes('"id":2'), env, keep = false } = {},
) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, {
      stdio: ["pipe", "pipe", "ignore"],
      env: env ?? process.env,
    });
    onCleanup(() => kill(child.pid));
    let out = "";
    const timer = setTimeout(() => {
      kill(child.pid);
      reject(new Error(`${command} ${args.join(" ").slice(0, 80)} gave no answer`));
    }, 60_000);
    child.stdout.on("data", (chunk) => {
      out += chunk.toString();
      if (!out.split("\n").slice(0, -1).some(done)) return;
      out = "";
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      clearTimeout(timer);
      const tree = [child.pid, ...descendants(child.pid)];
      const result = {
        ms,
        rss: rssMB(child.pid),
        treeRss: totalRssMB(tree),
        pid: child.pid,
        child,
      };
      if (!keep) {
        child.stdin.end();
        for (const pid of tree) kill(pid);
      }
      resolve(result);
    });
    child.stdin.on("error", () => undefined);
    child.stdin.write(input);
  });
}

async function medianOf(command, args, options) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await session(command, args, options));
  await until(() => runs.every((r) => !descendants(r.pid).length), 5_000);
  return {
    ms: median(runs.map((r) => r.ms)),
    rss: median(runs.map((r) => r.rss)),
    treeRss: median(runs.map((r) => r.treeRss)),
  };
}

const ONE_LINE = { input: "ping\n", done: (line) => line === "ping" };

run("Entry", async () => {
  const home = benchHome();
  const memoryDir = join(home.dir, "memory");
  mkdirSync(memoryDir, { recursive: true });
  const servers = {
    echo: rows.echo(),
    everything: rows.everything(),
    memory: rows.memory(join(memoryDir, "memory.json")),
    filesystem: rows.filesystem(home.dir),
    echo2: rows.echo({ ECHO_FLAVOUR: "two" }),
  };
  home.writeConfig(servers);
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-entry");
  await waitReady(pool, Object.keys(servers).length);
  const socket = (id) => mcpSocketPath(home.socketPath, id);
  await until(() => Object.keys(servers).every((id) => existsSync(socket(id))), 10_000);

  const bridge = (cli, id) => [cli, "bridge", "--server", id, "--socket", home.socketPath];
  /** The args `mcpool wire` writes for `tool`'s pipe to `id`'s socket. */
  const pipeArgs = (tool, id) =>
    pipeCandidates(home.socketPath, id).find((c) => c.tool === tool).args;
  const perl = (id) => pipeArgs("perl", id);
  const node = process.execPath;
  const bareNode = await medianOf(
    node,
    ["-e", "process.stdin.once('data',d=>process.stdout.write(d))"],
    ONE_LINE,
  );
  const barePerl = await medianOf("perl", ["-e", "$|=1;print scalar <STDIN>;<STDIN>"], ONE_LINE);
  const entries = {
    "echo itself": await medianOf(servers.echo.command, servers.echo.args),
    "everything itself": await medianOf(servers.everything.command, servers.everything.args),
    "mcpool bridge (SDK)": await medianOf(node, bridge(mainJs, "echo")),
    "lean bridge": await medianOf(node, bridge(binJs, "echo")),
    "perl pipe": await medianOf("perl", perl("echo")),
  };
  // The stock relays `mcpool wire` prefers to perl, measured when this machine has them.
  const found = ["socat", "nc"].filter((tool) => onPath(tool) !== undefined);
  for (const tool of found) entries[`${tool} pipe`] = await medianOf(tool, pipeArgs(tool, "echo"));
  for (const [name, m] of Object.entries({
    "bare node": bareNode,
    "bare perl": barePerl,
    ...entries,
  })) {
    note(
      `${name}: ${m.ms.toFixed(1)} ms to the answer, RSS ${m.rss.toFixed(1)} MB (tree ${m.treeRss.toFixed(1)} MB)`,
    );
  }

  // Machine-wide: 3 host sessions × 5 servers.
  const idle = async (starts) => {
    const kept = [];
    for (let h = 0; h < HOSTS; h++) for (const start of starts) kept.push(await start());
    const total = totalRssMB(kept.flatMap((r) => [r.pid, ...descendants(r.pid)]));
    for (const r of kept) {
      r.child.stdin.end();
      for (const pid of [r.pid, ...descendants(r.pid)]) kill(pid);
    }
    return total;
  };
  const ids = Object.keys(servers);
  const daemonTree = () => totalRssMB([daemon.pid, ...descendants(daemon.pid)]);
  const unwired = await idle(
    ids.map((id) => () => session(servers[id].command, servers[id].args, { keep: true })),
  );
  const wiredLean =
    (await idle(ids.map((id) => () => session(node, bridge(binJs, id), { keep: true })))) +
    daemonTree();
  const wiredPerl =
    (await idle(ids.map((id) => () => session("perl", perl(id), { keep: true })))) + daemonTree();
  note(
    `3 hosts × 5 servers: unwired ${unwired.toFixed(0)} MB, wired lean ${wiredLean.toFixed(0)} MB, wired perl ${wiredPerl.toFixed(0)} MB (daemon and its 5 children included)`,
  );

  const lean = entries["lean bridge"];
  const pipe = entries["perl pipe"];
  const sdk = entries["mcpool bridge (SDK)"];
  const echo = entries["echo itself"];
  const info = (name, unit, value, extra = {}) => figure({ name, unit, value, ...extra });
  return [
    info("entry.bare-node.ms", "ms", bareNode.ms),
    info("entry.bare-node.rss", "MB", bareNode.rss),
    info("entry.bare-perl.ms", "ms", barePerl.ms),
    info("entry.bare-perl.rss", "MB", barePerl.rss),
    info("entry.echo-itself.ms", "ms", echo.ms),
    info("entry.echo-itself.rss", "MB", echo.rss),
    info("entry.everything-itself.ms", "ms", entries["everything itself"].ms),
    info("entry.everything-itself.rss", "MB", entries["everything itself"].rss),
    info("entry.sdk-bridge.ms", "ms", sdk.ms, {
      baseline: bareNode.ms,
      baselineLabel: "bare node",
    }),
    info("entry.sdk-bridge.rss", "MB", sdk.rss, {
      baseline: bareNode.rss,
      baselineLabel: "bare node",
    }),
    figure({
      name: "entry.lean-bridge.ms",
      unit: "ms",
      value: lean.ms,
      baseline: bareNode.ms,
      baselineLabel: "bare node answering one line",
      checks: [["ratio", "<=", 2]],
    }),
    figure({
      name: "entry.lean-bridge.ms-vs-server",
      unit: "ms",
      value: lean.ms,
      baseline: echo.ms,
      baselineLabel: "the echo server spawned itself",
      checks: [["ratio", "<=", 0.5]],
    }),
    figure({
      name: "entry.lean-bridge.rss",
      unit: "MB",
      value: lean.rss,
      baseline: bareNode.rss,
      baselineLabel: "bare node answering one line",
      checks: [["ratio", "<=", 1.15]],
    }),
    figure({
      name: "entry.perl-pipe.ms",
      unit: "ms",
      value: pipe.ms,
      checks: [["value", "<=", 50]],
    }),
    // The whole entry: a host sees every process the pipe runs (a forking relay is two).
    figure({
      name: "entry.perl-pipe.rss",
      unit: "MB",
      value: pipe.treeRss,
      checks: [["value", "<=", 5]],
      spawnedRss: pipe.rss,
    }),
    ...found.flatMap((tool) => [
      figure({
        name: `entry.${tool}-pipe.ms`,
        unit: "ms",
        value: entries[`${tool} pipe`].ms,
        checks: [["value", "<=", 50]],
      }),
      figure({
        name: `entry.${tool}-pipe.rss`,
        unit: "MB",
        value: entries[`${tool} pipe`].treeRss,
        checks: [["value", "<=", 5]],
      }),
    ]),
    info("entry.hosts-unwired.rss", "MB", unwired),
    info("entry.hosts-wired-lean.rss", "MB", wiredLean, {
      baseline: unwired,
      baselineLabel: "unwired",
    }),
    info("entry.hosts-wired-perl.rss", "MB", wiredPerl, {
      baseline: unwired,
      baselineLabel: "unwired",
    }),
  ];
});
