/**
 * The real hosts and frameworks: the pinned npm packages, their
 * install into a cached temp prefix, and a user's world for them — a private HOME, the
 * user's daemon (`mcpool serve` from the login environment, as a shell or a service starts
 * it) serving server-everything, -memory and -filesystem, `mcpool wire <host> --write` as
 * the user runs it. The hosts' own files and `mcp list` are real-hosts-cli.ts, the frameworks'
 * client real-hosts-frameworks.ts.
 *
 * Opt-in: `MCPOOL_REAL_HOSTS=1`, or `CI=true` (CI runs `npm test` with network to the npm
 * registry). The install is cached in os.tmpdir()/mcpool-real-hosts-<hash of the pins>.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connect } from "mcpool-client";
import { expect } from "vitest";
import { mcpSocketPath } from "../../src/bridge/lean/mcp-socket-paths.js";
import { EXTRA_CA_CERTS } from "../global-setup.js";
import { cliPath } from "./daemon.js";
import { alive, daemonsFor, stopAll, waitFor } from "./processes.js";

/** Whether the suite runs: it installs ~1.6 GB from the npm registry the first time. */
export const REAL_HOSTS = process.env.MCPOOL_REAL_HOSTS === "1" || process.env.CI === "true";

/** The title a skipped suite shows: how to turn it on. */
export const REAL_HOSTS_OFF =
  "skipped: set MCPOOL_REAL_HOSTS=1 (CI=true does too) to install the pinned hosts and run them";

/**
 * Every package the suite installs, pinned exactly (picked from `npm view <pkg> version`,
 * 2026-12-04). The frameworks' peers are pinned too, so npm's peer install cannot float.
 */
export const PINS = {
  hosts: {
    "@anthropic-ai/claude-code": "2.1.332",
    "@google/gemini-cli": "0.61.0",
    "@qwen-code/qwen-code": "0.24.4",
    "opencode-ai": "1.18.33",
    "@openai/codex": "0.171.0",
  },
  frameworks: {
    "@ai-sdk/mcp": "2.0.99",
    "@langchain/mcp-adapters": "1.1.4",
    "@langchain/core": "1.4.0",
    "@langchain/langgraph": "1.7.3",
    "@mastra/mcp": "2.0.0",
    "@mastra/core": "1.71.0",
    zod: "4.6.7",
  },
} as const satisfies Record<string, Record<string, string>>;

export type PinGroup = keyof typeof PINS;

/**
 * Bound on one group's cold install: the hosts are ~1.4 GB of native binaries. The suite's
 * budget (installs included) is 10 minutes on 2 cores.
 */
export const INSTALL_MS = 6 * 60_000;

/**
 * npm's flags: no install scripts (node-pty's would compile, and `mcp list` needs no
 * terminal), and nothing said about funding or audit. The scripts a host needs are
 * POSTINSTALL's, run after.
 */
const NPM_FLAGS = ["--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

/**
 * The install scripts the hosts cannot run without, per group: each puts the native binary
 * of the platform's optional dependency in place of the package's stub (`bin/claude.exe`,
 * `bin/opencode.exe`).
 */
const POSTINSTALL: Record<PinGroup, readonly [pkg: string, script: string][]> = {
  hosts: [
    ["@anthropic-ai/claude-code", "install.cjs"],
    ["opencode-ai", "postinstall.mjs"],
  ],
  frameworks: [],
};

/** Runs `command` to its end within `timeoutMs`; rejects with its output on failure. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string | undefined; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => killGroup(child), options.timeoutMs);
    // Read on `close`, not `exit`: a process may exit before its output is read (on a loaded
    // machine `mcpool status --json` was parsed as empty). What it left in its group (a
    // framework's entries) goes with it, and so lets go of the output.
    child.once("exit", () => killGroup(child));
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(new Error(`${command} ${args.join(" ")} ended with ${code ?? signal}:\n${output}`));
    });
  });
}

/** SIGKILLs the process group `child` leads (it was spawned detached). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // gone
  }
}

/**
 * The environment for npm's install from the registry: the run's, with the CA bundle the run
 * set aside (test/global-setup.ts) handed back, as the registry may be reached through a proxy
 * that only that bundle trusts.
 */
function registryEnv(): NodeJS.ProcessEnv {
  const bundle = process.env[EXTRA_CA_CERTS];
  return bundle === undefined ? process.env : { ...process.env, NODE_EXTRA_CA_CERTS: bundle };
}

/**
 * The prefix holding `group`'s pinned packages (`<prefix>/node_modules/.bin/…`), installed by
 * `npm install --prefix` the first time and then reused. The install goes to a folder of its
 * own, renamed into place when complete: two test files installing at once both end with one
 * whole prefix, and a killed install leaves nothing that looks done.
 */
export async function installed(group: PinGroup): Promise<string> {
  const pins = PINS[group];
  const key = createHash("sha256")
    .update(JSON.stringify({ pins, NPM_FLAGS, scripts: POSTINSTALL[group] }))
    .digest("hex")
    .slice(0, 12);
  const prefix = join(tmpdir(), `mcpool-real-hosts-${group}-${key}`);
  if (existsSync(join(prefix, "node_modules"))) return prefix;
  const started = Date.now();
  const partial = `${prefix}.partial-${randomUUID()}`;
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, "package.json"), JSON.stringify({ private: true }));
  try {
    const specs = Object.entries(pins).map(([name, version]) => `${name}@${version}`);
    await run("npm", ["install", "--prefix", partial, ...NPM_FLAGS, ...specs], {
      cwd: partial,
      env: registryEnv(),
      timeoutMs: INSTALL_MS,
    });
    for (const [pkg, script] of POSTINSTALL[group]) {
      const dir = join(partial, "node_modules", pkg);
      await run(process.execPath, [join(dir, script)], {
        cwd: dir,
        env: registryEnv(),
        timeoutMs: 120_000,
      });
    }
    try {
      renameSync(partial, prefix);
    } catch (error) {
      // Another file's install finished first: keep its prefix.
      if (!existsSync(join(prefix, "node_modules"))) throw error;
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  // The figure the suite's budget is about (10 minutes, installs included).
  console.info(
    `real hosts: installed ${group} in ${Math.round((Date.now() - started) / 1000)} s at ${prefix}`,
  );
  return prefix;
}

/** A pinned package's command in `prefix`. */
export const binIn = (prefix: string, name: string): string =>
  join(prefix, "node_modules", ".bin", name);

const require = createRequire(import.meta.url);
const referenceBin = (name: string): string =>
  join(dirname(require.resolve(`${name}/package.json`)), "dist", "index.js");

/** A stdio server as mcp.json and a host's file spell it. */
export interface Stdio {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The pooled servers, in the order the assertions name them. */
export const SERVER_IDS = ["everything", "memory", "filesystem"] as const;
export type ServerId = (typeof SERVER_IDS)[number];

/** The user's world: a private HOME, its project, its daemon's socket and environments. */
export interface RealWorld {
  home: string;
  /** Where the hosts run (their working directory), and server-filesystem's directory. */
  project: string;
  /** The user's daemon socket: `$XDG_RUNTIME_DIR/mcpool/mcpool.sock` of the login shell. */
  socket: string;
  /** The three servers, spelled the same in mcp.json and in each host's direct file. */
  rows: Record<ServerId, Stdio>;
  /** The user's shell: PATH, HOME, XDG_RUNTIME_DIR (and this run's leak marker). */
  login: Record<string, string>;
  /** What the MCP SDK hands a stdio server: PATH and HOME (and the marker). */
  bare: Record<string, string>;
  /** `mcpool serve` from the login shell, until every server's MCP socket is there. */
  serve(): Promise<number>;
  /** Stops every daemon of this HOME (the user's and any stray) and waits until gone. */
  stopDaemons(): Promise<void>;
  /** Live `mcpool serve` processes whose HOME is this one, whatever socket they serve. */
  daemons(): number[];
  /** `mcpool <args>` in the login shell (PATH may be replaced): its exit code and output. */
  cli(args: string[], path?: string): Promise<{ code: number | null; stdout: string }>;
  /** `mcpool status --json` in the login shell. */
  status(): Promise<DaemonStatus>;
  remove(): Promise<void>;
}

/** The parts of `mcpool status --json` the suite reads. */
export interface DaemonStatus {
  pid: number;
  socketPath: string;
  servers: { id: string; status: string; resources?: { callsLastMinute: number } }[];
  strays: { pid: number; socket: string }[];
}

/** Every live `mcpool serve` whose environment has `HOME=home`. */
function daemonsOfHome(home: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0");
      if (!argv.includes("serve") || !argv.some((a) => a.endsWith("main.js"))) continue;
      const environ = readFileSync(`/proc/${name}/environ`, "latin1").split("\0");
      if (environ.includes(`HOME=${home}`)) out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

export function realWorld(): RealWorld {
  const home = mkdtempSync(join(tmpdir(), "mcpool-real-hosts-home-"));
  const project = join(home, "project");
  const runtime = join(home, "xdg");
  mkdirSync(project, { recursive: true });
  mkdirSync(runtime, { recursive: true, mode: 0o700 });
  const socket = join(runtime, "mcpool", "mcpool.sock");
  const marker = { MCPOOL_TEST_RUN: process.env.MCPOOL_TEST_RUN ?? "" };
  const bare = { PATH: process.env.PATH ?? "", HOME: home, ...marker };
  const login = { ...bare, XDG_RUNTIME_DIR: runtime, TERM: "dumb", NO_COLOR: "1" };
  const node = process.execPath;
  const rows: Record<ServerId, Stdio> = {
    everything: { command: node, args: [referenceBin("@modelcontextprotocol/server-everything")] },
    memory: {
      command: node,
      args: [referenceBin("@modelcontextprotocol/server-memory")],
      env: { MEMORY_FILE_PATH: join(home, "memory.jsonl") },
    },
    filesystem: {
      command: node,
      args: [referenceBin("@modelcontextprotocol/server-filesystem"), project],
    },
  };
  // Where the daemon finds its config from HOME alone: ~/.config/mcpool/mcp.json.
  const config = join(home, ".config", "mcpool", "mcp.json");
  mkdirSync(dirname(config), { recursive: true });
  writeFileSync(config, JSON.stringify({ mcpServers: rows }, null, 2));

  const cli = async (args: string[], path?: string) => {
    const env = path === undefined ? login : { ...login, PATH: path };
    try {
      return { code: 0, stdout: await run(node, [cliPath, ...args], { env, timeoutMs: 30_000 }) };
    } catch (error) {
      return { code: 1, stdout: String(error) };
    }
  };
  const world: RealWorld = {
    home,
    project,
    socket,
    rows,
    login,
    bare,
    async serve() {
      const child = spawn(node, [cliPath, "serve"], {
        env: login,
        stdio: "ignore",
        detached: true,
      });
      child.unref();
      for (const id of SERVER_IDS) {
        const path = mcpSocketPath(socket, id) as string;
        await waitFor(() => existsSync(path), 30_000, `${id}'s MCP socket`);
      }
      return child.pid!;
    },
    async stopDaemons() {
      await stopAll([...new Set([...daemonsFor(socket), ...daemonsOfHome(home)])]);
    },
    daemons: () => daemonsOfHome(home),
    cli,
    async status() {
      const { code, stdout } = await cli(["status", "--json"]);
      if (code !== 0) throw new Error(`mcpool status failed: ${stdout}`);
      return JSON.parse(stdout) as DaemonStatus;
    },
    async remove() {
      await world.stopDaemons();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return world;
}

/** The one daemon of this HOME is the user's, on its socket, and no stray is listed. */
export async function expectOneUserDaemon(world: RealWorld): Promise<number> {
  const status = await world.status();
  expect(status.socketPath).toBe(world.socket);
  expect(world.daemons()).toEqual([status.pid]);
  expect(status.strays).toEqual([]);
  return status.pid;
}

/**
 * `items` dealt in turn into at most `count` lanes, each lane keeping its items' order: a
 * test file runs its lanes side by side (each item in its own world) and the items of one
 * lane one after another, so no more than `count` hosts start at once on a loaded machine.
 */
export function lanes<T>(items: readonly T[], count: number): T[][] {
  const out: T[][] = Array.from({ length: Math.min(count, items.length) }, () => []);
  items.forEach((item, i) => out[i % out.length]!.push(item));
  return out;
}

/**
 * Whether a daemon answers on the user's socket now: asked from here, as cheap to repeat
 * while the daemons a host's entries started settle as a `mcpool status` process is not.
 */
export async function daemonAnswers(world: RealWorld): Promise<boolean> {
  const pool = await connect({ socketPath: world.socket, clientName: "real-hosts-probe" }).catch(
    () => undefined,
  );
  if (pool === undefined) return false;
  try {
    await pool.status();
    return true;
  } catch {
    return false;
  } finally {
    await pool.close().catch(() => undefined);
  }
}

/**
 * Waits until the daemon's every server is ready (a host's list then needs no luck): asked
 * over the daemon's socket from here, not by a `mcpool status` process each time.
 */
export async function serversReady(world: RealWorld): Promise<void> {
  const pool = await connect({ socketPath: world.socket, clientName: "real-hosts-ready" });
  try {
    await waitFor(
      async () => (await pool.state()).every((s) => s.status === "ready"),
      30_000,
      "every pooled server to be ready",
    );
  } finally {
    await pool.close();
  }
}
