/**
 * Agent processes for the sharing figures: each is a Node process in its own process
 * group that says "ready …" on stdout once set up and ends when its stdin closes.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath, URL } from "node:url";
import { onCleanup } from "./cleanup.mjs";
import { alive, descendants, kill, until } from "./procs.mjs";

export const agentScript = (name) =>
  fileURLToPath(new URL(`../agents/${name}.mjs`, import.meta.url));

/**
 * Starts `node <agents/name.mjs> ...args` and resolves once it printed "ready"; `ready` is
 * the rest of that line. stop() closes its stdin and waits, then kills its group.
 */
export async function startAgent(name, args, { env = process.env, timeoutMs = 60_000 } = {}) {
  const child = spawn(process.execPath, [agentScript(name), ...args], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      const family = [child.pid, ...descendants(child.pid)];
      child.stdin.end();
      const timer = new Promise((resolve) => setTimeout(resolve, 10_000, "timeout"));
      if ((await Promise.race([exited, timer])) === "timeout") kill(-child.pid);
      if (!(await until(() => family.every((p) => !alive(p)), 5_000))) {
        for (const p of family) kill(p);
      }
    })();
    return stopping;
  };
  onCleanup(stop);
  const ok = await until(() => stdout.includes("\n") || child.exitCode !== null, timeoutMs);
  if (!ok || !stdout.startsWith("ready")) {
    await stop();
    throw new Error(`agent ${name} did not get ready (exit ${child.exitCode}): ${stderr}`);
  }
  return { pid: child.pid, ready: stdout.split("\n")[0].slice("ready".length).trim(), stop };
}

/** Runs `start` for each of `items`, at most `limit` at once; results in order. */
export async function limited(items, limit, start) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      out[at] = await start(items[at], at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
