/**
 * Logging what a stdio child prints on stdout that is not JSON-RPC. That text is
 * the server's, not ours: it may quote the secrets the row gave it, carry terminal escape
 * codes, or come by the thousand. Each logged line is therefore redacted, made printable
 * and cut short, and tagged with the server's id; per server at most `maxLines` lines are
 * logged per window, the rest counted and reported in one line when the window ends.
 *
 * No timer runs while servers are quiet: a window starts with its first line, and a
 * one-shot, unref'd timer is armed only once a window starts dropping lines, to report them.
 */
import { printable } from "../core/printable.js";
import { serverLog } from "../core/server-log.js";
import type { PoolLog } from "../core/types.js";

/** Lines logged per server per window before the rest are only counted. */
export const DEFAULT_JUNK_LINES_PER_WINDOW = 10;
/** The window, ms: a chatty server costs at most ~one log line a second. */
export const DEFAULT_JUNK_WINDOW_MS = 10_000;
/** What is left of a line in the log, in characters after it is made printable. */
export const MAX_JUNK_LINE_CHARS = 200;
/**
 * How much of a line is redacted before it is cut: enough that a secret straddling the
 * cut is found whole, without scanning a 64 MiB line for a 200-character excerpt.
 */
const REDACT_WINDOW_CHARS = 64 * 1024;

export interface JunkLogOptions {
  /** Where the lines go (the pool's info log). */
  log: NonNullable<PoolLog["info"]>;
  /** Lines per server per window. Default {@link DEFAULT_JUNK_LINES_PER_WINDOW}. */
  maxLines?: number;
  /** ms. Default {@link DEFAULT_JUNK_WINDOW_MS}. */
  windowMs?: number;
}

interface Window {
  startedAt: number;
  logged: number;
  dropped: number;
  timer?: NodeJS.Timeout;
}

export class JunkLog {
  readonly #log: PoolLog;
  readonly #maxLines: number;
  readonly #windowMs: number;
  readonly #windows = new Map<string, Window>();

  constructor(options: JunkLogOptions) {
    this.#log = { info: options.log };
    this.#maxLines = options.maxLines ?? DEFAULT_JUNK_LINES_PER_WINDOW;
    this.#windowMs = options.windowMs ?? DEFAULT_JUNK_WINDOW_MS;
  }

  /**
   * One stdout line of `serverId` that is not JSON-RPC. `redact` removes the secrets that
   * server's child was given; it runs only on lines that are logged. Blank lines are not
   * worth a log line and are ignored.
   */
  line(serverId: string, line: string, redact: (text: string) => string): void {
    if (line.trim() === "") return;
    const window = this.#window(serverId);
    if (window.logged < this.#maxLines) {
      window.logged += 1;
      serverLog(this.#log, serverId).info(
        `skipped a stdout line that is not JSON-RPC: ${excerpt(line, redact)}`,
      );
      return;
    }
    window.dropped += 1;
    window.timer ??= setTimeout(
      () => this.#close(serverId, window),
      window.startedAt + this.#windowMs - Date.now(),
    ).unref();
  }

  /** The server's current window, or a new one if its last has run out. */
  #window(serverId: string): Window {
    const current = this.#windows.get(serverId);
    if (current && Date.now() - current.startedAt < this.#windowMs) return current;
    if (current) this.#close(serverId, current);
    const window: Window = { startedAt: Date.now(), logged: 0, dropped: 0 };
    this.#windows.set(serverId, window);
    return window;
  }

  #close(serverId: string, window: Window): void {
    clearTimeout(window.timer);
    if (this.#windows.get(serverId) === window) this.#windows.delete(serverId);
    if (window.dropped === 0) return;
    const seconds = Math.round(this.#windowMs / 1000);
    serverLog(this.#log, serverId).info(
      `… and ${window.dropped} more stdout lines that are not JSON-RPC in the last ${seconds} s (not logged)`,
    );
  }
}

/**
 * What of a line goes in the log. Made printable before it is redacted, so that a secret
 * broken up by colour codes is whole again when redaction looks for it; cut last, so that
 * no cut leaves part of a secret behind.
 */
function excerpt(line: string, redact: (text: string) => string): string {
  const clean = redact(printable(line.slice(0, REDACT_WINDOW_CHARS)));
  if (clean.length <= MAX_JUNK_LINE_CHARS) return clean;
  let end = MAX_JUNK_LINE_CHARS;
  // Never split a surrogate pair.
  if (/[\uDC00-\uDFFF]/.test(clean.charAt(end))) end -= 1;
  return `${clean.slice(0, end)}… (${line.length} characters)`;
}
