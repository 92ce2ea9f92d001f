/**
 * Cold start: a host whose entry has to start the daemon (wired while it was down, after a
 * crash or a reboot). Three arms, alternating in rounds: `direct` (the host spawns
 * server-everything itself), `before` (the lean entry with no recording of the daemon's first
 * answers: it starts the daemon and the host waits for it and the server, as entries did)
 * and `after` (the same entry with the recording the daemon made on an earlier session: the
 * host's initialize and tools/list are answered while the daemon starts). Before each entry
 * run the daemon is stopped; `before` also has the recording removed.
 *
 * Figures: the ms from spawn to the tools/list answer for a host writing initialize,
 * initialized and tools/list at once (median of RUNS), and, where Claude Code's CLI is
 * installed (BENCH_CLAUDE, else the suite's cached one), how many `claude -p` runs' first
 * turn offered the pooled server's tools (its default wait for MCP servers; the model API is
 * the stand-in test/fixtures/real-hosts/fake-anthropic.mjs) and the run's wall time.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { benchHome, repoRoot, rows, startDaemon } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { alive, kill, until } from "./lib/procs.mjs";
import { figure, skipped } from "./lib/report.mjs";
import { median } from "./lib/stats.mjs";

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 5);
const CLAUDE_RUNS = Number(process.env.BENCH_COLD_CLAUDE_RUNS ?? 3);
const binJs = join(repoRoot, "dist/cli/bin.js");
const CLAUDE =
  process.env.BENCH_CLAUDE ?? "/tmp/mcpool-real-hosts-hosts-a0e6a2c4b5a3/node_modules/.bin/claude";
const FAKE_ANTHROPIC = join(repoRoot, "test/fixtures/real-hosts/fake-anthropic.mjs");

const HANDSHAKE = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "bench-cold", version: "0" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join("");

/** Live `mcpool serve` processes of `socketPath`. */
function daemonsOf(socketPath) {
  const out = [];
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
      const argv = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0");
      if (environ.includes(`MCPOOL_SOCKET=${socketPath}`) && argv.includes("serve")) {
        out.push(Number(name));
      }
    } catch {
      // gone
    }
  }
  return out.filter(alive);
}

/** Stops every daemon of `home` and waits for them (and so their servers) to be gone. */
async function stopDaemons(home) {
  const pids = daemonsOf(home.socketPath);
  for (const pid of pids) kill(pid, "SIGTERM");
  if (!(await until(() => pids.every((pid) => !alive(pid)), 20_000, 50))) {
    for (const pid of pids) kill(pid);
  }
}

/** Spawns `command args`, writes the handshake; resolves with the ms to the tools/list answer. */
function toolsListed(command, args, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"], env });
    onCleanup(() => kill(child.pid));
    let out = "";
    const timer = setTimeout(() => {
      kill(child.pid);
      reject(new Error(`${command} gave no tools/list answer`));
    }, 60_000);
    child.stdout.on("data", (chunk) => {
      out += chunk.toString();
      if (!out.split("\n").some((l) => l.includes('"id":2') && l.includes('"tools"'))) return;
      clearTimeout(timer);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      child.stdin.end();
      child.once("exit", () => resolve(ms));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.write(HANDSHAKE);
  });
}

/** The stand-in model API, recording what it hears; its URL. */
async function fakeAnthropic(record) {
  const child = spawn(process.execPath, [FAKE_ANTHROPIC], {
    stdio: ["pipe", "pipe", "ignore"],
    env: { ...process.env, FAKE_RECORD: record, FAKE_TOOL: "none" },
  });
  onCleanup(() => kill(child.pid));
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk.toString()));
  await until(() => out.includes("listening "), 20_000);
  return /listening (\S+)/.exec(out)[1];
}

/** One `claude -p` run: whether its first turn offered the server's tools, and its wall ms. */
async function claudeRun(home, url, label, mcpConfig, record) {
  const started = process.hrtime.bigint();
  const child = spawn(
    CLAUDE,
    ["-p", "say hi", "--mcp-config", mcpConfig, "--strict-mcp-config", "--output-format", "json"],
    {
      cwd: home.dir,
      stdio: ["pipe", "ignore", "ignore"],
      env: {
        ...home.env,
        ANTHROPIC_BASE_URL: `${url}/${label}`,
        ANTHROPIC_API_KEY: "sk-stand-in",
        ENABLE_TOOL_SEARCH: "false",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    },
  );
  onCleanup(() => kill(child.pid));
  // Stdin stays open: `-p` reads none of it, and an EOF is not what a host sends.
  await new Promise((resolve) => child.once("exit", resolve));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const heard = readFileSync(record, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l))
    .filter((h) => h.label === label && h.path.includes("/v1/messages"));
  const first = heard.find((h) => (h.body.messages ?? []).length > 0) ?? heard[0];
  const tools = (first?.body.tools ?? []).filter((t) => t.name.startsWith("mcp__ev__"));
  return { offered: tools.length > 0, tools: tools.length, ms };
}

run("cold start", async () => {
  const home = benchHome("mcpool-bench-cold-");
  home.writeConfig({ ev: rows.everything() });
  const entryArgs = [binJs, "bridge", "--server", "ev", "--socket", home.socketPath];
  const recording = join(home.env.XDG_DATA_HOME, "mcpool", "cold-answers", "ev.json");
  // A first session through a daemon: the tools cache and the recording are made.
  const daemon = await startDaemon(home);
  await until(() => existsSync(join(home.socketPath, "..", "mcp", "ev.sock")), 30_000);
  await toolsListed(process.execPath, entryArgs, home.env);
  await until(() => existsSync(recording), 20_000);
  const kept = readFileSync(recording, "utf8");
  await daemon.stop();
  await stopDaemons(home);
  onCleanup(() => stopDaemons(home));

  const arms = {
    direct: () => toolsListed(process.execPath, rows.everything().args, home.env),
    before: async () => {
      await stopDaemons(home);
      rmSync(recording, { force: true });
      return toolsListed(process.execPath, entryArgs, home.env);
    },
    after: async () => {
      await stopDaemons(home);
      writeFileSync(recording, kept);
      return toolsListed(process.execPath, entryArgs, home.env);
    },
  };
  const times = { direct: [], before: [], after: [] };
  for (let round = 0; round < RUNS; round += 1) {
    for (const arm of Object.keys(arms)) times[arm].push(await arms[arm]());
  }
  const figures = [
    figure({
      name: "coldStart.toolsList.ms",
      unit: "ms",
      value: median(times.after),
      baseline: median(times.before),
      baselineLabel: "the same entry without the recording (as before)",
      direct: median(times.direct),
      runs: { direct: times.direct, before: times.before, after: times.after },
    }),
  ];

  if (!existsSync(CLAUDE)) {
    figures.push(skipped("coldStart.claude.firstTurnWithTools", `no Claude Code CLI at ${CLAUDE}`));
    return figures;
  }
  const record = join(home.dir, "heard.jsonl");
  writeFileSync(record, "");
  const url = await fakeAnthropic(record);
  const mcpConfig = join(home.dir, "claude-mcp.json");
  const direct = { command: process.execPath, args: rows.everything().args };
  const wired = { command: process.execPath, args: entryArgs };
  const configs = {
    direct: JSON.stringify({ mcpServers: { ev: direct } }),
    before: JSON.stringify({ mcpServers: { ev: wired } }),
    after: JSON.stringify({ mcpServers: { ev: wired } }),
  };
  // Claude Code's own opening, recorded by a daemon that served it once.
  writeFileSync(mcpConfig, configs.after);
  const warm = await startDaemon(home);
  await claudeRun(home, url, "warm", mcpConfig, record);
  await until(() => readFileSync(recording, "utf8").includes("claude-code"), 20_000);
  const keptClaude = readFileSync(recording, "utf8");
  await warm.stop();
  await stopDaemons(home);
  const claude = { direct: [], before: [], after: [] };
  for (let round = 0; round < CLAUDE_RUNS; round += 1) {
    for (const arm of Object.keys(configs)) {
      await stopDaemons(home);
      if (arm === "before") rmSync(recording, { force: true });
      if (arm === "after") writeFileSync(recording, keptClaude);
      writeFileSync(mcpConfig, configs[arm]);
      claude[arm].push(await claudeRun(home, url, `${arm}${round}`, mcpConfig, record));
    }
  }
  const offered = (arm) => claude[arm].filter((r) => r.offered).length;
  figures.push(
    figure({
      name: "coldStart.claude.firstTurnWithTools",
      unit: "runs",
      value: offered("after"),
      baseline: offered("before"),
      baselineLabel: `of ${CLAUDE_RUNS} runs, the entry without the recording`,
      direct: offered("direct"),
      wallMs: {
        direct: median(claude.direct.map((r) => r.ms)),
        before: median(claude.before.map((r) => r.ms)),
        after: median(claude.after.map((r) => r.ms)),
      },
      runs: claude,
    }),
  );
  return figures;
});
