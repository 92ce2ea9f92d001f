/**
 * The official MCP conformance runner (`@modelcontextprotocol/conformance client`) as a
 * child process, and its suite summary read back, for the suites in test/conformance. The
 * runner needs `fs.globSync`, which Node 20 lacks: node20-glob-sync.mjs supplies it.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const PACKAGE = new URL("../../node_modules/@modelcontextprotocol/conformance/", import.meta.url);
export const RUNNER = fileURLToPath(new URL("dist/index.js", PACKAGE));

/** What a revision requires, as the pinned suite's own requirements file lists it. */
export interface Requirements {
  server: string[];
  client: string[];
  notScored: { scenario: string; leg: "server" | "client"; reason: string }[];
}

/** `requirements/<revision>.yaml` of the pinned suite: the scenarios a revision requires. */
export function requirements(revision: string): Requirements {
  const file = fileURLToPath(new URL(`requirements/${revision}.yaml`, PACKAGE));
  const parsed = parse(readFileSync(file, "utf8")) as {
    server?: string[];
    client?: string[];
    not_scored?: Requirements["notScored"];
  };
  return {
    server: parsed.server ?? [],
    client: parsed.client ?? [],
    notScored: parsed.not_scored ?? [],
  };
}
const PRELOAD = fileURLToPath(new URL("./node20-glob-sync.mjs", import.meta.url));

export interface Run {
  code: number | null;
  output: string;
}

/**
 * The runner with `adapter` as the client command, in its own process group, so a bound
 * that runs out takes its clients (and whatever they started) too. `clientTimeoutMs` is the
 * runner's own bound on each client.
 */
export function conformance(
  adapter: string,
  args: string[],
  boundMs: number,
  clientTimeoutMs: number,
): Promise<Run> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      PRELOAD,
      RUNNER,
      "client",
      "--command",
      `${process.execPath} ${adapter}`,
      "--timeout",
      String(clientTimeoutMs),
      "--verbose",
      ...args,
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }, boundMs);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

export interface Outcome {
  passed: number;
  failed: number;
  warnings: number;
  /** The failing checks' messages, as the runner prints them with --verbose. */
  reasons: string[];
}

/** The suite summary: `✓ name: 3 passed, 0 failed[, 1 warnings]`, failures indented below. */
export function summary(output: string): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  const text = output.slice(output.indexOf("=== SUITE SUMMARY ==="));
  let current: Outcome | undefined;
  for (const line of text.split("\n")) {
    const head = /^[✓✗] (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?$/.exec(line);
    if (head) {
      current = {
        passed: Number(head[2]),
        failed: Number(head[3]),
        warnings: Number(head[4] ?? 0),
        reasons: [],
      };
      out.set(head[1]!, current);
    } else if (current && line.startsWith("    - ")) current.reasons.push(line.slice(6));
  }
  return out;
}

/** A single scenario's verdict and counts: `Passed: 8/8, 0 failed, 0 warnings`. */
export function soloOutcome(output: string): { passed: boolean; counts: string } {
  const counts = /Passed: (\d+\/\d+, \d+ failed, \d+ warnings)/.exec(output)?.[1] ?? "no result";
  return { passed: /OVERALL: PASSED/.test(output), counts };
}
