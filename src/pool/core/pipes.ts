/**
 * A child's pipes as another process can take them over (src/daemon/handover): a pipe's fd
 * is its handle's, reading stops and starts again at the handle, and a pipe is read again
 * from an fd with `new Socket({ fd })`. A child not our own is watched by its pid.
 */
import { readFileSync } from "node:fs";
import { Socket } from "node:net";

/** A stream's file descriptor, where its handle has one (a pipe, a Unix socket). */
export function fdOf(stream: unknown): number | undefined {
  const fd = (stream as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : undefined;
}

/** The handle's reading state, as net.Socket keeps it (`_handle.reading`). */
type ReadingHandle = { reading?: boolean; readStop?: () => number; readStart?: () => number };

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

/**
 * Undoes stopReading(): the handle reads again, and the stream flows from the byte the pipe
 * holds next. Started at the handle, as net.Socket itself does: the stream may still wait
 * for the read it asked for before it was stopped, and would not ask again.
 */
export function resumeReading(stream: NodeJS.ReadableStream | null | undefined): void {
  if (!stream) return;
  const handle = (stream as { _handle?: ReadingHandle })._handle;
  if (handle?.readStart) {
    handle.reading = true;
    handle.readStart();
  }
  stream.resume();
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

/** Sends `signal` to every process of group `pgid`; an empty group is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/** Whether any process of group `pgid` is left. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
