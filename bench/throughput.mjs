/**
 * Throughput: calls/s from 16 client connections through one daemon to one
 * stdio echo child, vs 16 concurrent callers sharing one in-process SDK client to the same
 * fixture. Each caller calls in a loop, one call at a time; arms alternate in timed rounds.
 * The yardstick arm: 16 connections to a bare relay process that owns its own
 * echo child and forwards each line under a fresh id (agents/bare-relay.mjs).
 */
import { join } from "node:path";
import process from "node:process";
import { connect } from "mcpool-client";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { directClient, listAll } from "./lib/direct.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { drive } from "./lib/drive.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { figure, note } from "./lib/report.mjs";

const CALLERS = 16;
const ROUNDS = 4;
const ROUND_MS = Number(process.env.BENCH_THROUGHPUT_ROUND_MS ?? 2000);
const WARMUP_MS = 1000;
const ARGS = { text: "hello" };

run("Throughput", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  await startDaemon(home);
  const clients = [];
  for (let i = 0; i < CALLERS; i++) {
    const pool = await connect({
      socketPath: home.socketPath,
      clientName: `bench-throughput-${i}`,
    });
    onCleanup(() => pool.close());
    clients.push(pool);
  }
  await waitReady(clients[0], 1);
  const direct = await directClient(rows.echo());
  await listAll(direct.client);
  const relaySocket = join(home.dir, "relay.sock");
  const echo = rows.echo();
  await startAgent("bare-relay", [relaySocket, echo.command, ...echo.args]);
  const relays = [];
  for (let i = 0; i < CALLERS; i++) {
    const relay = await lineClient(relaySocket);
    onCleanup(() => relay.close());
    relays.push(relay);
  }

  const arms = {
    direct: Array.from(
      { length: CALLERS },
      () => () => direct.client.callTool({ name: "echo", arguments: ARGS }),
    ),
    daemon: clients.map((pool) => () => pool.call("echo__echo", ARGS)),
    relay: relays.map(
      (relay) => () => relay.request("tools/call", { name: "echo", arguments: ARGS }),
    ),
  };
  const names = ["direct", "daemon", "relay"];
  for (const arm of names) await drive(arms[arm], WARMUP_MS);
  const totals = Object.fromEntries(names.map((arm) => [arm, { calls: 0, ms: 0 }]));
  const perRound = Object.fromEntries(names.map((arm) => [arm, []]));
  for (let pass = 0; pass < ROUNDS; pass++) {
    const order = pass % 2 === 0 ? names : [...names].reverse();
    for (const arm of order) {
      const { calls, ms } = await drive(arms[arm], ROUND_MS);
      totals[arm].calls += calls;
      totals[arm].ms += ms;
      perRound[arm].push(Math.round((calls / ms) * 1000));
    }
  }
  const rate = (arm) => (totals[arm].calls / totals[arm].ms) * 1000;
  note(`calls/s per round: ${names.map((arm) => `${arm} ${perRound[arm].join(", ")}`).join("; ")}`);
  return [
    figure({
      name: "throughput.callsPerSecond",
      unit: "calls/s",
      value: rate("daemon"),
      baseline: rate("direct"),
      baselineLabel: "16 concurrent callers on one in-process SDK client",
      checks: [
        ["ratio", ">=", 0.5],
        ["value", ">=", 20000],
      ],
      callers: CALLERS,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
      perRound,
    }),
    figure({
      name: "throughput.callsPerSecond.vsRelay",
      unit: "calls/s",
      value: rate("daemon"),
      baseline: rate("relay"),
      baselineLabel: "16 connections to a bare relay process (own echo child)",
      checks: [["ratio", ">=", 0.7]],
      relayVsDirect: rate("relay") / rate("direct"),
      callers: CALLERS,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
    }),
  ];
});
