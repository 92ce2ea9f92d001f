/**
 * The cleanups a bench script owes: daemons to stop, clients to close, temp homes to
 * remove. Only a list; lib/harness.mjs runs it when the script ends, however it ends.
 */
import process from "node:process";

const cleanups = [];

/** Registers `fn` to run (last registered first) at the end; returns its deregistration. */
export function onCleanup(fn) {
  cleanups.push(fn);
  return () => {
    const at = cleanups.indexOf(fn);
    if (at !== -1) cleanups.splice(at, 1);
  };
}

/** Runs and forgets every registered cleanup, last first; a failing one does not stop the rest. */
export async function runCleanups() {
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    try {
      await fn();
    } catch (error) {
      process.stderr.write(`bench cleanup failed: ${error?.stack ?? error}\n`);
    }
  }
}
