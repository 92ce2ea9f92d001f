/**
 * Host sessions: five host sessions, each a separate Node process with an SDK
 * `Client` per stdio entry (agents/direct-agent.mjs: StdioClientTransport, initialize,
 * tools/list, then idle), given the three reference servers (server-everything, -memory,
 * -filesystem). Direct: every host spawns the three servers itself. Pooled, once per entry
 * kind `mcpool wire` writes — the SDK bridge (`dist/cli/main.js bridge`), the lean bridge
 * (`dist/cli/bin.js bridge`), the perl relay `mcpool wire` writes (relay/mcpool-pipe.pl, to the server's MCP socket) — every
 * host spawns three entries to one daemon that runs the three servers. Per arm, once
 * everything is up and has settled: the processes (the hosts, everything under them and,
 * pooled, the daemon and its children) and their PSS summed from /proc/<pid>/smaps_rollup
 * (shared pages counted once across the processes sharing them). The arms run one after the
 * other, direct first; the daemon stays up through the three pooled arms. Nothing is judged:
 * the ratios are pooled / direct.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { limited, startAgent } from "./lib/agents.mjs";
import {
  benchHome,
  client,
  referenceRows,
  repoRoot,
  startDaemon,
  waitReady,
} from "./lib/daemon.mjs";
import { run } from "./lib/harness.mjs";
import { descendants, pssMB, totalPssMB, until } from "./lib/procs.mjs";
import { figure, note, round } from "./lib/report.mjs";

const HOSTS = Number(process.env.BENCH_HOSTS_SESSIONS ?? 5);
/** Hosts starting at once: a 2-core machine spawning 15 Node servers together measures only its scheduler. */
const STARTING_AT_ONCE = 2;
const SETTLE_MS = 2000;
const { relayArgs } = await import(join(repoRoot, "dist/cli/hosts/pipe-entry.js"));
const { mcpSocketPath } = await import(join(repoRoot, "dist/bridge/lean/mcp-socket-paths.js"));

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

run("Host sessions", async () => {
  const home = benchHome();
  const servers = referenceRows(home);
  const ids = Object.keys(servers);
  const indexes = Array.from({ length: HOSTS }, (_, i) => i);

  /** Starts the hosts on `entries`, lets them settle, reads /proc, stops them. */
  async function arm(label, entries, daemonPid) {
    const hosts = await limited(indexes, STARTING_AT_ONCE, () =>
      startAgent("direct-agent", [JSON.stringify(entries)], { env: home.env }),
    );
    await settle();
    const hostPids = hosts.map((host) => host.pid);
    const entryPids = hostPids.flatMap((pid) => descendants(pid));
    const daemonTree = daemonPid === undefined ? [] : [daemonPid, ...descendants(daemonPid)];
    const all = [...hostPids, ...entryPids, ...daemonTree];
    const pss = {
      hosts: totalPssMB(hostPids),
      entries: totalPssMB(entryPids),
      daemon: daemonPid === undefined ? 0 : pssMB(daemonPid),
      servers: totalPssMB(daemonTree.slice(1)),
    };
    const total = pss.hosts + pss.entries + pss.daemon + pss.servers;
    const tools = [...new Set(hosts.map((host) => host.ready))].join(",");
    await Promise.all(hosts.map((host) => host.stop()));
    note(
      `${label}: ${all.length} processes, ${round(total)} MB PSS (hosts ${round(pss.hosts)}, entries ${round(pss.entries)}, daemon ${round(pss.daemon)}, its servers ${round(pss.servers)}); tools per host ${tools}`,
    );
    return {
      processes: all.length,
      pss: total,
      parts: {
        processes: {
          hosts: hostPids.length,
          entries: entryPids.length,
          daemon: daemonTree.length > 0 ? 1 : 0,
          servers: Math.max(0, daemonTree.length - 1),
        },
        pssMB: Object.fromEntries(Object.entries(pss).map(([k, v]) => [k, round(v)])),
        toolsPerHost: tools,
      },
    };
  }

  const direct = await arm("direct", servers);

  home.writeConfig(servers);
  const daemon = await startDaemon(home);
  const pool = await client(home, "bench-hosts");
  await waitReady(pool, ids.length);
  await pool.close();
  const socket = (id) => mcpSocketPath(home.socketPath, id);
  if (!(await until(() => ids.every((id) => existsSync(socket(id))), 10_000))) {
    throw new Error(`the daemon made no MCP socket for ${ids.join(", ")} in ${home.dir}`);
  }
  const each = (entry) => Object.fromEntries(ids.map((id) => [id, entry(id)]));
  const bridge = (cli) => (id) => ({
    command: process.execPath,
    args: [join(repoRoot, cli), "bridge", "--server", id, "--socket", home.socketPath],
  });
  const kinds = {
    "sdk-bridge": each(bridge("dist/cli/main.js")),
    "lean-bridge": each(bridge("dist/cli/bin.js")),
    "perl-pipe": each((id) => ({ command: "perl", args: relayArgs(id, home.socketPath) })),
  };
  const pooled = {};
  for (const [kind, entries] of Object.entries(kinds)) {
    pooled[kind] = await arm(kind, entries, daemon.pid);
  }
  await daemon.stop();

  const detail = { hosts: HOSTS, serversPerHost: ids.length };
  const baselineLabel = `${HOSTS} hosts each spawning the ${ids.length} servers themselves`;
  return Object.entries(pooled).flatMap(([kind, m]) => [
    figure({
      name: `HOSTS.${kind}.processes`,
      unit: "processes",
      value: m.processes,
      baseline: direct.processes,
      baselineLabel,
      ...detail,
      parts: { pooled: m.parts.processes, direct: direct.parts.processes },
    }),
    figure({
      name: `HOSTS.${kind}.pss`,
      unit: "MB",
      value: m.pss,
      baseline: direct.pss,
      baselineLabel,
      ...detail,
      parts: { pooled: m.parts.pssMB, direct: direct.parts.pssMB },
      toolsPerHost: { pooled: m.parts.toolsPerHost, direct: direct.parts.toolsPerHost },
    }),
  ]);
});
