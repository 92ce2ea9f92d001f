/**
 * `mcpool serve --keeper`: what the launchd agent runs. launchd tracks the process it
 * launched, and a hand-over restart (src/daemon/handover/README.md) replaces the daemon with
 * a process launchd never launched: launchd would see its job end and lose the daemon (no
 * restart after a crash, `launchctl kill` reaching nothing). So launchd launches this keeper
 * instead. It holds no servers: it starts the daemon (`mcpool serve`), then follows whichever
 * daemon serves the socket, across hand-overs, by the socket itself, which a hand-over keeps
 * listening: a connection that the daemon closes is dialled again, and `hello` names the
 * daemon that answers. Only a dial that finds nothing listening means no daemon serves; the
 * keeper then exits with how that daemon ended: its exit code if it was the keeper's own
 * child, else 0 if it stopped as a daemon stops (its record removed) and 1 if it died.
 * SIGTERM, SIGINT and SIGHUP go on to the daemon it follows.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { FrameDecoder, PROTOCOL_VERSION } from "mcpool-protocol";
import { daemonRecordsDir } from "../../daemon/process/daemon-records.js";
import { resolvePaths } from "../../daemon/process/paths.js";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Between dials that found the socket held by a hand-over, ms: doubles up to the maximum. */
const FIRST_REDIAL_MS = 50;
const MAX_REDIAL_MS = 1_000;

export interface KeeperOptions {
  /** The daemon's argv (`node main.js serve …`). */
  command: string;
  args: string[];
  socketPath: string | undefined;
  say: (line: string) => void;
}

/** One dial of the socket: the daemon that answered (and its open connection), or why none. */
type Reached =
  { kind: "served"; pid: number; closed: Promise<void> } | { kind: "held" } | { kind: "absent" };

/** Runs the keeper until no daemon serves; resolves with the exit code. */
export async function keepDaemon(options: KeeperOptions): Promise<number> {
  const paths = resolvePaths(options.socketPath ? { socket: options.socketPath } : {});
  const daemon = spawn(options.command, options.args, { stdio: "inherit", detached: true });
  const exited = exitOf(daemon);
  let followed: number | undefined;
  const forward = (signal: NodeJS.Signals): void => {
    const pid = followed ?? daemon.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already: the next dial finds out.
    }
  };
  const signals: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const signal of signals) process.on(signal, forward);
  try {
    let pause = FIRST_REDIAL_MS;
    for (;;) {
      // Until a daemon serves, the one started here may end first (it gave way: 0).
      const reached =
        followed === undefined
          ? await Promise.race([reach(paths.socketPath), exited.then(() => undefined)])
          : await reach(paths.socketPath);
      if (reached === undefined) return await exited;
      if (reached.kind === "absent") {
        if (followed === undefined) {
          // Not listening yet: the daemon is starting.
          await sleep(pause);
          pause = Math.min(pause * 2, MAX_REDIAL_MS);
          continue;
        }
        return await ended(followed, daemon, exited, paths.dataDir);
      }
      if (reached.kind === "held") {
        // A hand-over holds the socket: the new daemon answers once it took over.
        await sleep(pause);
        pause = Math.min(pause * 2, MAX_REDIAL_MS);
        continue;
      }
      pause = FIRST_REDIAL_MS;
      if (reached.pid !== followed) options.say(`mcpool keeper: follows daemon pid ${reached.pid}`);
      followed = reached.pid;
      await reached.closed;
    }
  } finally {
    for (const signal of signals) process.off(signal, forward);
  }
}

/** How the daemon `pid` ended, once nothing listens on the socket. */
async function ended(
  pid: number,
  daemon: ChildProcess,
  exited: Promise<number>,
  dataDir: string,
): Promise<number> {
  if (pid === daemon.pid) return exited;
  // A daemon removes its record when it stops serving; one that died leaves it.
  return existsSync(join(daemonRecordsDir(dataDir), `${pid}.json`)) ? 1 : 0;
}

function exitOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("error", () => resolve(1));
    // Killed by a signal: 128 and its number, as a shell says it.
    child.once("exit", (code, signal) =>
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)),
    );
  });
}

/** Dials the socket and says `hello`: who serves it, whether it is held, or that none listens. */
function reach(socketPath: string): Promise<Reached> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const decoder = new FrameDecoder();
    let answered = false;
    let closed!: () => void;
    const gone = new Promise<void>((done) => (closed = done));
    socket.once("connect", () => {
      const hello = {
        jsonrpc: "2.0",
        id: 1,
        method: "hello",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          clientName: "mcpool-keeper",
          pid: process.pid,
        },
      };
      socket.write(`${JSON.stringify(hello)}\n`);
    });
    socket.on("data", (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        const pid = frame.ok
          ? (frame.value as { result?: { pid?: unknown } }).result?.pid
          : undefined;
        if (answered || typeof pid !== "number") continue;
        answered = true;
        resolve({ kind: "served", pid, closed: gone });
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (!answered && (error.code === "ENOENT" || error.code === "ECONNREFUSED")) {
        resolve({ kind: "absent" });
      }
    });
    socket.once("close", () => {
      closed();
      if (!answered) resolve({ kind: "held" });
    });
  });
}
