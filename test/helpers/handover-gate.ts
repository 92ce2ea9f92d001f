/**
 * A hand-over held open by the test: the daemon runs from "installed" code whose new daemon,
 * started by `mcpool restart`, waits for the test's word before it loads the daemon, so the
 * test can act while the old daemon has handed everything and waits for the new one.
 */
import { execFile } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import type { TestContext } from "vitest";
import { cliPath, startDaemon, type RunningDaemon, type TestHome } from "./daemon.js";
import { waitFor } from "./processes.js";

/** The old daemon has started the new one and stopped listening: its log says so. */
export const LET_GO = "this one no longer listens";

/**
 * A test's list of what closes its gate and sockets, run when the test ends: called after
 * testFleet, so before the fleet is taken down (finish hooks run last-first).
 */
export function cleanupsAtEnd({
  onTestFinished,
}: Pick<TestContext, "onTestFinished">): (() => void)[] {
  const cleanups: (() => void)[] = [];
  onTestFinished(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  return cleanups;
}

/**
 * A daemon started from "installed" code that, as the new daemon of a hand-over, waits for
 * the test's word on the gate socket before it loads the daemon: `started` resolves with the
 * gate once it waits; `go` on it lets it on, `fail` makes it exit instead (an upgrade that
 * cannot start). `cleanups` gets what closes the gate.
 */
export async function gatedDaemon(
  h: TestHome,
  cleanups: (() => void)[],
): Promise<{ old: RunningDaemon; started: Promise<Socket> }> {
  const gatePath = join(h.dir, "gate.sock");
  let waiting: (socket: Socket) => void = () => undefined;
  const started = new Promise<Socket>((resolve) => (waiting = resolve));
  const gate: Server = createServer((socket) => waiting(socket));
  await new Promise<void>((resolve) => gate.listen(gatePath, resolve));
  cleanups.push(() => gate.close());
  const installed = join(h.dir, "installed-main.mjs");
  writeFileSync(
    installed,
    `#!/usr/bin/env node
import { createConnection } from "node:net";
if (process.argv.includes("--handover")) {
  const word = await new Promise((resolve) => {
    const gate = createConnection(${JSON.stringify(gatePath)});
    gate.setEncoding("utf8");
    gate.on("data", (text) => { gate.destroy(); resolve(text); });
    gate.on("error", () => resolve("fail"));
  });
  if (word.startsWith("fail")) process.exit(7);
}
await import(${JSON.stringify(cliPath)});
`,
  );
  chmodSync(installed, 0o755);
  const old = await startDaemon(h, [], { bin: installed });
  return { old, started };
}

/**
 * `mcpool restart` of `old` (a gatedDaemon()), up to the window the gate holds open: the new
 * daemon started and waiting at the gate, the old one no longer listening (its log says so).
 */
export async function heldRestart(
  h: TestHome,
  old: RunningDaemon,
  started: Promise<Socket>,
): Promise<{ restarting: ReturnType<typeof restart>; gate: Socket }> {
  const restarting = restart(h);
  const gate = await started;
  await waitFor(() => old.stderr().includes(LET_GO), 20_000, "the old daemon to let go");
  return { restarting, gate };
}

/** `mcpool restart --json` beside the test (the test process holds the gate it waits on). */
export function restart(h: TestHome): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [cliPath, "restart", "--json"], {
    env: h.env,
    encoding: "utf8",
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

/**
 * A daemon started from "installed" code whose new daemon, started by `mcpool restart`, hears
 * the old daemon's word only once the test opens `wordGate`: the installed code runs the new
 * daemon as its own child, passing it the handed descriptors, and relays the control channel
 * — the snapshot at once, what follows it (the old daemon's word) once the gate file exists.
 * So the test decides when, in the new daemon's adoption, the word arrives. The new daemon's
 * exit is the installed code's.
 */
export async function wordGatedDaemon(
  h: TestHome,
  env: NodeJS.ProcessEnv = {},
): Promise<{ old: RunningDaemon; wordGate: string }> {
  const wordGate = join(h.dir, "word-gate");
  const installed = join(h.dir, "installed-main.mjs");
  writeFileSync(
    installed,
    `#!/usr/bin/env node
import { spawn } from "node:child_process";
import { closeSync, existsSync, watch } from "node:fs";
import { Socket } from "node:net";
const cli = ${JSON.stringify(cliPath)};
const gate = ${JSON.stringify(wordGate)};
const argv = process.argv.slice(2);
const at = argv.indexOf("--handover");
if (at < 0) {
  await import(cli);
} else {
  const passed = Array.from({ length: Number(argv[at + 1]) }, (_, i) => 4 + i);
  const child = spawn(process.execPath, [cli, ...argv], {
    stdio: ["ignore", "inherit", "inherit", "pipe", ...passed],
  });
  for (const fd of passed) closeSync(fd);
  child.once("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  const inner = child.stdio[3];
  const outer = new Socket({ fd: 3, readable: true, writable: true });
  for (const end of [inner, outer]) end.on("error", () => undefined);
  inner.pipe(outer);
  let text = "";
  let open = false;
  let ended = false;
  const flush = () => {
    if (text.length > 0 && !inner.destroyed) inner.write(text);
    text = "";
    if (ended) inner.end();
  };
  let first = true;
  outer.setEncoding("utf8");
  outer.on("data", (chunk) => {
    text += chunk;
    // The snapshot passes at once; the rest waits for the gate.
    if (first && text.includes("\\n")) {
      first = false;
      const cut = text.indexOf("\\n") + 1;
      inner.write(text.slice(0, cut));
      text = text.slice(cut);
    }
    if (open) flush();
  });
  outer.on("end", () => {
    ended = true;
    if (open) flush();
  });
  const watcher = watch(${JSON.stringify(h.dir)}, () => check());
  const check = () => {
    if (open || !existsSync(gate)) return;
    open = true;
    watcher.close();
    flush();
  };
  check();
}
`,
  );
  chmodSync(installed, 0o755);
  Object.assign(h.env, env);
  const old = await startDaemon(h, [], { bin: installed });
  return { old, wordGate };
}
