/**
 * Ending the `mcpool` process without losing its output. Writes to a pipe are
 * asynchronous: `process.exit()` right after a large write ended the process with only what
 * the pipe had taken (64 KiB, or 128) delivered, and exit 0. So the process exits once both
 * stdout and stderr have flushed. A reader that goes away early (`mcpool tools | head -1`)
 * is a clean end, not a crash: no stack trace, exit {@link EXIT_BROKEN_PIPE}.
 */

import { EXIT } from "./exit-codes.js";

/** 128 + SIGPIPE: what a shell reports for a command that wrote into a closed pipe. */
export const EXIT_BROKEN_PIPE = EXIT.brokenPipe;

/** Exits with `code` once stdout and stderr have handed everything to the OS. */
export async function exitWhenFlushed(code: number): Promise<never> {
  try {
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  } catch (error) {
    exitOnBrokenPipe(error);
    throw error;
  }
  process.exit(code);
}

/**
 * A write to stdout or stderr that finds its reader gone ends the process at once with
 * {@link EXIT_BROKEN_PIPE}: nothing more it prints can arrive.
 */
export function endQuietlyOnBrokenPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      exitOnBrokenPipe(error);
      throw error;
    });
  }
}

/**
 * For `serve`: a terminal or pipe that went away is no reason to stop serving — the log
 * file has every line. Writes to a broken stream are dropped; other errors still throw.
 */
export function serveWithoutBrokenPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
    });
  }
}

function exitOnBrokenPipe(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code === "EPIPE") process.exit(EXIT_BROKEN_PIPE);
}

/** Resolves once what was written before has been written (write callbacks run in order). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve, reject) =>
    stream.write("", (error) => (error ? reject(error) : resolve())),
  );
}
