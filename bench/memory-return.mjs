/**
 * Memory returned: the daemon's RSS (VmRSS) idle, at its peak, and 60 s after
 * (a) two answers of 40 MB, over the daemon's 16 MiB frame cap, asked one after the other
 *     of the big-answer fixture (test/fixtures/big-answer.mjs), each refused;
 * (b) a burst of 100,000 echo calls from 8 agent processes (agents/burst-agent.mjs).
 * Each on a fresh daemon; idle is read after a few calls and a settle. The peak is the
 * largest of VmRSS read every 20 ms while the work runs. Judged: 60 s later within 1.3× idle.
 */
import process from "node:process";
import { clearInterval, setInterval } from "node:timers";
import { limited, startAgent } from "./lib/agents.mjs";
import { benchHome, client, repoRoot, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { rssMB } from "./lib/procs.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { join } from "node:path";

const BIG_CHARS = Number(process.env.BENCH_MEMORY_RETURN_BIG_MB ?? 40) * 1000 * 1000;
const AGENTS = 8;
const CALLS = Number(process.env.BENCH_MEMORY_RETURN_CALLS ?? 100_000);
const LATER_MS = Number(process.env.BENCH_MEMORY_RETURN_LATER_MS ?? 60_000);
const SETTLE_MS = 3000;
const RATIO = 1.3;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const bigRow = {
  command: process.execPath,
  args: [join(repoRoot, "test/fixtures/big-answer.mjs")],
};

/** Runs `work` while sampling the daemon's RSS; resolves with the largest sample, MB. */
async function peakDuring(pid, work) {
  let peak = rssMB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMB(pid))), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMB(pid));
}

/** A fresh daemon serving `servers`, warmed by a few calls of `warm`; its idle RSS. */
async function idleDaemon(servers, warm) {
  const home = benchHome("mcpool-bench-memret-");
  home.writeConfig(servers);
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-memory-return");
  await waitReady(pool, Object.keys(servers).length);
  for (let i = 0; i < 20; i++) await warm(pool);
  await sleep(SETTLE_MS);
  return { home, daemon, pool, idleMB: rssMB(daemon.pid) };
}

async function bigAnswers() {
  const { daemon, pool, idleMB } = await idleDaemon({ big: bigRow }, (p) =>
    p.call("big__text", { chars: 100 }),
  );
  const refusals = [];
  const peakMB = await peakDuring(daemon.pid, async () => {
    for (let i = 0; i < 2; i++) {
      const error = await pool.call("big__text", { chars: BIG_CHARS }).catch((e) => e);
      refusals.push(error?.code ?? "answered");
    }
  });
  await sleep(LATER_MS);
  const laterMB = rssMB(daemon.pid);
  note(`two ${BIG_CHARS}-character answers: ${refusals.join(", ")}`);
  await pool.close();
  await daemon.stop();
  return { idleMB, peakMB, laterMB, refusals };
}

async function burst() {
  const { home, daemon, pool, idleMB } = await idleDaemon({ echo: rows.echo() }, (p) =>
    p.call("echo__echo", { text: "warm" }),
  );
  let agents = [];
  const started = Date.now();
  const peakMB = await peakDuring(daemon.pid, async () => {
    agents = await limited(
      Array.from({ length: AGENTS }, (_, i) => i),
      AGENTS,
      () =>
        startAgent("burst-agent", [home.socketPath, String(CALLS / AGENTS), "4"], {
          env: home.env,
          timeoutMs: 600_000,
        }),
    );
  });
  const seconds = (Date.now() - started) / 1000;
  await Promise.all(agents.map((agent) => agent.stop()));
  await sleep(LATER_MS);
  const laterMB = rssMB(daemon.pid);
  note(`${CALLS} calls from ${AGENTS} processes in ${round(seconds)} s`);
  await pool.close();
  await daemon.stop();
  return { idleMB, peakMB, laterMB };
}

function figures(name, label, { idleMB, peakMB, laterMB }, extra = {}) {
  note(
    `${label}: idle ${round(idleMB)} MB, peak ${round(peakMB)} MB, ${LATER_MS / 1000} s later ${round(laterMB)} MB`,
  );
  return [
    figure({ name: `${name}.idleRss`, unit: "MB", value: idleMB }),
    figure({
      name: `${name}.peakRss`,
      unit: "MB",
      value: peakMB,
      baseline: idleMB,
      baselineLabel: "idle",
    }),
    figure({
      name: `${name}.laterRss`,
      unit: "MB",
      value: laterMB,
      baseline: idleMB,
      baselineLabel: "idle",
      checks: [["ratio", "<=", RATIO]],
      laterMs: LATER_MS,
      ...extra,
    }),
  ];
}

run("Memory returned", async () => {
  const big = await bigAnswers();
  const calls = await burst();
  return [
    ...figures("memoryReturn.bigAnswers", "two answers over the frame cap", big, {
      answerChars: BIG_CHARS,
      refusals: big.refusals,
    }),
    ...figures("memoryReturn.callBurst", `${CALLS} calls from ${AGENTS} processes`, calls, {
      calls: CALLS,
      agents: AGENTS,
    }),
  ];
});
