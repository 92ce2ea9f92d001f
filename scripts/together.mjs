#!/usr/bin/env node
/**
 * `node scripts/together.mjs "cmd 1" "cmd 2" …`: runs the commands at once (each through the
 * shell, as npm runs a script) and exits 1 if any of them failed, after all have ended. Each
 * command's output is held and printed whole when it ends, under the command and its time,
 * so that two commands' lines never mix. `npm test` runs the build of the root package, the
 * typecheck, eslint and prettier this way: each is one process on one core, and one after
 * the other they left the machine's second core idle for about half a minute.
 */
import { spawn } from "node:child_process";
import process from "node:process";

const commands = process.argv.slice(2);
if (commands.length === 0) {
  console.error('usage: node scripts/together.mjs "command" ["command" …]');
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
function run(command) {
  const started = process.hrtime.bigint();
  const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const output = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
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

const outcomes = await Promise.all(commands.map(run));
process.exit(outcomes.every(Boolean) ? 0 : 1);
