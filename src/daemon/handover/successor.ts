/**
 * The old daemon's side of a hand-over: the new daemon started from the installed code with
 * the descriptors in its stdio (fd 3 the control channel, fd 4 the listening socket, then
 * three per child, then one per MCP socket), the snapshot written down the channel, and its answer
 * awaited within a bound. The old daemon then tells it to go on, or to let go of everything it was
 * handed.
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
  readonly pid: number | undefined;
  /** Its answer: ready with what it adopted, or why not (it failed, exited or said nothing). */
  readonly answer: Promise<Answer>;
  /**
   * Tells it to serve on (true), or to let go of what it was handed and exit (false, with
   * why): heard at once, also before it answered.
   */
  go(serve: boolean, why?: string): void;
  /** Resolves once it has exited (at once if it never started). */
  readonly exited: Promise<void>;
}

export function startSuccessor(options: SuccessorOptions): Successor {
  const fds = [
    ...options.servers.flatMap((server) => server.child.fds),
    ...options.fronts.map((front) => front.fd),
  ];
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(options.command, [...options.args], {
      env: options.env,
      stdio: ["ignore", "inherit", "inherit", "pipe", options.listenFd, ...fds],
      // Its own group and session: a service manager that kills the old daemon's group
      // (launchd without AbandonProcessGroup) must not take the new one with it.
      detached: true,
    });
  } catch (error) {
    // Refused at once (a descriptor it could not pass, EBADF): the old daemon serves on.
    const why = `the new daemon could not start: ${(error as Error).message}`;
    const answer = Promise.resolve<Answer>({ ready: false, pid: 0, why });
    return { pid: undefined, answer, go: () => {}, exited: Promise.resolve() };
  }
  child.unref();
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    // Never spawned (ENOENT and the like): no exit follows.
    child.once("error", () => child.pid === undefined && resolve());
  });
  const channel = child.stdio[3] as Socket;
  channel.on("error", () => undefined);
  const answer = new Promise<Answer>((resolve) => {
    const failed = (why: string): void => resolve({ ready: false, pid: child.pid ?? 0, why });
    const timer = setTimeout(
      () => failed(`the new daemon did not answer within ${options.answerMs} ms`),
      options.answerMs,
    );
    const lines = new LineSplitter(MAX_LINE_BYTES);
    channel.on("data", (chunk: Buffer) => {
      for (const line of lines.push(chunk)) {
        if (!(line instanceof Uint8Array)) return failed("the new daemon's answer is too long");
        clearTimeout(timer);
        try {
          resolve(JSON.parse(Buffer.from(line).toString("utf8")) as Answer);
        } catch {
          failed("the new daemon's answer is not JSON");
        }
      }
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      failed(`the new daemon could not start: ${error.message}`);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      failed(
        `the new daemon exited (${signal ?? `code ${code}`}) before it was ready; its log says why`,
      );
    });
  });
  channel.write(`${JSON.stringify(options.snapshot)}\n`);
  return {
    pid: child.pid,
    answer,
    exited,
    go(serve, why) {
      channel.end(`${JSON.stringify({ go: serve, ...(why !== undefined ? { why } : {}) })}\n`);
      (channel as Socket & { unref?: () => void }).unref?.();
    },
  };
}
