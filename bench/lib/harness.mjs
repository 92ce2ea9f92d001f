/**
 * Running one bench script: its cleanups run on success, on error and on SIGINT/SIGTERM,
 * and then anything still carrying this run's mark is killed by pid, so no daemon or child
 * outlives the bench. Only a bench script's entry point calls run(); agents never do.
 */
import process from "node:process";
import { runCleanups } from "./cleanup.mjs";
import { emit, table } from "./report.mjs";
import { marked, sweep, until } from "./procs.mjs";

export { onCleanup } from "./cleanup.mjs";

async function cleanUp() {
  await runCleanups();
  // Children stopped gracefully may still be on their way out; then the net.
  await until(() => marked().length === 0, 5_000, 50);
  const left = sweep();
  if (left.length > 0)
    process.stderr.write(`bench: killed leftover processes ${left.join(", ")}\n`);
}

/**
 * Runs `main`, which resolves with the figures; prints them (JSON on stdout, a table on
 * stderr) and exits 0, or 1 when it threw.
 */
export function run(title, main) {
  let ending = false;
  const end = async (code) => {
    if (ending) return;
    ending = true;
    await cleanUp();
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => void end(130));
  process.once("exit", () => sweep());
  const started = Date.now();
  main()
    .then(
      (figures) => {
        emit(figures);
        table(figures, `${title} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        return 0;
      },
      (error) => {
        process.stderr.write(`${title} failed: ${error?.stack ?? error}\n`);
        return 1;
      },
    )
    .then(end);
}
