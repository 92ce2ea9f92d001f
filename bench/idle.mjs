/**
 * Idle: a daemon with one ready echo server left alone after some work.
 * Wakeups are context switches (voluntary + involuntary) summed over all its threads from
 * /proc/<pid>/task/<tid>/status, with schedstat timeslices and CPU time beside them. The
 * baseline is a bare Node process on a Unix socket that did comparable work (NDJSON round
 * trips), over the same windows: the 10 s right after the last client left and the 25 s
 * after them, where V8's memory reducer still collects (GC helper threads wake; reported,
 * not judged), then 10 s of steady idle, which is what "wakes for nothing" is judged on.
 * The reducer starts its first collection 8 s after something tells it to, and a daemon
 * that allocates little during the work may only be told well after the work: its
 * collections were seen 15–25 s after the last call.
 * RSS from VmRSS at the end.
 */
import { join } from "node:path";
import process from "node:process";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, client, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { rssMB, wakeups } from "./lib/procs.mjs";
import { figure, note } from "./lib/report.mjs";

const IDLE_MS = Number(process.env.BENCH_IDLE_IDLE_MS ?? 10_000);
/** Between the two windows, long enough for V8's memory reducer to have done its work. */
const GAP_MS = Number(process.env.BENCH_IDLE_GAP_MS ?? 25_000);
const WORK_CALLS = 2000;
/** "Wakes for nothing": at most one wakeup a second more than a bare Node process. */
const ALLOWED_EXTRA_PER_S = 1;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function window(pids) {
  const before = pids.map(wakeups);
  return async (ms) => {
    await sleep(ms);
    return pids.map((pid, i) => {
      const after = wakeups(pid);
      return {
        switches: after.switches - before[i].switches,
        voluntary: after.voluntary - before[i].voluntary,
        involuntary: after.involuntary - before[i].involuntary,
        timeslices: after.timeslices - before[i].timeslices,
        cpuMs: Math.round(((after.runNs - before[i].runNs) / 1e6) * 10) / 10,
        threads: after.threads,
      };
    });
  };
}

run("Idle", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const bareSocket = join(home.dir, "bare.sock");
  const bare = await startAgent("bare-node", [bareSocket]);

  // Some work first, so both have something to forget; then nobody is connected.
  const pool = await client(home, "bench-idle");
  await waitReady(pool, 1);
  const line = await lineClient(bareSocket);
  for (let i = 0; i < WORK_CALLS; i++) {
    await pool.call("echo__echo", { text: "hello" });
    await line.request("tools/call", { name: "echo", arguments: { text: "hello" } });
  }
  await pool.close();
  line.close();

  const [afterDaemon, afterBare] = await window([daemon.pid, bare.pid])(IDLE_MS);
  const [gapDaemon, gapBare] = await window([daemon.pid, bare.pid])(GAP_MS);
  const [idleDaemon, idleBare] = await window([daemon.pid, bare.pid])(IDLE_MS);
  note(`after work: daemon ${JSON.stringify(afterDaemon)}`);
  note(`after work: bare   ${JSON.stringify(afterBare)}`);
  note(`reducer:    daemon ${JSON.stringify(gapDaemon)}`);
  note(`reducer:    bare   ${JSON.stringify(gapBare)}`);
  note(`steady:     daemon ${JSON.stringify(idleDaemon)}`);
  note(`steady:     bare   ${JSON.stringify(idleBare)}`);

  const seconds = IDLE_MS / 1000;
  const allowed = idleBare.switches + ALLOWED_EXTRA_PER_S * seconds;
  const baselineLabel = "bare Node process on a Unix socket after 2,000 round trips, same window";
  return [
    figure({
      name: "idle.wakeups",
      unit: `switches/${seconds}s`,
      value: idleDaemon.switches,
      baseline: idleBare.switches,
      baselineLabel,
      checks: [["value", "<=", allowed]],
      targetText: `≤ baseline + ${ALLOWED_EXTRA_PER_S}/s (${allowed})`,
      window: `${(IDLE_MS + GAP_MS) / 1000}–${(2 * IDLE_MS + GAP_MS) / 1000} s after the last client left`,
      daemon: idleDaemon,
      bare: idleBare,
    }),
    figure({
      name: "idle.wakeupsAfterWork",
      unit: `switches/${seconds}s`,
      value: afterDaemon.switches,
      baseline: afterBare.switches,
      baselineLabel,
      checks: [],
      window: `0–${seconds} s after the last client left (V8's memory reducer still at work)`,
      daemon: afterDaemon,
      bare: afterBare,
    }),
    figure({
      name: "idle.rss",
      unit: "MB",
      value: rssMB(daemon.pid),
      baseline: rssMB(bare.pid),
      baselineLabel: "bare Node process on a Unix socket",
      checks: [["value", "<=", 60]],
    }),
  ];
});
