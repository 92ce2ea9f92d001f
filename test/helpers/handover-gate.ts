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
import { cliPath, startDaemon, type RunningDaemon, type TestHome } from "./daemon.js";

/** The old daemon has started the new one and stopped listening: its log says so. */
export const LET_GO = "this one no longer listens";

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
