/**
 * A stdio MCP transport whose child lives in its own process group.
 *
 * The SDK's StdioClientTransport signals only the child it spawned, so a server started
 * through a wrapper (`sh -c`, `npx`, `uvx`) leaves its real process behind. This one keeps
 * the SDK's serializer and owns the process handling and the reading side:
 * - the child is a process-group leader (`detached`), so a stop reaches every descendant;
 * - close() escalates stdin EOF → SIGTERM to the group → SIGKILL to the group;
 * - stdout lines that are not JSON-RPC are skipped and reported, never fatal;
 * - stderr is kept as a bounded tail for error messages.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { LineReader, parseJsonRpcLine } from "./line-reader.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { StderrTail } from "./stderr-tail.js";

/** How long a child gets after stdin EOF, and again after SIGTERM, before the next step. */
export const DEFAULT_STOP_GRACE_MS = 2000;

/** A single stdout line larger than this is a broken server, not a message. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

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
  /** Called once the child has started, with its pid (also its process group id). */
  onSpawn?: (pid: number) => void;
  /** Called once the child and every process of its group are gone. */
  onGone?: (pid: number) => void;
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
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the child ended, once it has. */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error("ChildProcessTransport already started");
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

  #closedOnce = false;
  /** The shared wait for stdin's `drain` (#drained), while one is due. */
  #draining: Promise<void> | undefined;
  #closed(): void {
    if (this.#closedOnce) return;
    this.#closedOnce = true;
    this.onclose?.();
  }

  #read(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.#buffer.push(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (const line of lines) {
      const message = parseJsonRpcLine(line);
      if (message === undefined) this.#options.onJunk?.(line);
      else this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    if (stdin.destroyed || this.#exit) return Promise.reject(brokenPipe());
    return new Promise((resolve, reject) => {
      // One message a line (the SDK's serializeMessage, whose module loads its zod schemas).
      const ok = stdin.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) reject(error);
      });
      if (ok) resolve();
      else this.#drained(stdin).then(resolve, reject);
    });
  }

  /**
   * One wait for the child's stdin to drain, shared by every send that met its backpressure:
   * a listener per send leaked thousands of `drain` listeners on a busy server.
   */
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
    this.#closing ??= this.#stop();
    return this.#closing;
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.pid === undefined || !this.#exited) {
      this.#closed();
      return;
    }
    const pgid = child.pid;
    const grace = this.#options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    const exited = this.#exited;
    if (!this.#exit) {
      child.stdin?.end();
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

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
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
