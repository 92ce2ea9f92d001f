/**
 * A progress line on stderr for what can take a while: `call`, `restart`,
 * `probe`, `reload` print nothing until they end, and a 4 s call looks like a hang. Only
 * on a terminal — a pipe or a log gets the result and nothing else — and only once the
 * work has run for a second, so quick commands never flicker.
 */
import { terminalText } from "./terminal.js";

/** How long work runs before the line appears. */
export const PROGRESS_AFTER_MS = 1000;

/** How often the line is redrawn. */
const FRAME_MS = 100;

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** Erases the current terminal line. */
const CLEAR_LINE = "\r\u001b[K";

/** The stream the line goes to: stderr, or a stand-in. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * Runs `work`, showing `label` with a spinner and the seconds spent while it runs past
 * PROGRESS_AFTER_MS on a terminal; the line is erased before the result is printed.
 */
export async function withProgress<T>(
  label: string,
  work: () => Promise<T>,
  stream: ProgressStream = process.stderr,
): Promise<T> {
  if (stream.isTTY !== true) return work();
  const text = terminalText(label);
  const started = Date.now();
  let frame = 0;
  let shown = false;
  const draw = (): void => {
    shown = true;
    const seconds = Math.floor((Date.now() - started) / 1000);
    stream.write(`${CLEAR_LINE}${FRAMES[frame++ % FRAMES.length]} ${text} (${seconds}s)`);
  };
  let ticker: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    draw();
    ticker = setInterval(draw, FRAME_MS);
  }, PROGRESS_AFTER_MS);
  try {
    return await work();
  } finally {
    clearTimeout(delay);
    clearInterval(ticker);
    if (shown) stream.write(CLEAR_LINE);
  }
}
