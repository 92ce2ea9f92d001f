// `node --import ./node20-glob-sync.mjs conformance-lane.mjs`: the official MCP conformance
// runner (@modelcontextprotocol/conformance, pinned) run many times, one run after another, in
// one Node process. Starting the runner costs about a CPU-second, almost all of it loading its
// dependencies (express, the SDK, zod); a lane loads them once, and each run imports the
// runner's bundle anew (about 0.08 CPU-s), so each run has a fresh copy of the runner's own
// state, as a process of its own would.
//
// Each line on stdin is one run: a JSON array of the runner's arguments (`client --scenario …`,
// `server --url …`). For it the lane writes JSON lines on stdout: `{"out": "…"}` as the runner
// prints (stdout and stderr, in order), then `{"code": N}` when the runner exits. The lane ends
// when stdin does. conformance-runner.ts drives it.
/* global URL */
import { createInterface } from "node:readline";

const RUNNER = new URL(
  "../../node_modules/@modelcontextprotocol/conformance/dist/index.js",
  import.meta.url,
).href;

const write = process.stdout.write.bind(process.stdout);
const exit = process.exit.bind(process);
const send = (message) => write(`${JSON.stringify(message)}\n`);

/**
 * What the runner prints, to the run's output; the lane's own lines go by `send`. What a run
 * prints after it exited (code of its that went on) is no run's output and is dropped.
 */
function capture(chunk, encoding, callback) {
  if (exited !== undefined) {
    send({ out: typeof chunk === "string" ? chunk : Buffer.from(chunk).toString() });
  }
  const done = typeof encoding === "function" ? encoding : callback;
  if (typeof done === "function") done();
  return true;
}
process.stdout.write = capture;
process.stderr.write = capture;

/** The exit of the run in progress: the runner ends each run by calling process.exit. */
let exited;

/**
 * Thrown by the lane's process.exit: the real one never returns, and the runner's code after
 * it must not run on (`skipped && process.exit(0); report(checks)` would print a passing
 * summary of no checks for a scenario the runner skipped).
 */
class LaneExit extends Error {}
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (error) => {
    if (error instanceof LaneExit) return;
    send({ out: `the runner failed: ${error?.stack ?? error}\n` });
    process.exit(1);
  });
}

process.exit = (code) => {
  const settle = exited;
  exited = undefined;
  settle?.(code ?? process.exitCode ?? 0);
  throw new LaneExit("the run exited");
};

let runs = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "") continue;
  const args = JSON.parse(line);
  const code = await new Promise((resolve) => {
    exited = resolve;
    process.argv = [process.argv[0], RUNNER, ...args];
    import(`${RUNNER}?run=${(runs += 1)}`).catch((error) => {
      if (error instanceof LaneExit) return;
      send({ out: `the runner failed to load: ${error?.stack ?? error}\n` });
      try {
        process.exit(1);
      } catch {
        // LaneExit: the run has ended.
      }
    });
  });
  process.exitCode = undefined;
  send({ code });
}
exit(0);
