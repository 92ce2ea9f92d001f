#!/usr/bin/env node
/**
 * `node scripts/together.mjs [--live "cmd"] "cmd 1" "cmd 2" …`: runs the commands at once (each
 * through the shell, as npm runs a script) and exits 1 if any of them failed, after all have
 * ended. Each command's output is held and printed whole when it ends, under the command and
 * its time, so that two commands' lines never mix; the `--live` command's output is passed on
 * as it comes (a test run that takes minutes shows its progress).
 *
 * `npm test` runs the tests this way beside the typecheck, eslint and prettier: the tests
 * leave about 40% of two cores idle (they wait on the processes they start), and the three
 * checks, each one process on one core, fill it instead of holding the tests back a minute.
 */
import { spawn } from "node:child_process";
import process from "node:process";

const args = process.argv.slice(2);
const live = args[0] === "--live" ? args[1] : undefined;
const commands = live === undefined ? args : args.slice(2);
if ((live === undefined && args[0] === "--live") || live?.length === 0 || args.length === 0) {
  console.error('usage: node scripts/together.mjs [--live "command"] "command" ["command" …]');
  process.exit(2);
}

const children = new Set();
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** Runs one command; resolves with whether it succeeded, once its output is printed. */
function run(command, shown = false) {
  const started = process.hrtime.bigint();
  const child = spawn(command, {
    shell: true,
    stdio: ["ignore", shown ? "inherit" : "pipe", shown ? "inherit" : "pipe"],
  });
  children.add(child);
  const output = [];
  child.stdout?.on("data", (chunk) => output.push(chunk));
  child.stderr?.on("data", (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on("close", (code, signal) => {
      children.delete(child);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const outcome = code === 0 ? "ok" : `failed (${signal ?? `exit ${code}`})`;
      process.stdout.write(`\n> ${command}: ${outcome}, ${seconds.toFixed(1)} s\n`);
      process.stdout.write(Buffer.concat(output));
      resolve(code === 0);
    });
  });
}

const outcomes = await Promise.all([
  ...(live === undefined ? [] : [run(live, true)]),
  ...commands.map((command) => run(command)),
]);
process.exit(outcomes.every(Boolean) ? 0 : 1);
