/**
 * Reaching the daemon's socket: check that the path is a socket owned by this user before a
 * byte is sent, start the daemon when asked to, connect within a bound. Every
 * failure here is `daemon-unavailable`, with a message that names the path.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { accessSync, constants, readFileSync, rmSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnection, type Socket } from "node:net";

import { McpPoolError } from "mcpool-protocol";
import { daemonEnvironment } from "./daemon-start.js";
import { foreignSocketFolder } from "./paths.js";

function unavailable(message: string, detail: Record<string, unknown> = {}): McpPoolError {
  return new McpPoolError("daemon-unavailable", message, detail);
}

function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * `"absent"` when nothing is at `path`; throws unless it is a socket owned by this uid.
 * lstat, not stat: a symlink planted in place of the socket is refused, never followed.
 */
export async function checkSocket(path: string): Promise<"present" | "absent"> {
  let stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if (errnoCode(error) === "ENOENT" || errnoCode(error) === "ENOTDIR") return "absent";
    throw unavailable(`cannot inspect the daemon socket ${path}: ${errnoCode(error) ?? error}`);
  }
  if (!stats.isSocket()) {
    throw unavailable(`refusing ${path}: it is not a socket`, { socketPath: path });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw unavailable(
      `refusing ${path}: the socket belongs to uid ${stats.uid}, not to this user (uid ${uid})`,
      { socketPath: path, owner: stats.uid },
    );
  }
  return "present";
}

// How often an auto-started daemon is looked for: no event tells us when it binds, and a
// daemon takes ~100 ms to, so 50 ms costs little and adds little latency.
const START_POLL_MS = 50;

/** How `reachDaemon` starts a daemon that is not there. */
export interface AutoStart {
  /**
   * The daemon's argv, spawned detached with the service's environment (daemon-start.ts),
   * MCPOOL_SOCKET set to the path.
   */
  command: readonly string[];
  /** Bound on the started daemon answering a connect, ms. */
  timeoutMs: number;
  /** Called once the daemon is spawned, before the wait for it to answer. */
  spawned?: () => void;
}

/**
 * A connected socket to the daemon at `path`. With `autoStart`, a daemon is started when none
 * is there: no socket file, or one nobody listens on, left by a daemon that died.
 * Several clients may do so at once: the daemons' instance lock lets one serve, the others
 * exit 0, and every client connects to the one that serves.
 */
export async function reachDaemon(
  path: string,
  connect: OpenSocketOptions,
  autoStart?: AutoStart,
): Promise<Socket> {
  if (autoStart !== undefined) {
    return (await connectIfServed(path, connect)) ?? startDaemon(path, autoStart, connect);
  }
  if ((await checkSocket(path)) === "absent") {
    throw unavailable(`no daemon is listening at ${path}`, { socketPath: path });
  }
  return openSocket(path, connect);
}

/**
 * A connected socket, or undefined when no daemon is there: no socket file, or one nobody
 * listens on (ENOENT, ECONNREFUSED). Any other failure is thrown.
 */
async function connectIfServed(
  path: string,
  connect: OpenSocketOptions,
): Promise<Socket | undefined> {
  if ((await checkSocket(path)) === "absent") return undefined;
  try {
    return await openSocket(path, connect);
  } catch (error) {
    const errno = error instanceof McpPoolError ? error.detail.errno : undefined;
    if (errno === "ENOENT" || errno === "ECONNREFUSED") return undefined;
    throw error;
  }
}

/**
 * Starts the daemon, then connects as soon as a daemon answers at `path`, within `timeoutMs`.
 * Until then a stale socket file refuses the connect (ECONNREFUSED), or the path is empty:
 * both mean "not yet". The daemon that wins the lock renames its socket over the stale one.
 * One that gave way to a daemon still shutting down (the socket gone, the lock still held) is
 * started again once that one has had time to go.
 */
async function startDaemon(
  path: string,
  { command, timeoutMs, spawned }: AutoStart,
  connect: OpenSocketOptions,
): Promise<Socket> {
  const [file, ...args] = command;
  if (file === undefined) throw unavailable("autoStart needs a non-empty autoStartCommand");
  // Only ever this user's own daemon: a socket in another user's folder is theirs.
  const foreign = foreignSocketFolder(path);
  if (foreign !== undefined) {
    throw unavailable(
      `not starting a daemon for ${path}: ${foreign}, so it is not your socket; name one of yours with --socket PATH or MCPOOL_SOCKET, or start yours with \`mcpool serve\``,
      { socketPath: path },
    );
  }
  const deadline = Date.now() + timeoutMs;
  let launch = spawnDaemon(path, file, args);
  spawned?.();
  for (;;) {
    heardFrom(launch);
    if (launch.failure !== undefined) throw launch.failure;
    if (connect.signal?.aborted) throw connect.signal.reason;
    const socket = await connectIfServed(path, connect);
    if (socket !== undefined) return socket;
    if (Date.now() >= deadline) {
      throw unavailable(`the daemon did not answer at ${path} within ${timeoutMs} ms`, {
        socketPath: path,
        timeoutMs,
      });
    }
    if (
      launch.gaveWay &&
      Date.now() - launch.at >= RELAUNCH_MS &&
      (await checkSocket(path)) === "absent"
    ) {
      launch = spawnDaemon(path, file, args);
    }
    await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
  }
}

// Between starts of the daemon while the one that holds the lock shuts down: its drain takes
// up to seconds, and each start that finds the lock still held costs a Node process.
const RELAUNCH_MS = 500;

/** The variable naming the file a launched daemon that did not serve writes its exit code to. */
export const LAUNCH_STATUS_VARIABLE = "MCPOOL_LAUNCH_STATUS";

interface Launch {
  /** Epoch ms of the spawn. */
  readonly at: number;
  readonly file: string;
  /** Where the daemon says how it ended, if it ends without serving. */
  readonly status: string;
  /** It exited 0 without serving: another daemon held the lock. */
  gaveWay: boolean;
  failure: McpPoolError | undefined;
}

/**
 * Spawns the daemon in the service's environment, no stdio, through `/bin/sh -c '"$@" &'`,
 * which exits at once: the daemon is then nobody's child but init's (or the session's
 * subreaper's), so a host that ends its server's whole process tree — OpenCode does —
 * cannot take the user's daemon down with the entry that started it. Not being its parent,
 * we learn how a daemon that did not serve ended from the file it writes as it exits.
 */
function spawnDaemon(path: string, file: string, args: readonly string[]): Launch {
  const status = join(tmpdir(), `mcpool-launch-${process.pid}-${randomUUID()}`);
  const launch: Launch = { at: Date.now(), file, status, gaveWay: false, failure: undefined };
  if (file.includes("/")) {
    try {
      accessSync(file, constants.X_OK);
    } catch (error) {
      launch.failure = unavailable(`could not start the daemon (${file}): ${errnoCode(error)}`);
      return launch;
    }
  }
  const child = spawn("/bin/sh", ["-c", '"$@" &', "mcpool-launch", file, ...args], {
    detached: true,
    stdio: "ignore",
    // Never the agent's own variables: they would reach every server the daemon spawns.
    env: { ...daemonEnvironment(process.env, path), [LAUNCH_STATUS_VARIABLE]: status },
  });
  child.unref();
  child.once("error", (error) => {
    launch.failure = unavailable(
      `could not start the daemon (${file}): ${errnoCode(error) ?? error}`,
    );
  });
  return launch;
}

/** Takes what a launched daemon that exited without serving wrote, once it has. */
function heardFrom(launch: Launch): void {
  if (launch.gaveWay || launch.failure !== undefined) return;
  let text: string;
  try {
    text = readFileSync(launch.status, "utf8").trim();
  } catch {
    return; // Serving, starting, or gone without a word (killed): the socket or the bound tells.
  }
  // Created and not written yet (the daemon makes the file, then writes its code): read it
  // again on the next look, as a file not there yet is.
  if (text === "") return;
  rmSync(launch.status, { force: true });
  // A second daemon exits 0 when a first one holds the lock: keep waiting for that one.
  if (text === "0") launch.gaveWay = true;
  else
    launch.failure = unavailable(
      `the daemon (${launch.file}) exited with code ${text} before listening`,
    );
}

export interface OpenSocketOptions {
  /** Bound on the connect, ms. */
  timeoutMs: number;
  /** Whether the connecting socket keeps the process alive. */
  ref: boolean;
  signal?: AbortSignal;
}

/** A connected socket to `path`, or `daemon-unavailable` saying why not. */
export function openSocket(path: string, options: OpenSocketOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    if (!options.ref) socket.unref();
    const settle = (error?: unknown): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      socket.off("connect", onConnect);
      socket.off("error", onError);
      // Whoever takes the socket adds its own listener a tick later; an error emitted in
      // between must not become an uncaught exception. Its 'close' still follows.
      socket.on("error", ignore);
      if (error === undefined) return resolve(socket);
      socket.destroy();
      reject(error);
    };
    const onConnect = (): void => settle();
    const onError = (error: Error): void => settle(connectError(path, error));
    const onAbort = (): void => settle(options.signal?.reason);
    const timer = setTimeout(
      () =>
        settle(
          unavailable(`no answer from ${path} within ${options.timeoutMs} ms`, {
            socketPath: path,
            timeoutMs: options.timeoutMs,
          }),
        ),
      options.timeoutMs,
    );
    timer.unref();
    socket.once("connect", onConnect);
    socket.once("error", onError);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function ignore(): void {}

function connectError(path: string, error: Error): McpPoolError {
  const code = errnoCode(error);
  const detail = { socketPath: path, errno: code };
  switch (code) {
    case "ENOENT":
      return unavailable(`no daemon is listening at ${path}`, detail);
    case "ECONNREFUSED":
      return unavailable(`nothing listens on ${path} (a daemon that died?)`, detail);
    case "EACCES":
      return unavailable(`not allowed to connect to ${path}`, detail);
    default:
      return unavailable(`cannot connect to ${path}: ${code ?? error.message}`, detail);
  }
}
