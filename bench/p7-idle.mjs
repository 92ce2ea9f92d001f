/**
 * P7 idle (SPEC §3): a daemon with one ready echo server and no clients, left alone for
 * 10 s. Wakeups are the context switches (voluntary + involuntary) summed over all its
 * threads from /proc/<pid>/task/<tid>/status, before and after; /proc schedstat timeslices
 * and CPU time are reported beside them. The baseline is a bare Node process listening on
 * a Unix socket, measured over the same 10 s. RSS from VmRSS at the end.
 */
import { join } from "node:path";
import process from "node:process";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, client, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { rssMB, wakeups } from "./lib/procs.mjs";
import { figure, note } from "./lib/report.mjs";

const IDLE_MS = Number(process.env.BENCH_P7_IDLE_MS ?? 10_000);
const SETTLE_MS = 2_000;
/** "Wakes for nothing": at most one wakeup a second more than a bare Node process. */
const ALLOWED_EXTRA_PER_S = 1;

run("P7 idle", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-p7");
  await waitReady(pool, 1);
  await pool.close();
  const bare = await startAgent("bare-node", [join(home.dir, "bare.sock")]);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

  const before = { daemon: wakeups(daemon.pid), bare: wakeups(bare.pid) };
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const after = { daemon: wakeups(daemon.pid), bare: wakeups(bare.pid) };
  const delta = (arm) => ({
    switches: after[arm].switches - before[arm].switches,
    voluntary: after[arm].voluntary - before[arm].voluntary,
    involuntary: after[arm].involuntary - before[arm].involuntary,
    timeslices: after[arm].timeslices - before[arm].timeslices,
    cpuMs: (after[arm].runNs - before[arm].runNs) / 1e6,
    threads: after[arm].threads,
  });
  const idle = { daemon: delta("daemon"), bare: delta("bare") };
  note(`daemon ${JSON.stringify(idle.daemon)}`);
  note(`bare   ${JSON.stringify(idle.bare)}`);
  const seconds = IDLE_MS / 1000;
  const allowed = idle.bare.switches + ALLOWED_EXTRA_PER_S * seconds;
  return [
    figure({
      name: "P7.wakeups",
      unit: `switches/${seconds}s`,
      value: idle.daemon.switches,
      baseline: idle.bare.switches,
      baselineLabel: "bare Node process listening on a Unix socket, same window",
      checks: [["value", "<=", allowed]],
      targetText: `≤ baseline + ${ALLOWED_EXTRA_PER_S}/s (${allowed})`,
      daemon: idle.daemon,
      bare: idle.bare,
    }),
    figure({
      name: "P7.rss",
      unit: "MB",
      value: rssMB(daemon.pid),
      baseline: rssMB(bare.pid),
      baselineLabel: "bare Node process listening on a Unix socket",
      checks: [["value", "<=", 60]],
    }),
  ];
});
