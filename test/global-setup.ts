/**
 * Every process a test run starts carries MCPOOL_TEST_RUN in its environment (children
 * inherit it). When the run ends, any live process still carrying it, other than this one,
 * is a leak: the run fails and names it.
 *
 * The run's processes start without NODE_EXTRA_CA_CERTS. Node 20 reads and parses the whole
 * bundle it names as each process starts, not when a TLS connection first needs it: a system
 * bundle of ~140 certificates costs every Node process ~50 ms of CPU, and the suite starts
 * thousands (daemons, entries, fixtures, reference servers). Only the real hosts' install from
 * the npm registry makes a TLS connection; it is handed the bundle back
 * (test/helpers/real-hosts.ts, `registryEnv`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";

const marker = `MCPOOL_TEST_RUN=${randomUUID()}`;

/** Where the run keeps NODE_EXTRA_CA_CERTS for the one process that needs it. */
export const EXTRA_CA_CERTS = "MCPOOL_TEST_EXTRA_CA_CERTS";

export function setup(): void {
  process.env.MCPOOL_TEST_RUN = marker.split("=")[1];
  const bundle = process.env.NODE_EXTRA_CA_CERTS;
  if (bundle !== undefined) {
    process.env[EXTRA_CA_CERTS] = bundle;
    delete process.env.NODE_EXTRA_CA_CERTS;
  }
}

export function leakedProcesses(mark = marker): string[] {
  const leaks: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "latin1");
      if (!environ.split("\0").includes(mark)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      leaks.push(
        `${name}: ${readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " ").trim()}`,
      );
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return leaks;
}

export async function teardown(): Promise<void> {
  // Children stopped by the last test may still be on their way out of the stop ladder.
  const deadline = Date.now() + 10_000;
  let leaks = leakedProcesses();
  while (leaks.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    leaks = leakedProcesses();
  }
  if (leaks.length > 0) {
    throw new Error(`processes outlived the test run:\n${leaks.join("\n")}`);
  }
}
