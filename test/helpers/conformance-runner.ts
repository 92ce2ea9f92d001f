/**
 * The official MCP conformance runner (`@modelcontextprotocol/conformance client`) as a
 * child process, and its suite summary read back, for the suites in test/conformance. The
 * runner needs `fs.globSync`, which Node 20 lacks: node20-glob-sync.mjs supplies it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
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
  /** The run was killed at its bound. */
  boundReached?: boolean;
}

/** The runner's arguments for `adapter` as the client command, `clientTimeoutMs` its bound on each client. */
export function clientArgs(adapter: string, args: string[], clientTimeoutMs: number): string[] {
  return [
    "client",
    "--command",
    `${process.execPath} ${adapter}`,
    "--timeout",
    String(clientTimeoutMs),
    "--verbose",
    ...args,
  ];
}

/** Kills the process group of `pid`, if any of it is left. */
function killGroup(pid: number | undefined): void {
  try {
    if (pid !== undefined) process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
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
    ["--import", PRELOAD, RUNNER, ...clientArgs(adapter, args, clientTimeoutMs)],
    { stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let boundReached = false;
  const timer = setTimeout(() => {
    boundReached = true;
    killGroup(child.pid);
  }, boundMs);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output, ...(boundReached ? { boundReached } : {}) });
    }),
  );
}

const LANE = fileURLToPath(new URL("./conformance-lane.mjs", import.meta.url));

/** One conformance-lane.mjs: the runner, loaded once, run once a line, in its own process group. */
class Lane {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #exited: Promise<void>;
  #pending: { output: string; done(code: number | null): void } | undefined;
  alive = true;

  constructor() {
    this.#child = spawn(process.execPath, ["--import", PRELOAD, LANE], {
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    createInterface({ input: this.#child.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as { out?: string; code?: number };
      if (this.#pending === undefined) return;
      if (message.out !== undefined) this.#pending.output += message.out;
      else this.#pending.done(message.code ?? null);
    });
    this.#child.stderr.on("data", (chunk: Buffer) => {
      if (this.#pending) this.#pending.output += chunk.toString();
    });
    this.#exited = new Promise((resolve) =>
      this.#child.once("close", () => {
        this.alive = false;
        this.#pending?.done(null);
        resolve();
      }),
    );
  }

  /** The runner with `args`; past `boundMs` the lane is taken down, the run's code null. */
  run(args: string[], boundMs: number): Promise<Run> {
    if (this.#pending !== undefined) throw new Error("a lane runs one run at a time");
    return new Promise((resolve) => {
      let boundReached = false;
      const timer = setTimeout(() => {
        boundReached = true;
        killGroup(this.#child.pid);
      }, boundMs);
      const pending = {
        output: "",
        done: (code: number | null) => {
          clearTimeout(timer);
          this.#pending = undefined;
          resolve({ code, output: pending.output, ...(boundReached ? { boundReached } : {}) });
        },
      };
      this.#pending = pending;
      this.#child.stdin.write(`${JSON.stringify(args)}\n`);
    });
  }

  /** Ends the lane (at once if a run is still going) and whatever its runs left in its group. */
  async close(): Promise<void> {
    if (this.#pending !== undefined) killGroup(this.#child.pid);
    this.#child.stdin.end();
    await this.#exited;
    killGroup(this.#child.pid);
  }
}

/**
 * Runners that stay up between runs (conformance-lane.mjs): a run takes an idle lane, or
 * starts one, so a file that runs the runner many times loads it as many times as it has
 * runs going at once, not once a run. A run held past its bound takes its lane down, its
 * clients with it, and is answered as a runner killed at its bound is (code null, the output
 * so far); the next run starts a new lane. `close()` when the file is done with them.
 */
export class RunnerLanes {
  readonly #idle: Lane[] = [];
  readonly #lanes = new Set<Lane>();
  #closed = false;

  /** The runner with `args` (`client …`, `server …`), held to `boundMs`. */
  async run(args: string[], boundMs: number): Promise<Run> {
    if (this.#closed) throw new Error("the runner's lanes are closed");
    let lane = this.#idle.pop();
    if (lane === undefined) {
      lane = new Lane();
      this.#lanes.add(lane);
    }
    const run = await lane.run(args, boundMs);
    if (!lane.alive) this.#lanes.delete(lane);
    else if (this.#closed) await lane.close();
    else this.#idle.push(lane);
    return run;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#lanes].map((lane) => lane.close()));
  }
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
