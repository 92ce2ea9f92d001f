/**
 * Telling a service manager that the daemon's main process is now another one. systemd
 * tracks the pid it started; `systemd-notify --pid=<pid>` sends it `MAINPID=<pid>` (the unit
 * says `NotifyAccess=all`, since the message does not come from the main process itself).
 * Node has no AF_UNIX datagram socket to send it with, and no native module is wanted: the
 * tool systemd ships does it. launchd has nothing of the kind (README.md).
 */
import { spawnSync } from "node:child_process";

/** Said within this bound, or not at all. */
const NOTIFY_MS = 5_000;

/** Undefined when told, or when no service manager listens; else why it could not be. */
export function tellMainPid(pid: number, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!env.NOTIFY_SOCKET) return undefined;
  const run = spawnSync("systemd-notify", [`--pid=${pid}`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: NOTIFY_MS,
  });
  if (run.error) return `systemd-notify could not run: ${run.error.message}`;
  if (run.status !== 0) {
    return `systemd-notify --pid=${pid} failed (${run.status ?? run.signal}): ${String(run.stderr).trim()}`;
  }
  return undefined;
}
