/**
 * Whether a daemon listens at a socket path, asked of the kernel by connecting. The instance
 * lock consults it before it removes a lock that looks stale: a holder it cannot see
 * (another pid namespace) may still serve, and its socket must not be renamed over. A file
 * nobody listens on, left by a daemon that died, refuses the connect at once.
 */
import { createConnection } from "node:net";

/**
 * Bound on the probe, ms. A listening socket accepts in microseconds, one nobody listens on
 * refuses at once; a connect still pending after this has a listener behind it, only a slow one.
 */
export const SOCKET_PROBE_TIMEOUT_MS = 1_000;

/**
 * False only when nothing listens at `path` (ENOENT, ECONNREFUSED); any other outcome, a
 * timeout included, counts as a live daemon, so a lock is never taken from one that might be.
 */
export function socketAnswers(path: string, timeoutMs = SOCKET_PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const settle = (live: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(live);
    };
    const timer = setTimeout(() => settle(true), timeoutMs);
    socket.once("connect", () => settle(true));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      settle(error.code !== "ENOENT" && error.code !== "ECONNREFUSED"),
    );
  });
}
