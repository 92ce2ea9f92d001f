/**
 * Sharing: 20 agent processes × 5 servers (server-everything, -memory,
 * -filesystem and two echo fixtures). With the daemon, every agent connects and reads the
 * catalog; without it, every agent spawns, initializes and lists its own five. Children
 * are counted and RSS (VmRSS) summed from /proc over each process tree, once everything
 * is up and has settled. The arms run one after the other, unshared first.
 */
import { join } from "node:path";
import process from "node:process";
import { limited, startAgent } from "./lib/agents.mjs";
import { benchHome, client, referenceRows, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { figure, note, round } from "./lib/report.mjs";
import { descendants, rssMB, totalRssMB } from "./lib/procs.mjs";

const AGENTS = Number(process.env.BENCH_SHARING_AGENTS ?? 20);
// Spawning 100 Node servers at once on 2 cores only measures the scheduler; 4 agents
// starting at a time keeps each start honest and the arm under a minute.
const STARTING_AT_ONCE = 4;
const SETTLE_MS = 2000;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

run("Sharing", async () => {
  const home = benchHome();
  const servers = {
    ...referenceRows(home),
    echo: rows.echo(),
    echo2: rows.echo({ FIXTURE_TOOLS: "10" }),
  };
  const serverCount = Object.keys(servers).length;
  const indexes = Array.from({ length: AGENTS }, (_, i) => i);

  // Unshared: every agent spawns its own servers.
  const direct = await limited(indexes, STARTING_AT_ONCE, () =>
    startAgent("direct-agent", [JSON.stringify(servers)]),
  );
  await settle();
  const directChildren = direct.flatMap((agent) => descendants(agent.pid));
  const directAgentsMB = totalRssMB(direct.map((agent) => agent.pid));
  const directServersMB = totalRssMB(directChildren);
  note(
    `unshared: ${directChildren.length} children, ${Math.round(directServersMB)} MB servers + ${Math.round(directAgentsMB)} MB agents`,
  );
  await Promise.all(direct.map((agent) => agent.stop()));

  // Shared: one daemon, every agent a client of it.
  home.writeConfig(servers);
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-sharing");
  await waitReady(pool, serverCount);
  await pool.close();
  const bare = await startAgent("bare-node", [join(home.dir, "bare.sock")]);
  const shared = await limited(indexes, STARTING_AT_ONCE, () =>
    startAgent("pool-agent", [home.socketPath]),
  );
  await settle();
  const daemonChildren = descendants(daemon.pid);
  const daemonMB = rssMB(daemon.pid);
  const sharedServersMB = totalRssMB(daemonChildren);
  const sharedAgentsMB = totalRssMB(shared.map((agent) => agent.pid));
  const bareMB = rssMB(bare.pid);
  note(
    `shared: ${daemonChildren.length} children, ${Math.round(sharedServersMB)} MB servers + ${Math.round(daemonMB)} MB daemon + ${Math.round(sharedAgentsMB)} MB agents`,
  );
  const tools = { direct: direct[0].ready, shared: shared[0].ready };
  await Promise.all(shared.map((agent) => agent.stop()));
  await bare.stop();

  const detail = { agents: AGENTS, serversPerAgent: serverCount, toolsPerAgent: tools };
  return [
    figure({
      name: "sharing.children",
      unit: "processes",
      value: daemonChildren.length,
      baseline: directChildren.length,
      baselineLabel: "every agent spawns its own servers",
      checks: [["value", "==", serverCount]],
      ...detail,
    }),
    figure({
      name: "sharing.memory",
      unit: "MB",
      value: daemonMB + sharedServersMB,
      baseline: directServersMB,
      baselineLabel: "RSS of the 100 servers the agents spawn themselves",
      checks: [["ratio", "<=", 0.1]],
      ...detail,
      withAgents: {
        shared: round(daemonMB + sharedServersMB + sharedAgentsMB),
        unshared: round(directServersMB + directAgentsMB),
      },
    }),
    figure({
      name: "sharing.daemonRss",
      unit: "MB",
      value: daemonMB,
      baseline: bareMB,
      baselineLabel: "bare Node process listening on a Unix socket",
      checks: [["value", "<=", 80]],
      clients: AGENTS,
    }),
  ];
});
