/**
 * A stdio MCP transport whose child lives in its own process group.
 *
 * The SDK's StdioClientTransport signals only the child it spawned, so a server started via a
 * wrapper (`sh -c`, `npx`, `uvx`) leaves its real process behind. This one owns the process:
 * - the child is a process-group leader (`detached`), so a stop reaches every descendant;
 * - close() escalates stdin EOF → SIGTERM to the group → SIGKILL to the group;
 * - stdout lines that are not JSON-RPC are skipped and reported, never fatal;
 * - stderr is kept as a bounded tail for error messages.
 * A child handed over by a previous daemon (handed.ts) is spoken to over the fds it came
 * with: its exit is its stdout closing and its pid leaving, since only its parent can wait
 * for it. Either kind can be handed on again (handOff()).
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import {
  fdOf,
  groupAlive,
  pidGone,
  pipeFrom,
  resumeReading,
  signalGroup,
  stopReading,
} from "../core/pipes.js";
import type { HandedChild, HandedSession } from "./transport.js";
import {
  afterDroppedLine,
  LineReader,
  LineTail,
  MAX_MESSAGE_BYTES,
  opensObject,
  oversizeKind,
  parseJsonRpcLine,
  tooLargeAnswer,
  tooLargeRequest,
  type MeasuredLine,
} from "./line-reader.js";
import type { Collector } from "../core/collect.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { StderrTail } from "./stderr-tail.js";
import { SENT } from "./sent.js";

/**
 * While an oversize line is dropped, the young generation is collected (by the `collector`
 * option, the daemon's) after each this many of its bytes: its 64 KB chunks are freed as they
 * go, so the allocator reuses a few instead of keeping tens of MB (bench/memory-return.mjs).
 */
const COLLECT_EVERY_BYTES = 1024 * 1024;
/** How long a child gets after stdin EOF, and again after SIGTERM, before the next step. */
export const DEFAULT_STOP_GRACE_MS = 2000;

/** A stdout line larger than the frame cap is counted and dropped as it arrives, never held. */
export const DEFAULT_MAX_LINE_BYTES = MAX_MESSAGE_BYTES;

export interface ChildProcessTransportOptions {
  command: string;
  args?: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  /** ms between the steps of the stop ladder. Default {@link DEFAULT_STOP_GRACE_MS}. */
  stopGraceMs?: number;
  maxLineBytes?: number;
  /** Called with each stdout line that is not a JSON-RPC message, whole: cutting it is the caller's. */
  onJunk?: (line: string) => void;
  /** Called with every stderr chunk (already kept in the tail). */
  onStderr?: (chunk: Buffer) => void;
  /** Called once the child has started, with its pid (also its group id); again by resume(). */
  onSpawn?: (pid: number) => void;
  /** Called once the child and every process of its group are gone. */
  onGone?: (pid: number) => void;
  /** A child a previous daemon started: start() takes it over instead of spawning one. */
  handed?: HandedChild;
  collector?: Collector;
}

/** The child's pipes, spawned or handed. */
interface ChildIo {
  pid: number;
  stdin: Writable;
  stdout: NodeJS.ReadableStream & { destroy(): void };
  stderr: NodeJS.ReadableStream & { destroy(): void };
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly stderr = new StderrTail();
  /** Told of each stderr chunk while they are in the set (a server's sign of life). */
  readonly stderrWatchers = new Set<(chunk: Buffer) => void>();
  #child?: ChildProcess;
  #io?: ChildIo;
  /** stdout since its last newline: what a successor must read first (handOff()). */
  readonly #tail: LineTail;
  /** Bytes of the oversize line being dropped when the young generation was last collected. */
  #collectedAt = 0;
  /** An oversize line ended the connection: said once. */
  #gaveUp = false;
  /** Handed on to another process: this one signals and reads nothing more. */
  #released = false;
  /** A handed child before the hand-over settled: not yet this process's to stop (handed.ts). */
  #owned: boolean | undefined = true;
  /** Between handOff() and release() or resume(): a close waits to know whose the child is. */
  #handing: { done: Promise<void>; settle: () => void } | undefined;
  #exit?: ChildExit;
  #exited?: Promise<ChildExit>;
  /** Resolves on the child's `close`: it exited and its stdout and stderr are read to their end. */
  #ended?: Promise<void>;
  #closing?: Promise<void>;
  readonly #options: ChildProcessTransportOptions;
  readonly #buffer: LineReader;

  constructor(options: ChildProcessTransportOptions) {
    this.#options = options;
    this.#buffer = new LineReader(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
    this.#tail = new LineTail(this.#buffer.maxLineBytes);
  }

  get pid(): number | undefined {
    return this.#io?.pid ?? this.#child?.pid;
  }

  /** A handed child that never became ours (the old daemon serves on): let go of, no crash. */
  get disowned(): boolean {
    return this.#owned === false;
  }

  /** The session a handed child's previous daemon had opened, for the client to go on with. */
  get handedSession(): HandedSession | undefined {
    return this.#options.handed?.session;
  }

  /** How the child ended, once it has. */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  start(): Promise<void> {
    if (this.#child || this.#io) throw new Error("ChildProcessTransport already started");
    if (this.#options.handed) return this.#adopt(this.#options.handed);
    const { command, args = [], env, cwd } = this.#options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        env,
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        detached: true,
        windowsHide: true,
      });
      this.#child = child;
      this.#exited = new Promise((done) => {
        child.once("exit", (code, signal) => {
          this.#exit = { code, signal };
          done(this.#exit);
        });
      });
      child.once("error", (error) => {
        // ENOENT and EACCES arrive here instead of "spawn"; the child never existed.
        this.#exit ??= { code: null, signal: null };
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        if (child.pid !== undefined) this.#options.onSpawn?.(child.pid);
        if (child.pid !== undefined && child.stdin && child.stdout && child.stderr) {
          this.#io = {
            pid: child.pid,
            stdin: child.stdin,
            stdout: child.stdout,
            stderr: child.stderr,
          };
        }
        resolve();
      });
      this.#ended = new Promise((done) => {
        child.once("close", () => {
          this.#buffer.clear();
          this.#closed();
          done();
        });
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => this.#read(chunk));
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderr.push(chunk);
        this.#options.onStderr?.(chunk);
        for (const watch of [...this.stderrWatchers]) watch(chunk);
      });
    });
  }

  /** Takes over a child another daemon started: its pipes from their fds, nothing spawned. */
  async #adopt(handed: HandedChild): Promise<void> {
    const [inFd, outFd, errFd] = handed.fds;
    const io: ChildIo = {
      pid: handed.pid,
      stdin: pipeFrom(inFd, "write"),
      stdout: pipeFrom(outFd, "read"),
      stderr: pipeFrom(errFd, "read"),
    };
    this.#io = io;
    if (handed.owned) {
      this.#owned = undefined;
      // Not ours after all (the old daemon serves on): let go of it at once (release()).
      void handed.owned.then((owned) => void ((this.#owned = owned) || this.release()));
    }
    const outClosed = new Promise<void>((done) => io.stdout.once("close", () => done()));
    const errClosed = new Promise<void>((done) => io.stderr.once("close", () => done()));
    // A child closes its stdout as it exits; from then its pid says when it is gone.
    this.#exited = outClosed.then(async () => {
      await pidGone(handed.pid);
      this.#exit ??= { code: null, signal: null };
      return this.#exit;
    });
    this.#ended = Promise.all([this.#exited, errClosed]).then(() => {
      this.#buffer.clear();
      if (!this.#released) this.#closed();
    });
    io.stdin.on("error", (error: Error) => this.onerror?.(error));
    io.stdout.on("error", (error: Error) => this.onerror?.(error));
    io.stderr.on("error", () => undefined);
    io.stderr.on("data", (chunk: Buffer) => {
      this.stderr.push(chunk);
      this.#options.onStderr?.(chunk);
    });
    this.#options.onSpawn?.(handed.pid);
    // The rest of a line the old daemon was dropping is dropped here, never read as a line.
    const read = afterDroppedLine(
      handed.skipToNewline === true,
      (c) => this.#read(c),
      (bytes) =>
        this.#options.onJunk?.(`[the last ${bytes} bytes of an oversize line, dropped unread]`),
    );
    const unread = Buffer.from(handed.unread, "base64");
    if (unread.length > 0) read(unread);
    io.stdout.on("data", (chunk: Buffer) => read(chunk));
  }

  /**
   * Stops reading the child and says what another process needs to go on with it, given
   * `session` (the client's): undefined when the child is gone or its pipes have no fds.
   * Until release() the child is still this transport's: resume() reads on.
   */
  handOff(session: HandedSession): HandedChild | undefined {
    const io = this.#io;
    if (!io || this.#exit || this.#released || this.#closing) return undefined;
    const fds = [fdOf(io.stdin), fdOf(io.stdout), fdOf(io.stderr)];
    if (!fds.every((fd): fd is number => fd !== undefined)) return undefined;
    stopReading(io.stdout);
    stopReading(io.stderr);
    let settle = (): void => undefined;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.#handing = { done, settle };
    return { pid: io.pid, fds: [fds[0], fds[1], fds[2]], ...this.#tail.handed(), session };
  }

  /** After a handOff() the successor did not take: reads the child again, and onSpawn()s it. */
  resume(): void {
    if (!this.#io || this.#released) return;
    if (!this.#exit) this.#options.onSpawn?.(this.#io.pid);
    resumeReading(this.#io.stdout);
    resumeReading(this.#io.stderr);
    this.#handing?.settle();
    this.#handing = undefined;
  }

  /**
   * After a handOff() the successor took (or a handed child not ours after all): closes this
   * process's ends of the pipes, forgets the child, signals nothing. The child runs on.
   */
  release(): void {
    const io = this.#io;
    if (!io || this.#released) return;
    this.#released = true;
    this.#closing ??= Promise.resolve();
    for (const stream of [io.stdin, io.stdout, io.stderr]) {
      stream.on("error", () => undefined);
      stream.destroy();
    }
    this.#child?.unref();
    this.#handing?.settle();
    this.#handing = undefined;
    // A handed child that never became ours: what waits on it here ends now, as at a close.
    if (this.#owned === false) this.#closed();
  }

  #closedOnce = false;
  /** The shared wait for stdin's `drain` (#drained), while one is due. */
  #draining: Promise<void> | undefined;
  #closed(): void {
    if (this.#closedOnce) return;
    this.#closedOnce = true;
    this.onclose?.();
  }

  #read(chunk: Buffer): void {
    this.#tail.keep(chunk);
    const lines = this.#buffer.push(chunk);
    this.#dropping();
    for (const line of lines) {
      if (typeof line !== "string") {
        this.#oversize(line);
        continue;
      }
      const message = parseJsonRpcLine(line);
      if (message === undefined) this.#options.onJunk?.(line);
      else this.onmessage?.(message);
    }
  }

  /**
   * While an oversize line is dropped: the young generation collected every
   * COLLECT_EVERY_BYTES of it, and a line that is no JSON object given up on at once (no
   * answer can be told from it; a server writing without newlines would never end it).
   */
  #dropping(): void {
    const line = this.#buffer.dropping;
    if (line === undefined) {
      this.#collectedAt = 0;
      return;
    }
    if (line.oversize - this.#collectedAt >= COLLECT_EVERY_BYTES) {
      this.#collectedAt = line.oversize;
      this.#options.collector?.young();
    }
    if (this.#gaveUp || opensObject(line.head)) return;
    this.#gaveUp = true;
    const cap = this.#buffer.maxLineBytes;
    this.onerror?.(
      new Error(`a stdout line that is no JSON-RPC message passed the ${cap}-byte cap`),
    );
    void this.close();
  }

  /**
   * A line over the cap went by, measured and dropped: the answer it was fails its request
   * with the size; a request or notification of the server's is reported as junk. A line
   * that says neither leaves the connection in doubt: it is closed, as a crash would be.
   */
  #oversize(line: MeasuredLine): void {
    const cap = this.#buffer.maxLineBytes;
    const what = oversizeKind(line.head, line.tail);
    if (what.kind === "answer") {
      this.onmessage?.(tooLargeAnswer(what.id, line.oversize, cap));
    } else if (what.kind === "message") {
      this.#options.onJunk?.(
        `[a ${line.oversize}-byte "${what.method}" message, over the ${cap}-byte cap, dropped unread]`,
      );
      // A request is answered, or the server (and the call that led to it) would wait on it.
      const id = what.id;
      if (id !== undefined) this.send(tooLargeRequest(id, line.oversize, cap)).catch(() => {});
    } else if (!this.#gaveUp) {
      this.#gaveUp = true;
      this.onerror?.(new Error(`a ${line.oversize}-byte stdout line passed the ${cap}-byte cap`));
      void this.close();
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#io?.stdin ?? this.#child?.stdin;
    if (!stdin || this.#released) return Promise.reject(new Error("Not connected"));
    // Handed off, the session's next request id is the successor's: a request written now
    // would take an id the successor uses too, and its answer would be read as the other's.
    if (this.#handing !== undefined) {
      return Promise.reject(new Error("Not connected: the child is being handed to a new daemon"));
    }
    if (stdin.destroyed || this.#exit) return Promise.reject(brokenPipe());
    // One message a line (the SDK's serializeMessage, whose module loads its zod schemas).
    // Below the pipe's mark (counted in string units) write() takes it now: nothing waits on it,
    // and an error comes as stdin's `error` (onerror).
    const line = `${JSON.stringify(message)}\n`;
    if (!stdin.writableEnded && stdin.writableLength + line.length < stdin.writableHighWaterMark) {
      stdin.write(line);
      // One settled promise, not one a send (sent.ts).
      return SENT;
    }
    return new Promise((resolve, reject) => {
      if (stdin.write(line, (error) => error && reject(error))) resolve();
      else this.#drained(stdin).then(resolve, reject);
    });
  }

  /** One wait for stdin's drain shared by every blocked send (one each leaked thousands). */
  #drained(stdin: NodeJS.WritableStream): Promise<void> {
    this.#draining ??= new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off("drain", done);
        stdin.off("close", done);
        this.#draining = undefined;
        resolve();
      };
      stdin.on("drain", done);
      // A child gone before it read: the write callbacks say why; nobody waits forever.
      stdin.on("close", done);
    });
    return this.#draining;
  }

  /**
   * Resolves once the child has exited and its stderr is read to its end (true), or after
   * `boundMs` (false): a write to a child that just died fails (EPIPE) before its exit and the
   * last of its stderr reach us, and a caller that explains the failure wants both. A
   * grandchild that holds stderr open keeps it from ending: hence the bound.
   */
  async ended(boundMs: number): Promise<boolean> {
    return this.#ended === undefined ? true : within(this.#ended, boundMs);
  }

  /** Stop the child and every process of its group: stdin EOF, SIGTERM, SIGKILL. */
  close(): Promise<void> {
    const owned = this.#options.handed?.owned;
    if (this.#owned === undefined && owned) {
      // Said at once: a dial that failed on a handed child must not wait for the hand-over.
      this.#closing ??= owned.then((mine) => (mine ? this.#stop() : this.release()));
      return Promise.resolve();
    }
    if (this.#owned === false) {
      this.release();
      return Promise.resolve();
    }
    const handing = this.#handing?.done;
    this.#closing ??= handing
      ? handing.then(() => (this.#released ? undefined : this.#stop()))
      : this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    const io = this.#io;
    if (!io || !this.#exited) {
      this.#closed();
      return;
    }
    const pgid = io.pid;
    const grace = this.#options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    const exited = this.#exited;
    if (!this.#exit) {
      io.stdin.end();
      if (!(await within(exited, grace))) {
        signalGroup(pgid, "SIGTERM");
        if (!(await within(exited, grace))) {
          signalGroup(pgid, "SIGKILL");
          await exited;
        }
      }
    }
    // The leader is gone; a wrapper's grandchildren may not be. They share its group.
    if (groupAlive(pgid)) {
      signalGroup(pgid, "SIGTERM");
      if (!(await until(() => !groupAlive(pgid), grace))) signalGroup(pgid, "SIGKILL");
    }
    this.#options.onGone?.(pgid);
  }
}

/**
 * Whether a send failed because the child's end of stdin is gone: the child died under the
 * call and the close that says so is still on its way, so the write lost the race.
 */
export function isBrokenPipe(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/** What send() rejects with once the child has exited, as a write would have failed. */
function brokenPipe(): Error {
  return Object.assign(new Error("Not connected: the child's stdin is closed"), { code: "EPIPE" });
}

async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls a condition nothing can notify us of (a group with no leader to wait on). */
async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20).unref());
  }
  return condition();
}
