/**
 * The frameworks of the real-hosts suite: the AI SDK's MCP client,
 * LangChain's MCP adapters and Mastra's MCPClient, each driven by
 * test/fixtures/real-hosts/framework-client.mjs run from the frameworks' prefix (so its imports
 * are the pinned packages), with the environment a test gives it; and the hooks the other real-host
 * tests assert through (capability-gated tool lists, roots, a daemon restart).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { fixture, waitFor } from "./processes.js";
import { killGroup, run, type RealWorld, type ServerId, type Stdio } from "./real-hosts.js";

/**
 * The driver, copied into `prefix` so that its imports resolve there (fresh each run). The
 * copy is renamed into place whole: frameworks running side by side each copy it while
 * another may be starting from it.
 */
function driver(prefix: string): string {
  const path = join(prefix, "framework-client.mjs");
  const copy = `${path}.${randomUUID()}`;
  copyFileSync(fixture("real-hosts/framework-client.mjs"), copy);
  renameSync(copy, path);
  return path;
}

/** The frameworks driven by test/fixtures/real-hosts/framework-client.mjs. */
export const FRAMEWORKS = ["ai-sdk", "langchain", "mastra"] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export interface ToolCall {
  server: ServerId;
  tool: string;
  arguments: Record<string, unknown>;
}

/** A call's outcome: the answer's text, or the error the framework threw. */
export type CallResult = ToolCall & { text?: string; isError?: boolean; error?: string };

export interface FrameworkRun {
  /** Each server's tool names, sorted, as the framework lists them. */
  tools: Record<string, string[]>;
  calls: CallResult[];
  /** With `runFrameworkAcross`: the calls made after `between`, in the same sessions. */
  then?: CallResult[];
}

/** Bound on one framework run: three entries spawned, listed and called on a loaded machine. */
export const FRAMEWORK_MS = 60_000;

/**
 * `framework`'s own client over `entries` (one per server), making `calls`: the driver runs
 * from the frameworks' prefix with `env` (the bare environment unless told), and each
 * framework spawns the entries with its own default environment.
 */
export async function runFramework(
  prefix: string,
  framework: Framework,
  entries: Record<string, Stdio>,
  calls: readonly ToolCall[],
  env: Record<string, string>,
  cwd?: string,
): Promise<FrameworkRun> {
  const out = await run(
    process.execPath,
    [driver(prefix), framework, JSON.stringify({ entries, calls })],
    {
      env,
      cwd,
      timeoutMs: FRAMEWORK_MS,
    },
  );
  const line = out.split("\n").find((l) => l.startsWith('{"tools"'));
  if (line === undefined) throw new Error(`${framework} printed no result:\n${out}`);
  return JSON.parse(line) as FrameworkRun;
}

/**
 * Hook for sessions that survive a daemon restart:
 * `framework`'s sessions over `entries` make `calls`, then wait while `between` runs (e.g.
 * `restartDaemon`), then make `then` in the same sessions — the run's `then` holds what each
 * answered or the error it met.
 */
export function runFrameworkAcross(
  prefix: string,
  framework: Framework,
  entries: Record<string, Stdio>,
  calls: readonly ToolCall[],
  then: readonly ToolCall[],
  between: () => Promise<unknown>,
  env: Record<string, string>,
): Promise<FrameworkRun> {
  return new Promise((resolve, reject) => {
    const spec = JSON.stringify({ entries, calls, then });
    const child = spawn(process.execPath, [driver(prefix), framework, spec], {
      env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    let paused = false;
    const timer = setTimeout(() => killGroup(child), 2 * FRAMEWORK_MS);
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (paused || !out.includes('{"paused":true}')) return;
      paused = true;
      between().then(
        () => child.stdin.write("go\n"),
        (error: unknown) => {
          killGroup(child);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith('{"tools"'));
      if (code === 0 && line !== undefined) resolve(JSON.parse(line) as FrameworkRun);
      else reject(new Error(`${framework} ended with ${code} and no result:\n${out}`));
    });
  });
}

/** The calls every framework makes: one per pooled server, each with a checkable answer. */
export const CALLS: readonly ToolCall[] = [
  { server: "everything", tool: "echo", arguments: { message: "through the pool" } },
  { server: "memory", tool: "read_graph", arguments: {} },
  { server: "filesystem", tool: "list_allowed_directories", arguments: {} },
];

/**
 * Hook for the capability-gated tool lists the
 * same framework run against the servers direct (each spawned by the framework itself), to
 * compare with a run through the pool — `expect(pooled.tools).toEqual(direct.tools)`.
 */
export function directToolLists(
  prefix: string,
  framework: Framework,
  world: RealWorld,
): Promise<FrameworkRun> {
  return runFramework(prefix, framework, world.rows, [], world.bare);
}

/**
 * Hook for roots: a framework run whose working
 * directory is `project` — a roots-declaring client (the SDK's default roots are its cwd in
 * some frameworks) — asking server-filesystem for its allowed directories.
 */
export function allowedDirectoriesFrom(
  prefix: string,
  framework: Framework,
  entries: Record<string, Stdio>,
  world: RealWorld,
  project: string,
): Promise<FrameworkRun> {
  const call: ToolCall = { server: "filesystem", tool: "list_allowed_directories", arguments: {} };
  return runFramework(prefix, framework, entries, [call], world.bare, project);
}

/**
 * Hook for sessions that survive a daemon restart:
 * `mcpool shutdown` then `serve` again from the login shell, as a service restart does;
 * resolves with the new daemon's pid once its MCP sockets are back.
 */
export async function restartDaemon(world: RealWorld): Promise<number> {
  const { code, stdout } = await world.cli(["shutdown"]);
  if (code !== 0) throw new Error(`mcpool shutdown failed: ${stdout}`);
  await waitFor(() => world.daemons().length === 0, 20_000, "the daemon to stop");
  return world.serve();
}
