#!/usr/bin/env node
/**
 * `npm run test:load`: `npm test` with two processes burning a core each beside it, as the
 * suite runs on a busy machine. A test that passes alone and fails here waits on a clock or
 * meets a race in the product. Exits with `npm test`'s status and prints its wall time.
 *
 * The burners are always ended: when the suite ends, when this script is interrupted
 * (Ctrl-C, SIGTERM, SIGHUP: the signal is passed on to the suite, which ends first), and
 * when this script dies without a word (each burner ends itself once its parent is gone).
 */
import { spawn } from "node:child_process";
import process from "node:process";

const BURNERS = 2;

/** Spins; between spins, ends once the process that started it has gone (its parent changes). */
const BURN = `const parent = process.ppid;
for (;;) {
  for (let i = 0; i < 5e7; i++);
  if (process.ppid !== parent) process.exit(0);
}`;

const burners = Array.from({ length: BURNERS }, () =>
  spawn(process.execPath, ["-e", BURN], { stdio: "ignore" }),
);

function stopBurners() {
  for (const burner of burners) {
    if (burner.exitCode === null && burner.signalCode === null) burner.kill("SIGKILL");
  }
}
process.on("exit", stopBurners);

const started = process.hrtime.bigint();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
// Its own process group, so a signal reaches the whole suite (vitest and its workers) at once.
const suite = spawn(npm, ["test"], { stdio: "inherit", detached: true });

let interrupted;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    interrupted ??= signal;
    stopBurners();
    try {
      process.kill(-suite.pid, signal);
    } catch {
      // The suite has ended already.
    }
  });
}

suite.on("exit", (code, signal) => {
  stopBurners();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const wall = `${Math.floor(seconds / 60)}m ${(seconds % 60).toFixed(1)}s`;
  const status = code ?? 1;
  const how = signal ? `ended by ${signal}` : `exited ${status}`;
  process.stderr.write(
    `test:load: npm test ${how} after ${wall} (${seconds.toFixed(1)} s) beside ${BURNERS} CPU burners${interrupted ? `, interrupted by ${interrupted}` : ""}\n`,
  );
  process.exitCode = signal ? 1 : status;
});
