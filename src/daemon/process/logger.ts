/**
 * The daemon's log: every line to stderr (what a service manager collects) and to a
 * bounded log file in the log directory, rotated once to `.1` when it passes its cap.
 * Library code never writes stdout: for `mcpool bridge` it is a protocol channel.
 * Messages quote what servers said; every one is made printable (no escape sequences or
 * control bytes) before it reaches a terminal through stderr or `mcpool logs` (SPEC F8).
 * A line is `<ISO time> <level> <message>`; a line about one server has `mcpool: <id>: `
 * before its text (core/server-log.ts), which `mcpool logs --server` and `--json` read.
 */
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { printable } from "../../pool/core/printable.js";
import type { PoolLog } from "../../pool/core/types.js";

/** What a message's later lines start with in the file, where `mcpool logs` reads them back. */
const CONTINUED = "  ";

/** A week of a busy daemon's lines; two files at most. */
export const DEFAULT_LOG_MAX_BYTES = 5 * 1024 * 1024;

export interface DaemonLog extends Required<PoolLog> {
  /** The log file's path, for `mcpool logs`. */
  readonly path: string;
}

export function createLog(
  dir: string,
  options: { maxBytes?: number; stderr?: boolean } = {},
): DaemonLog {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, "mcpool.log");
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_MAX_BYTES;
  let size = sizeOf(path);
  const write = (level: string, message: string): void => {
    // A message's later lines (a stderr tail) are indented: text a child wrote can never
    // start a line of its own, so it cannot pass for an entry about another server (K2).
    const text = printable(message, { multiline: true }).replace(/\n/g, `\n${CONTINUED}`);
    const line = `${new Date().toISOString()} ${level} ${text}\n`;
    if (options.stderr !== false) process.stderr.write(line);
    try {
      if (size + line.length > maxBytes) {
        renameSync(path, `${path}.1`);
        size = 0;
      }
      appendFileSync(path, line, { mode: 0o600 });
      size += Buffer.byteLength(line);
    } catch {
      // A full disk must not take the daemon down; stderr still has the line.
    }
  };
  return {
    path,
    info: (message) => write("info", message),
    error: (message) => write("error", message),
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
