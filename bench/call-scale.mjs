/**
 * Call cost at scale. Through one daemon and echo children:
 *   - daemon CPU per sequential call: utime+stime from /proc/<pid>/stat over N calls,
 *     beside the same for the bare relay (agents/bare-relay.mjs): the floor of a process
 *     that reads a line, swaps its id and writes it on, both ways;
 *   - the loop of throughput.mjs with 64 and 200 calling connections, judged against 16 in the same rounds;
 *   - 16 callers with 200 idle connected agents (each listening to events as a bridge
 *     does) against the same 16 with none: the cost of a call must not grow with agents
 *     that are not calling;
 *   - 10 servers × 16 connections (160 callers, each on its own server's tool), against
 *     one server × 16; beside it the same two arms through a bare relay that owns 10 echo
 *     children: the floor of this machine spreading calls over ten children.
 * Arms alternate in timed rounds; the idle agents are connected and closed per round.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { connect } from "mcpool-client";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { callsPerSecond, drive } from "./lib/drive.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { figure, note } from "./lib/report.mjs";

const ROUNDS = 3;
const ROUND_MS = Number(process.env.BENCH_CALL_SCALE_ROUND_MS ?? 2000);
const WARMUP_MS = 1000;
const SEQUENTIAL_CALLS = Number(process.env.BENCH_CALL_SCALE_CALLS ?? 5000);
const CALLERS = 16;
const IDLE = 200;
const WIDE = [64, 200];
const SERVERS = 10;
const ARGS = { text: "hello" };
/** The event types a bridge asks for (src/bridge/legacy/pool-traffic.ts). */
const BRIDGE_EVENTS = ["connect", "close", "tools-changed"];
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const TICKS_PER_S = 100;

/** The process's CPU time so far, µs (user + system). */
function cpuUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5); fields[] starts at field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S;
}

async function connectMany(socketPath, count, label) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const pool = await connect({ socketPath, clientName: `bench-call-scale-${label}-${i}` });
      onCleanup(() => pool.close());
      return pool;
    }),
  );
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** CPU µs `pid` spends per call of `call`, over SEQUENTIAL_CALLS. */
async function cpuPerCall(pid, call) {
  const before = cpuUs(pid);
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) await call();
  return (cpuUs(pid) - before) / SEQUENTIAL_CALLS;
}

/** Calls before any round is counted: the daemon's first thousands run before V8 has optimised. */
const CPU_WARMUP_CALLS = 10_000;
/** Alternating rounds of SEQUENTIAL_CALLS per arm; the figure is each arm's median. */
const CPU_ROUNDS = 4;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The daemon's CPU per sequential call against the bare relay's, in alternating rounds
 * after a warm-up of each: measured once right after start, the daemon's read 2–3× its
 * steady figure (277 µs in the first round against 76–97 µs after it).
 */
async function cpuAgainstRelay(dir, daemonPid, daemonCall) {
  const socket = join(dir, "relay.sock");
  const echo = rows.echo();
  const relay = await startAgent("bare-relay", [socket, echo.command, ...echo.args]);
  const line = await lineClient(socket);
  onCleanup(() => line.close());
  const relayCall = () => line.request("tools/call", { name: "echo", arguments: ARGS });
  for (let i = 0; i < CPU_WARMUP_CALLS; i++) await daemonCall();
  for (let i = 0; i < CPU_WARMUP_CALLS; i++) await relayCall();
  const rounds = { daemon: [], relay: [] };
  for (let round = 0; round < CPU_ROUNDS; round++) {
    rounds.daemon.push(await cpuPerCall(daemonPid, daemonCall));
    rounds.relay.push(await cpuPerCall(relay.pid, relayCall));
  }
  line.close();
  await relay.stop();
  return { cpu: median(rounds.daemon), relayCpu: median(rounds.relay), rounds };
}

async function oneServer() {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const callers = await connectMany(home.socketPath, Math.max(...WIDE), "caller");
  await waitReady(callers[0], 1);
  const {
    cpu,
    relayCpu,
    rounds: cpuRounds,
  } = await cpuAgainstRelay(home.dir, daemon.pid, () => callers[0].call("echo__echo", ARGS));
  const arm = (count) => callers.slice(0, count).map((pool) => () => pool.call("echo__echo", ARGS));
  const rates = {
    c16: [],
    idle0: [],
    idle200: [],
    ...Object.fromEntries(WIDE.map((n) => [`c${n}`, []])),
  };
  for (const n of [CALLERS, ...WIDE]) await callsPerSecond(arm(n), WARMUP_MS);
  for (let round = 0; round < ROUNDS; round++) {
    rates.idle0.push(await callsPerSecond(arm(CALLERS), ROUND_MS));
    // Idle agents listening to events, as bridges do; they never call.
    const idle = await connectMany(home.socketPath, IDLE, `idle${round}`);
    const offs = idle.map((pool) => pool.onEvent(() => undefined, { types: BRIDGE_EVENTS }));
    await Promise.all(idle.map((pool) => pool.state()));
    rates.idle200.push(await callsPerSecond(arm(CALLERS), ROUND_MS));
    rates.c16.push(await callsPerSecond(arm(CALLERS), ROUND_MS));
    for (const n of WIDE) rates[`c${n}`].push(await callsPerSecond(arm(n), ROUND_MS));
    for (const off of offs) off();
    await Promise.all(idle.map((pool) => pool.close()));
  }
  return { cpu, relayCpu, cpuRounds, rates };
}

/**
 * One drive() of `callers`, with the CPU the daemon and its children spent per call over
 * it (µs): where a rate went, the daemon's share measured apart from the servers'.
 */
async function driveMeasured(callers, ms, daemonPid, childPids) {
  const cpuOf = (pids) => pids.reduce((sum, pid) => sum + cpuUs(pid), 0);
  const daemonBefore = cpuUs(daemonPid);
  const childrenBefore = cpuOf(childPids);
  const round = await drive(callers, ms);
  return {
    rate: (round.calls / round.ms) * 1000,
    daemonUs: (cpuUs(daemonPid) - daemonBefore) / round.calls,
    childrenUs: (cpuOf(childPids) - childrenBefore) / round.calls,
  };
}

/**
 * The same two arms through the bare relay owning SERVERS echo children (`<n>__echo` goes
 * to child n), SERVERS × CALLERS line connections: what spreading the calls over ten
 * children costs with no daemon in the way.
 */
async function tenRelayed(dir) {
  const socket = join(dir, "relay10.sock");
  const echo = rows.echo();
  const relay = await startAgent("bare-relay", [socket, echo.command, ...echo.args], {
    env: { ...process.env, BARE_RELAY_CHILDREN: String(SERVERS) },
  });
  onCleanup(() => relay.stop());
  const lines = await Promise.all(
    Array.from({ length: SERVERS * CALLERS }, () => lineClient(socket)),
  );
  for (const line of lines) onCleanup(() => line.close());
  const caller = (line, server) => () =>
    line.request("tools/call", { name: `${server}__echo`, arguments: ARGS });
  return {
    spread: lines.map((line, i) => caller(line, i % SERVERS)),
    single: lines.slice(0, CALLERS).map((line) => caller(line, 0)),
    stop: async () => {
      for (const line of lines) line.close();
      await relay.stop();
    },
  };
}

async function tenServers() {
  const home = benchHome();
  const ids = Array.from({ length: SERVERS }, (_, i) => `echo${i}`);
  home.writeConfig(Object.fromEntries(ids.map((id) => [id, rows.echo()])));
  const daemon = await startDaemon(home);
  const callers = await connectMany(home.socketPath, SERVERS * CALLERS, "ten");
  await waitReady(callers[0], SERVERS);
  const childPids = (await callers[0].state()).map((server) => server.pid).filter(Boolean);
  const spread = callers.map((pool, i) => () => pool.call(`${ids[i % SERVERS]}__echo`, ARGS));
  const single = callers.slice(0, CALLERS).map((pool) => () => pool.call(`${ids[0]}__echo`, ARGS));
  const relayed = await tenRelayed(home.dir);
  const rounds = { spread: [], single: [] };
  const relayRates = { spread: [], single: [] };
  await callsPerSecond(spread, WARMUP_MS);
  await callsPerSecond(relayed.spread, WARMUP_MS);
  for (let round = 0; round < ROUNDS; round++) {
    rounds.single.push(await driveMeasured(single, ROUND_MS, daemon.pid, childPids));
    rounds.spread.push(await driveMeasured(spread, ROUND_MS, daemon.pid, childPids));
    relayRates.single.push(await callsPerSecond(relayed.single, ROUND_MS));
    relayRates.spread.push(await callsPerSecond(relayed.spread, ROUND_MS));
  }
  await relayed.stop();
  const of = (arm, key) => rounds[arm].map((measured) => measured[key]);
  return {
    spread: of("spread", "rate"),
    single: of("single", "rate"),
    relay: relayRates,
    cpu: {
      daemonUsPerCall: {
        tenServers: mean(of("spread", "daemonUs")),
        oneOfTen: mean(of("single", "daemonUs")),
      },
      childrenUsPerCall: {
        tenServers: mean(of("spread", "childrenUs")),
        oneOfTen: mean(of("single", "childrenUs")),
      },
    },
  };
}

run("Call scale", async () => {
  const { cpu, relayCpu, cpuRounds, rates } = await oneServer();
  const ten = await tenServers();
  const shown = (list) => list.map((value) => Math.round(value)).join(", ");
  note(
    `calls/s per round: ${Object.entries({
      ...rates,
      tenServers: ten.spread,
      oneOfTen: ten.single,
      relayTenChildren: ten.relay.spread,
      relayOneOfTen: ten.relay.single,
    })
      .map(([arm, list]) => `${arm} ${shown(list)}`)
      .join("; ")}`,
  );
  const rounded = (list) => list.map((value) => Math.round(value)).join(", ");
  note(
    `CPU µs per sequential call by round: daemon ${rounded(cpuRounds.daemon)}; relay ${rounded(cpuRounds.relay)}`,
  );
  note(`ten servers, CPU µs per call (daemon; children): ${JSON.stringify(ten.cpu)}`);
  return [
    figure({
      name: "callScale.daemonCpuPerCall",
      unit: "µs",
      value: cpu,
      baseline: relayCpu,
      baselineLabel: `the bare relay's, measured the same way (utime+stime over ${SEQUENTIAL_CALLS} sequential calls; median of ${CPU_ROUNDS} alternating rounds after ${CPU_WARMUP_CALLS} warm-up calls each)`,
      checks: [["value", "<=", 80]],
      calls: SEQUENTIAL_CALLS,
      rounds: cpuRounds,
    }),
    ...WIDE.map((n) =>
      figure({
        name: `callScale.throughput.c${n}`,
        unit: "calls/s",
        value: mean(rates[`c${n}`]),
        baseline: mean(rates.c16),
        baselineLabel: `${CALLERS} calling connections, same rounds (${IDLE} connected)`,
        checks: [["ratio", ">=", 0.9]],
        rounds: ROUNDS,
        roundMs: ROUND_MS,
      }),
    ),
    figure({
      name: "callScale.idleAgents",
      unit: "calls/s",
      value: mean(rates.idle200),
      baseline: mean(rates.idle0),
      baselineLabel: `${CALLERS} callers with no other connection`,
      targetText: `${CALLERS} callers with ${IDLE} idle event-listening agents: ratio >= 0.9`,
      checks: [["ratio", ">=", 0.9]],
      rounds: ROUNDS,
      roundMs: ROUND_MS,
    }),
    figure({
      name: "callScale.servers10x16",
      unit: "calls/s",
      value: mean(ten.spread),
      baseline: mean(ten.single),
      baselineLabel: `${CALLERS} connections calling one of the ${SERVERS} servers`,
      targetText: `${SERVERS} servers × ${CALLERS} connections: ratio >= 0.9`,
      checks: [["ratio", ">=", 0.9]],
      rounds: ROUNDS,
      roundMs: ROUND_MS,
      // CPU µs per call (utime+stime) of the daemon and of the echo children, per arm.
      ...ten.cpu,
    }),
    figure({
      name: "callScale.servers10x16.relay",
      unit: "calls/s",
      value: mean(ten.relay.spread),
      baseline: mean(ten.relay.single),
      baselineLabel: `the bare relay, ${CALLERS} connections calling one of its ${SERVERS} children`,
      checks: [],
      note: `the floor of callScale.servers10x16: the same arms through a bare relay owning ${SERVERS} echo children, same rounds`,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
    }),
  ];
});
