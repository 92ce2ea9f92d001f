/**
 * A real daemon for a bench: `mcpool serve` from the built CLI in a temp home whose XDG
 * directories hold its socket, config, data and logs (as test/helpers/daemon.ts does), and
 * the servers the figures use: the echo fixture and the pinned reference servers, each
 * spawned with `node <bin>`, never npx.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";
import { connect } from "mcpool-client";
import { onCleanup } from "./cleanup.mjs";
import { alive, descendants, kill, until } from "./procs.mjs";

const require = createRequire(import.meta.url);
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/**
 * The daemon's CLI. MCPOOL_BENCH_CLI points the daemon arms at another build (a branch's,
 * a patched copy's) to compare it with this one; the client side stays this checkout's.
 */
export const cliPath = process.env.MCPOOL_BENCH_CLI ?? join(repoRoot, "dist/cli/main.js");
/** The echo server every arm calls: echo.mjs's tools on the SDK's own server (agents/sdk-echo.mjs). */
export const echoFixture = join(repoRoot, "bench/agents/sdk-echo.mjs");

if (!existsSync(cliPath) || !existsSync(join(repoRoot, "client/dist/index.js"))) {
  throw new Error("bench needs the built daemon and client: run `npm run build` first");
}

function binOf(name) {
  return join(dirname(require.resolve(`${name}/package.json`)), "dist/index.js");
}

export const reference = {
  everything: binOf("@modelcontextprotocol/server-everything"),
  memory: binOf("@modelcontextprotocol/server-memory"),
  filesystem: binOf("@modelcontextprotocol/server-filesystem"),
};

/** A temp home: XDG dirs, socket, config. Removed at cleanup. */
export function benchHome(prefix = "mcpool-bench-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const socketPath = join(dir, "run", "mcpool.sock");
  const configPath = join(dir, "config", "mcp.json");
  const env = {
    ...process.env,
    HOME: dir,
    XDG_RUNTIME_DIR: join(dir, "run-xdg"),
    XDG_CONFIG_HOME: join(dir, "config-xdg"),
    XDG_DATA_HOME: join(dir, "data"),
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    MCPOOL_SOCKET: socketPath,
    MCPOOL_CONFIG: configPath,
  };
  const home = {
    dir,
    socketPath,
    configPath,
    env,
    /** Saved the way editors do: a new file renamed over the old one. */
    writeConfig(servers, extra = {}) {
      const temp = `${configPath}.tmp`;
      mkdirSync(dirname(configPath), { recursive: true });
      writeFileSync(temp, JSON.stringify({ mcpServers: servers, ...extra }, null, 2));
      renameSync(temp, configPath);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  onCleanup(() => home.remove());
  return home;
}

/** Rows in mcp.json's shape for the servers the figures use. */
export const rows = {
  echo: (env = {}) => ({ command: process.execPath, args: [echoFixture], env }),
  everything: () => ({ command: process.execPath, args: [reference.everything] }),
  memory: (memoryFile) => ({
    command: process.execPath,
    args: [reference.memory],
    env: { MEMORY_FILE_PATH: memoryFile },
  }),
  filesystem: (root) => ({ command: process.execPath, args: [reference.filesystem, root] }),
};

/** The three reference servers' rows in `home`: the memory file and the filesystem root in it. */
export function referenceRows(home) {
  const root = join(home.dir, "files");
  mkdirSync(root, { recursive: true });
  return {
    everything: rows.everything(),
    memory: rows.memory(join(home.dir, "memory.jsonl")),
    filesystem: rows.filesystem(root),
  };
}

/**
 * Starts `mcpool serve` in `home` (its own process group) and waits for "serving".
 * `nodeArgs` go before the script (e.g. --cpu-prof); `cli` is another build's CLI. stop() is SIGTERM and a bounded wait,
 * then SIGKILL to the daemon and whatever it left; it runs at cleanup if not called.
 */
export async function startDaemon(home, { nodeArgs = [], args = [], cli = cliPath } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, cli, "serve", ...args], {
    env: home.env,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk.toString();
    if (stderr.length > 64 * 1024) stderr = stderr.slice(-32 * 1024);
  });
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  const pid = child.pid;
  let stopping;
  const stop = (graceMs = 15_000) => {
    stopping ??= (async () => {
      const family = descendants(pid);
      if (child.exitCode === null && child.signalCode === null) {
        kill(pid, "SIGTERM");
        const timer = new Promise((resolve) => setTimeout(resolve, graceMs, "timeout"));
        if ((await Promise.race([exited, timer])) === "timeout") kill(pid, "SIGKILL");
      }
      await exited;
      // Children stop on the daemon's way out; anything it could not stop goes now.
      if (!(await until(() => family.every((p) => !alive(p)), 5_000))) {
        for (const p of family) kill(p);
      }
    })();
    return stopping;
  };
  onCleanup(() => stop(5_000));
  const ready = await until(
    () => stderr.includes("serving ") || child.exitCode !== null,
    20_000,
    10,
  );
  if (!ready || child.exitCode !== null) {
    await stop(1_000);
    throw new Error(`the daemon did not start (exit ${child.exitCode}): ${stderr}`);
  }
  return { pid, stop, stderr: () => stderr, process: child };
}

/** A PoolClient on `home`'s socket, closed at cleanup. */
export async function client(home, clientName = "bench") {
  const pool = await connect({ socketPath: home.socketPath, clientName });
  onCleanup(() => pool.close());
  return pool;
}

/** Waits until every configured server is ready (state), within `timeoutMs`. */
export async function waitReady(pool, count, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await pool.state();
    if (state.length >= count && state.every((s) => s.status === "ready")) return state;
    if (Date.now() > deadline) {
      const summary = state.map((s) => `${s.id}:${s.status}${s.error ? ` ${s.error}` : ""}`);
      throw new Error(`servers not ready within ${timeoutMs} ms: ${summary.join(", ")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
