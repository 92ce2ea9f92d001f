/**
 * `npm run bench`: every figure script, one after the other (they would only measure each
 * other if run at once), each in its own process. Their JSON lines pass through to stdout,
 * their progress to stderr, and the whole table is printed again at the end.
 *   node bench/run-all.mjs [hop throughput …] [--out results.json]
 * Exit code 1 if a script failed (its figures are then missing, and said to be).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";
import { environment, table } from "./lib/report.mjs";

/**
 * sharing.mjs goes last: it starts 100 servers (6.7 GB) and stops them, and what follows it on this
 * VM measures that, not itself — the call during a swap of reconcile.mjs read 11.9–13.4 ms right after sharing.mjs
 * (with the CPUs 99% idle) against 7.2–7.9 ms on its own, the catalog of scale.mjs 2.14 against 1.69 ms.
 */
const SCRIPTS = [
  ["hop", "hop.mjs"],
  ["attach", "attach.mjs"],
  ["throughput", "throughput.mjs"],
  ["reconcile", "reconcile.mjs"],
  ["scale", "scale.mjs"],
  ["idle", "idle.mjs"],
  ["config-scale", "config-scale.mjs"],
  ["memory", "memory.mjs"],
  ["entry", "entry.mjs"],
  ["call-scale", "call-scale.mjs"],
  ["catalog", "catalog.mjs"],
  ["host-eras", "host-eras.mjs"],
  ["sharing", "sharing.mjs"],
];
/** One script that takes longer than this is stuck; the whole run must fit in ten minutes. */
const SCRIPT_TIMEOUT_MS = 4 * 60_000;

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const outFile = outAt === -1 ? undefined : args[outAt + 1];
const wanted = args.filter((arg, i) => !arg.startsWith("--") && (outAt === -1 || i !== outAt + 1));
const selected = SCRIPTS.filter(([id]) => wanted.length === 0 || wanted.includes(id));

function runScript(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL(file, import.meta.url))], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const figures = [];
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() === "") continue;
        process.stdout.write(`${line}\n`);
        figures.push(JSON.parse(line));
      }
    });
    // SIGTERM lets the script's harness stop what it started.
    const timer = setTimeout(() => child.kill("SIGTERM"), SCRIPT_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, figures });
    });
  });
}

const started = Date.now();
const all = [];
let failed = false;
for (const [id, file] of selected) {
  process.stderr.write(`\n▶ ${file}\n`);
  const { code, figures } = await runScript(file);
  all.push(...figures);
  if (code !== 0) {
    failed = true;
    all.push({ name: `${id}`, skipped: `the script failed (exit ${code})` });
  }
}
const seconds = ((Date.now() - started) / 1000).toFixed(0);
const env = environment();
table(
  all,
  `All figures — ${seconds} s on ${env.cpus} × ${env.cpuModel}, ${env.memoryGiB} GiB, Node ${env.node}, ${env.platform}, load ${env.loadavg1m}`,
);
if (outFile)
  writeFileSync(
    outFile,
    `${JSON.stringify({ environment: env, seconds, figures: all }, null, 2)}\n`,
  );
process.exit(failed ? 1 : 0);
