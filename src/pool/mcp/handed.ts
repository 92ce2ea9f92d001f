/**
 * A stdio child handed from one daemon to the next (src/daemon/handover/README.md): what the
 * new daemon needs to go on speaking to it — its pid, its three pipes as fds, the bytes of
 * stdout already read but not yet a whole line — and the session the old daemon opened, so
 * the new one sends no second `initialize`. Only what Node does in the open: a pipe's fd is
 * its handle's, and a pipe is read again from an fd with `new Socket({ fd })`.
 */
import { readFileSync } from "node:fs";
import { Socket } from "node:net";
import type { Implementation, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { DiscoverResult, EraVerdict } from "./era.js";

/** What a connection had opened, as the handshake (or `server/discover`) told it. */
export interface HandedSession {
  protocolVersion: string;
  capabilities: ServerCapabilities;
  serverInfo?: Implementation;
  instructions?: string;
  verdict?: EraVerdict;
  /** A modern connection: the version its requests name and what the server said. */
  modern?: { version: string; discover: DiscoverResult };
  /** The next JSON-RPC id the old client would have used: no answer is taken for another's. */
  nextId: number;
}

/** A child as handed over: in the old daemon, its fds there; in the new one, its fds here. */
export interface HandedChild {
  pid: number;
  /** stdin, stdout, stderr. */
  fds: [number, number, number];
  /** stdout bytes read but not yet a whole line, base64. */
  unread: string;
  session: HandedSession;
  /**
   * In the new daemon: whether the hand-over went through. Until it settles the child is not
   * yet this process's to stop: a close lets it go without a signal if this resolves false.
   */
  owned?: Promise<boolean>;
}

/** A stream's file descriptor, where its handle has one (a pipe, a Unix socket). */
export function fdOf(stream: unknown): number | undefined {
  const fd = (stream as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/** The handle's reading state, as net.Socket keeps it (`_handle.reading`). */
type ReadingHandle = { reading?: boolean; readStop?: () => number };

/**
 * Stops reading `stream` for good, until resumeReading(): what is still in the pipe stays
 * there for whoever reads it next. net.Socket starts reading again whenever its buffer runs
 * low unless its handle says it is reading, so the handle is told it is.
 */
export function stopReading(stream: NodeJS.ReadableStream | null | undefined): void {
  if (!stream) return;
  stream.pause();
  const handle = (stream as { _handle?: ReadingHandle })._handle;
  if (!handle?.readStop) return;
  handle.readStop();
  handle.reading = true;
}

/** Undoes stopReading(): the stream flows again from the byte the pipe holds next. */
export function resumeReading(stream: NodeJS.ReadableStream | null | undefined): void {
  if (!stream) return;
  const handle = (stream as { _handle?: ReadingHandle })._handle;
  if (handle) handle.reading = false;
  stream.resume();
  // A paused net.Socket whose buffer is empty asks its handle for more on read(0).
  (stream as NodeJS.ReadableStream & { read(size: number): unknown }).read(0);
}

/** A pipe end this process was given as `fd`, as a stream. */
export function pipeFrom(fd: number, direction: "read" | "write"): Socket {
  return new Socket({ fd, readable: direction === "read", writable: direction === "write" });
}

/**
 * Whether `pid` still runs. A zombie has exited: an adopted child is not ours to reap, and
 * where PID 1 does not reap orphans it lingers in that state (read from /proc on Linux).
 */
export function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (process.platform !== "linux") return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Resolves once `pid` no longer runs, looking every `everyMs`. */
export async function pidGone(pid: number, everyMs = 50): Promise<void> {
  while (pidRuns(pid)) {
    await new Promise((resolve) => setTimeout(resolve, everyMs).unref());
  }
}
