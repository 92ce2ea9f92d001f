/**
 * The old daemon's side of a hand-over: the new daemon started from the installed code with
 * the descriptors in its stdio (fd 3 the control channel, fd 4 the listening socket, then
 * three per child, then one per MCP socket) through a launcher (LAUNCHER, below), the snapshot
 * written down the channel, and its answer awaited within a bound. The old daemon then tells
 * it to go on, or to let go of everything it was handed.
 */
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { LineSplitter } from "mcpool-protocol";
import type { Answer, HandedFront, HandedServer, Snapshot } from "./snapshot.js";

/** A snapshot line, or an answer, larger than this is not one. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface SuccessorOptions {
  /** The node to run and its arguments: the installed `dist/cli/main.js serve --handover N`. */
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  listenFd: number;
  /** The children, with this process's fds. */
  servers: readonly HandedServer[];
  /** The MCP sockets' listening sockets, with this process's fds. */
  fronts: readonly HandedFront[];
  /** The snapshot, its fds already the new process's. */
  snapshot: Snapshot;
  /** Bound on the new daemon's answer, ms. */
  answerMs: number;
}

export interface Successor {
  /** Whether a process was started at all; when not, the answer says why. */
  readonly started: boolean;
  /** The new daemon's pid, as its launcher said it; undefined when it could not be started. */
  readonly pid: Promise<number | undefined>;
  /** Its answer: ready with what it adopted, or why not (it failed, exited or said nothing). */
  readonly answer: Promise<Answer>;
  /**
   * Lets the launcher go, leaving the new daemon running; resolves once the launcher has
   * exited: the new daemon is then no child of this process, but of the nearest subreaper.
   */
  detach(): Promise<void>;
  /**
   * Tells it to serve on (true), or to let go of what it was handed and exit (false, with
   * why): heard at once, also before it answered.
   */
  go(serve: boolean, why?: string): void;
  /** Resolves once it has exited (at once if it never started); only until detach(). */
  readonly exited: Promise<void>;
}

/**
 * The launcher, run by this Node with `-e`. It starts the new daemon in a session of its own
 * with the descriptors it was given (fd 3 on), closes its own copies of them but the control
 * channel, says `{"pid":N}` down the channel (fd 3), and stays until the new daemon exits
 * (said as `{"exited":…}`, then it exits) or the old daemon ends its stdin (it exits, the new
 * daemon running on). So the new daemon is never the old daemon's child: once the launcher
 * is gone it is the child of the nearest subreaper, a service manager such as systemd's, as the
 * old daemon names it the main process. systemd does not wait at a stop for a main process
 * that is not its own child: it goes straight on to SIGKILL.
 */
const LAUNCHER = `const { spawn } = require("node:child_process");
const { closeSync, writeSync } = require("node:fs");
const [count, command, ...args] = process.argv.slice(1);
const fds = Array.from({ length: Number(count) }, (_, i) => 3 + i);
const say = (line) => writeSync(3, JSON.stringify(line) + "\\n");
const daemon = spawn(command, args, { stdio: ["ignore", "inherit", "inherit", ...fds], detached: true });
daemon.on("error", (error) => { say({ launchFailed: error.message }); process.exit(1); });
daemon.on("spawn", () => {
  for (const fd of fds.slice(1)) closeSync(fd);
  say({ pid: daemon.pid });
  daemon.unref();
  daemon.on("exit", (code, signal) => { say({ exited: signal ?? \`code \${code}\` }); process.exit(0); });
  process.stdin.on("end", () => process.exit(0)).resume();
});`;

/** What the launcher says on the channel, beside the new daemon's own answer. */
interface LauncherLine {
  pid?: number;
  launchFailed?: string;
  exited?: string;
}

function launcherLine(value: unknown): LauncherLine | undefined {
  if (typeof value !== "object" || value === null || "ready" in value) return undefined;
  const line = value as LauncherLine;
  const known =
    typeof line.pid === "number" ||
    typeof line.launchFailed === "string" ||
    typeof line.exited === "string";
  return known ? line : undefined;
}

export function startSuccessor(options: SuccessorOptions): Successor {
  const fds = [
    ...options.servers.flatMap((server) => server.child.fds),
    ...options.fronts.map((front) => front.fd),
  ];
  let launcher: ReturnType<typeof spawn>;
  try {
    launcher = spawn(
      process.execPath,
      ["-e", LAUNCHER, "--", String(2 + fds.length), options.command, ...options.args],
      {
        env: options.env,
        stdio: ["pipe", "inherit", "inherit", "pipe", options.listenFd, ...fds],
        // Its own group and session, and the new daemon's own again: a service manager that
        // kills the old daemon's group (launchd without AbandonProcessGroup) must not take the
        // new one with it.
        detached: true,
      },
    );
  } catch (error) {
    // Refused at once (a descriptor it could not pass, EBADF): the old daemon serves on.
    const why = `the new daemon could not start: ${(error as Error).message}`;
    const answer = Promise.resolve<Answer>({ ready: false, pid: 0, why });
    return {
      started: false,
      pid: Promise.resolve(undefined),
      answer,
      detach: () => Promise.resolve(),
      go: () => {},
      exited: Promise.resolve(),
    };
  }
  launcher.unref();
  launcher.stdin?.on("error", () => undefined);
  const channel = launcher.stdio[3] as Socket;
  channel.on("error", () => undefined);
  let said!: (pid: number | undefined) => void;
  const pid = new Promise<number | undefined>((resolve) => (said = resolve));
  let launchFailed: string | undefined;
  let exitedAs: string | undefined;
  const launcherExited = new Promise<void>((resolve) => {
    launcher.once("exit", () => resolve());
    // Never spawned (ENOENT and the like): no exit follows.
    launcher.once("error", (error) => {
      launchFailed ??= error.message;
      resolve();
    });
  });
  // The launcher gone: nothing more will say a pid.
  void launcherExited.then(() => said(undefined));
  let detached = false;
  const answer = new Promise<Answer>((resolve) => {
    const failed = (why: string): void => resolve({ ready: false, pid: 0, why });
    const timer = setTimeout(
      () => failed(`the new daemon did not answer within ${options.answerMs} ms`),
      options.answerMs,
    );
    const lines = new LineSplitter(MAX_LINE_BYTES);
    channel.on("data", (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        if (!(line instanceof Uint8Array)) return failed("the new daemon's answer is too long");
        let value: unknown;
        try {
          value = JSON.parse(Buffer.from(line).toString("utf8"));
        } catch {
          clearTimeout(timer);
          return failed("the new daemon's answer is not JSON");
        }
        const launcherSaid = launcherLine(value);
        if (launcherSaid === undefined) {
          clearTimeout(timer);
          return resolve(value as Answer);
        }
        launchFailed ??= launcherSaid.launchFailed;
        exitedAs ??= launcherSaid.exited;
        if (launcherSaid.pid !== undefined) said(launcherSaid.pid);
      }
    });
    void launcherExited.then(() => {
      if (detached) return;
      clearTimeout(timer);
      if (exitedAs === undefined) {
        failed(`the new daemon could not start: ${launchFailed ?? "its launcher exited first"}`);
      } else {
        failed(`the new daemon exited (${exitedAs}) before it was ready; its log says why`);
      }
    });
  });
  channel.write(`${JSON.stringify(options.snapshot)}\n`);
  return {
    started: true,
    pid,
    answer,
    exited: launcherExited,
    detach() {
      detached = true;
      launcher.stdin?.end();
      return launcherExited;
    },
    go(serve, why) {
      channel.end(`${JSON.stringify({ go: serve, ...(why !== undefined ? { why } : {}) })}\n`);
      (channel as Socket & { unref?: () => void }).unref?.();
    },
  };
}
