/**
 * `node bench/syscalls.mjs [N]`: the syscalls per sequential echo call of the daemon and of
 * the bare relay (agents/bare-relay.mjs), counted with `strace -f -c -p <pid>` over N calls
 * after a warm-up (to see why the daemon makes more syscalls a call than the relay).
 * Needs strace and ptrace permission on this user's processes.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { connect } from "mcpool-client";
import { startAgent } from "./lib/agents.mjs";
import { benchHome, rows, startDaemon, waitReady } from "./lib/daemon.mjs";
import { onCleanup, run } from "./lib/harness.mjs";
import { lineClient } from "./lib/line-client.mjs";
import { note } from "./lib/report.mjs";

const CALLS = Number(process.argv[2] ?? 2000);
const WARMUP = 500;
const ARGS = { text: "hello" };

/** Per-call counts of each syscall `pid` (and its threads) made while `drive` ran. */
async function traced(pid, drive) {
  const strace = spawn("strace", ["-f", "-c", "-p", String(pid)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let report = "";
  strace.stderr.on("data", (chunk) => (report += chunk.toString()));
  // strace says "Process N attached" once it is on every thread.
  await new Promise((resolve) => {
    const check = () =>
      report.includes("attached") ? resolve() : strace.stderr.once("data", check);
    check();
  });
  await drive();
  const done = new Promise((resolve) => strace.once("exit", resolve));
  strace.kill("SIGINT");
  await done;
  const counts = {};
  for (const line of report.split("\n")) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 5 && /^\d/.test(cols[0]) && /^[a-z_0-9]+$/.test(cols.at(-1))) {
      counts[cols.at(-1)] = Number(cols[3]) / CALLS;
    }
  }
  return counts;
}

async function repeat(call, n) {
  for (let i = 0; i < n; i++) await call();
}

run("syscalls per sequential echo call", async () => {
  const home = benchHome();
  home.writeConfig({ echo: rows.echo() });
  const daemon = await startDaemon(home);
  const pool = await connect({ socketPath: home.socketPath, clientName: "bench-syscalls" });
  onCleanup(() => pool.close());
  await waitReady(pool, 1);
  const call = () => pool.call("echo__echo", ARGS);
  await repeat(call, WARMUP);
  const daemonCounts = await traced(daemon.pid, () => repeat(call, CALLS));

  const socket = join(home.dir, "relay.sock");
  const echo = rows.echo();
  const relay = await startAgent("bare-relay", [socket, echo.command, ...echo.args]);
  const line = await lineClient(socket);
  onCleanup(() => line.close());
  const relayCall = () => line.request("tools/call", { name: "echo", arguments: ARGS });
  await repeat(relayCall, WARMUP);
  const relayCounts = await traced(relay.pid, () => repeat(relayCall, CALLS));
  line.close();
  await relay.stop();

  const names = [...new Set([...Object.keys(daemonCounts), ...Object.keys(relayCounts)])];
  names.sort((a, b) => (daemonCounts[b] ?? 0) - (daemonCounts[a] ?? 0));
  for (const name of names) {
    note(
      `${name.padEnd(16)} daemon ${(daemonCounts[name] ?? 0).toFixed(2).padStart(6)}   relay ${(relayCounts[name] ?? 0).toFixed(2).padStart(6)}`,
    );
  }
  return [];
});
