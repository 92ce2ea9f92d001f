/**
 * The daemon's log: every line to stderr (what a service manager collects) and to a
 * bounded log file in the log directory, rotated once to `.1` when it passes its cap.
 * Library code never writes stdout: for `mcpool bridge` it is a protocol channel.
 * Messages quote what servers said; every one is made printable (no escape sequences or
 * control bytes) before it reaches a terminal through stderr or `mcpool logs`.
 * A line is `<ISO time> <level> <message>`; a line about one server has `mcpool: <id>: `
 * before its text (core/server-log.ts), which `mcpool logs --server` and `--json` read.
 *
 * Only the daemon writes this log. A message is always one line: the newlines of
 * a child's stderr tail are written as `\n`, so nothing a child says can start a line that
 * passes for an entry. The file is opened with O_NOFOLLOW: a symlink planted at its path (or
 * at `.1`) is refused, said so once on stderr, and from then on the log is stderr only.
 */
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { printable } from "../../pool/core/printable.js";
import type { PoolLog } from "../../pool/core/types.js";

/** A week of a busy daemon's lines; two files at most. */
export const DEFAULT_LOG_MAX_BYTES = 5 * 1024 * 1024;

/** Append, create 0600, and never through a symlink: an open of a link fails with ELOOP. */
const APPEND_NO_FOLLOW =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export interface DaemonLog extends Required<PoolLog> {
  /** The log file's path, for `mcpool logs`. */
  readonly path: string;
  /** Why the file is not being written now (a planted link, a full disk); undefined while it is. */
  readonly problem: string | undefined;
}

/** `message` as the text of one log line: printable, its newlines and tabs shown as `\n`, `\t`. */
export function logLineText(message: string): string {
  return printable(message, { multiline: true }).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}

export function createLog(
  dir: string,
  options: { maxBytes?: number; stderr?: boolean } = {},
): DaemonLog {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, "mcpool.log");
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_MAX_BYTES;
  let fileOff = false;
  let problem: string | undefined;
  const refuse = (link: string): void => {
    fileOff = true;
    problem = `${link} is a symbolic link, which the daemon never follows; logging to stderr only (remove it and restart the daemon)`;
    // Said on stderr whatever options.stderr says: this line is why the file stays empty.
    process.stderr.write(
      `${new Date().toISOString()} error mcpool: refusing to write the log through ${link}: ` +
        `it is a symbolic link, which the daemon never follows (remove it and restart the ` +
        `daemon); logging to stderr only\n`,
    );
  };
  if (isLink(path)) refuse(path);
  let size = fileOff ? 0 : sizeOf(path);
  const write = (level: string, message: string): void => {
    const line = `${new Date().toISOString()} ${level} ${logLineText(message)}\n`;
    if (options.stderr !== false) process.stderr.write(line);
    if (fileOff) return;
    try {
      if (size + line.length > maxBytes) {
        // rename() would replace a link at `.1`, not follow it; refused all the same, as
        // someone put it there to have the log written somewhere else.
        if (isLink(`${path}.1`)) return refuse(`${path}.1`);
        renameSync(path, `${path}.1`);
        size = 0;
      }
      const fd = openSync(path, APPEND_NO_FOLLOW, 0o600);
      try {
        writeSync(fd, line);
      } finally {
        closeSync(fd);
      }
      size += Buffer.byteLength(line);
      problem = undefined;
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      if (code === "ELOOP") return refuse(path);
      // Otherwise (a full disk) the daemon must not go down; stderr still has the line.
      problem = `writing ${path} failed (${code ?? message}); its lines go to stderr only`;
    }
  };
  return {
    path,
    get problem() {
      return problem;
    },
    info: (message) => write("info", message),
    error: (message) => write("error", message),
  };
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function sizeOf(path: string): number {
  try {
    return lstatSync(path).size;
  } catch {
    return 0;
  }
}
