#!/usr/bin/env node
/**
 * `node scripts/together.mjs [--live "cmd 0"] "cmd 1" "cmd 2" …`: runs the commands at once
 * (each through the shell, as npm runs a script) and exits 1 if any of them failed, after all
 * have ended. Each command's output is held and printed whole when it ends, under the command
 * and its time, so that two commands' lines never mix; the `--live` command's output alone goes
 * straight to this process's own. `npm test` runs the tests live with the typecheck, eslint and
 * prettier beside them: one after the other, those three held the tests back by most of a
 * minute; beside the tests they take their share of the cores from the start, and the whole
 * run ends sooner (the suite is CPU-bound, so they do not come free: they lengthen it by less
 * than their own time).
 */
import { spawn } from "node:child_process";
import process from "node:process";

const args = process.argv.slice(2);
const live = args[0] === "--live" ? args[1] : undefined;
const commands = live === undefined ? args : args.slice(2);
if (commands.length === 0 && live === undefined) {
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

/**
 * Runs one command; resolves once it has ended with whether it succeeded and a `report()` that
 * prints its outcome and time, and its output held until then (none, when `streamed`).
 */
function run(command, streamed = false) {
  const started = process.hrtime.bigint();
  const child = spawn(command, {
    shell: true,
    stdio: streamed ? "inherit" : ["ignore", "pipe", "pipe"],
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
      const report = () => {
        process.stdout.write(`\n> ${command}: ${outcome}, ${seconds.toFixed(1)} s\n`);
        process.stdout.write(Buffer.concat(output));
      };
      resolve({ ok: code === 0, report });
    });
  });
}

// The held commands report as each ends, or, beside a live one, once it has ended: after its
// last line rather than in the middle of its output.
const liveRun = live === undefined ? undefined : run(live, true);
const held = commands.map((command) =>
  run(command).then(async (ran) => {
    await liveRun;
    ran.report();
    return ran;
  }),
);
const outcomes = await Promise.all(liveRun === undefined ? held : [liveRun, ...held]);
if (liveRun !== undefined) (await liveRun).report();
process.exit(outcomes.every((ran) => ran.ok) ? 0 : 1);
