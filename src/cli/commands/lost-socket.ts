/**
 * A daemon the socket does not lead to. The data folder's daemon records
 * (daemon-records.ts) name every live daemon of this user with the socket it serves, so when
 * a socket does not answer `status` and `shutdown` can still name the daemon that owns it,
 * with the fix, and `serve` can tell it to re-create its socket (SIGUSR1) rather than give
 * way in silence; `status` also lists the daemons serving other sockets (strays). A daemon is
 * signalled only by its record: ours (our data folder), live, with its own start time.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { McpPoolError } from "mcpool-protocol";
import {
  daemonServing,
  liveDaemons,
  type DaemonRecord,
} from "../../daemon/process/daemon-records.js";
import { processIsLive } from "../../daemon/process/instance-lock.js";
import { resolvePaths } from "../../daemon/process/paths.js";
import { socketAnswers } from "../../daemon/socket/probe.js";
import { EXIT } from "../output/exit-codes.js";
import { duration } from "../output/format.js";

/** Bound on a daemon re-creating its socket after SIGUSR1, ms: it takes milliseconds. */
export const RENEW_WAIT_MS = 5_000;
/** Bound on a daemon stopping after SIGTERM, ms: the service units' TimeoutStopSec (15 s). */
export const STOP_WAIT_MS = 15_000;
/** Between looks while waiting on a signalled daemon: prompt, not a spin. */
const POLL_MS = 50;

function dataDir(): string {
  return resolvePaths({}).dataDir;
}

/** The live daemons serving a socket other than `socketPath` (and not `exceptPid`). */
export function strays(socketPath: string, exceptPid?: number): DaemonRecord[] {
  const path = resolve(socketPath);
  return liveDaemons(dataDir()).filter((d) => d.socket !== path && d.pid !== exceptPid);
}

/** One line per stray for `status`, with how to stop it. */
export function strayLines(found: readonly DaemonRecord[], now = Date.now()): string[] {
  return found.map(
    (d) =>
      `stray   daemon pid ${d.pid} serves ${d.socket} (version ${d.version}, up ${duration(now - d.startedAt)}): \`mcpool shutdown --socket ${d.socket}\` stops it`,
  );
}

/**
 * The live daemon recorded for `socketPath` when `error` says its socket did not answer;
 * undefined for any other error, or when no daemon of ours serves that path.
 */
export function socketlessDaemon(error: unknown, socketPath: string): DaemonRecord | undefined {
  if (!(error instanceof McpPoolError) || error.code !== "daemon-unavailable") return undefined;
  // A socket that is there but did not answer in time is not gone: its own error says why.
  if (existsSync(socketPath)) return undefined;
  return daemonServing(dataDir(), resolve(socketPath));
}

/** What is wrong and the fix, in one line. */
export function socketGoneText(d: DaemonRecord): string {
  const gone = `daemon pid ${d.pid} is running but its socket ${d.socket} is gone`;
  return d.handlesSignals
    ? `${gone}: \`kill -USR1 ${d.pid}\` re-creates it (\`mcpool serve\` does that too), \`mcpool shutdown\` stops it`
    : `${gone}, and it does not take signals from mcpool (it runs inside another program): stop it with \`kill ${d.pid}\``;
}

/** `mcpool status` when the socket did not answer but its daemon lives: exit 1. */
export function statusWithoutSocket(
  d: DaemonRecord,
  print: (value: unknown, text: () => string) => void,
  err: (line: string) => void,
): number {
  const others = strays(d.socket, d.pid);
  err(`mcpool: ${socketGoneText(d)}`);
  print({ socketPath: d.socket, reachable: false, daemon: d, strays: others }, () =>
    strayLines(others).join("\n"),
  );
  return EXIT.failed;
}

/**
 * `mcpool shutdown` when the socket did not answer but its daemon lives: SIGTERM, which
 * stops it as `shutdown` would (calls answered first), and a bounded wait for it to go.
 */
export async function shutdownWithoutSocket(
  d: DaemonRecord,
  print: (value: unknown, text: () => string) => void,
  err: (line: string) => void,
): Promise<number> {
  if (!d.handlesSignals) {
    err(`mcpool: ${socketGoneText(d)}`);
    return EXIT.failed;
  }
  err(`mcpool: daemon pid ${d.pid} has no socket at ${d.socket}: sent it SIGTERM`);
  process.kill(d.pid, "SIGTERM");
  if (!(await until(() => !processIsLive(d.pid, d.startTime), STOP_WAIT_MS))) {
    err(
      `mcpool: daemon pid ${d.pid} did not stop within ${STOP_WAIT_MS / 1000} s; \`kill -9 ${d.pid}\` ends it`,
    );
    return EXIT.failed;
  }
  print({ ok: true, pid: d.pid }, () => `the daemon (pid ${d.pid}) has stopped`);
  return EXIT.ok;
}

/**
 * `serve` found the lock held. A daemon that answers on the socket, or one starting or
 * stopping (no record yet, or no more): exit 0, saying so. A recorded daemon whose socket is
 * gone: told to re-create it (SIGUSR1), and waited for; exit 1 if it does not come back.
 */
export async function serveGaveWay(
  socketPath: string,
  holderPid: number | undefined,
  err: (line: string) => void,
): Promise<number> {
  const running = `mcpool: a daemon is already running for ${socketPath}`;
  if (await socketAnswers(socketPath)) {
    err(`${running}${holderPid ? ` (pid ${holderPid})` : ""}`);
    return EXIT.ok;
  }
  const d = daemonServing(dataDir(), socketPath);
  if (d === undefined) {
    err(
      `${running}${holderPid ? ` (pid ${holderPid})` : ""}; it does not answer yet: it is starting or stopping`,
    );
    return EXIT.ok;
  }
  if (!d.handlesSignals) {
    err(`mcpool: ${socketGoneText(d)}`);
    return EXIT.failed;
  }
  err(
    `mcpool: daemon pid ${d.pid} is running but its socket ${socketPath} is gone: sent it SIGUSR1 to re-create it`,
  );
  process.kill(d.pid, "SIGUSR1");
  if (await until(() => socketAnswers(socketPath), RENEW_WAIT_MS)) {
    err(`${running} (pid ${d.pid}): it serves its socket again`);
    return EXIT.ok;
  }
  err(
    `mcpool: daemon pid ${d.pid} did not re-create ${socketPath} within ${RENEW_WAIT_MS / 1000} s; \`mcpool logs\` says why, \`kill ${d.pid}\` stops it`,
  );
  return EXIT.failed;
}

async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
