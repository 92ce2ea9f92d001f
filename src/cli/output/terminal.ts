/**
 * Text made safe for a person's terminal: what a server sends — tool names, titles,
 * descriptions, schema keys, results, error bodies — reaches the screen as text, never as
 * control bytes. A terminal obeys an escape sequence wherever it comes from: OSC 0 retitles
 * the window, OSC 52 writes the clipboard, CSI clears or recolours the screen. So:
 * - every C0 control, DEL and C1 control is shown as `\xNN` (printable.ts), escape sequences
 *   included, so `\x1b]52;c;…\x07` is read, not run, and a person sees what was tried;
 * - `multiline` keeps line breaks and tabs; otherwise they are shown too (a table cell, a
 *   name, a config key stays one line and cannot forge the line below it);
 * - an overlong line is cut with a marker saying how much was left out, and an overlong text
 *   keeps its first and last lines around a marker, when the caller sets a bound.
 * Every human-readable line the CLI writes goes through `terminalText`; `--json` never does
 * (JSON has its own escaping and must stay the exact strings).
 */
import { printable } from "../../pool/core/printable.js";

export interface TerminalTextOptions {
  /** Keep `\n` and `\t` (a `\r\n` becomes `\n`). Default false: they are shown as `\x0a`, `\x09`. */
  multiline?: boolean;
  /** Characters a line keeps, after its controls are shown; the rest becomes a marker. Default no bound. */
  maxLineChars?: number;
  /** Lines the text keeps: its first two thirds and last third, a marker line between. Default no bound. */
  maxLines?: number;
}

/** `text` with no control byte left in it, cut to the bounds given. */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  const { multiline = false, maxLineChars, maxLines } = options;
  const safe = printable(text, { multiline, sequences: "show" });
  if (maxLineChars === undefined && maxLines === undefined) return safe;
  let lines = safe.split("\n");
  if (maxLineChars !== undefined) lines = lines.map((line) => cutLine(line, maxLineChars));
  if (maxLines !== undefined && lines.length > maxLines) lines = cutLines(lines, maxLines);
  return lines.join("\n");
}

/** Lines a failure keeps on stderr: enough for a stderr tail's head and its last words. */
export const ERROR_MAX_LINES = 9;

/** Characters per line of a failure: a long path fits, a minified HTML page does not. */
export const ERROR_LINE_CHARS = 400;

/**
 * A failure's message for `mcpool: …` on stderr: safe, and bounded, so a remote server's
 * 500 page or a flood of stderr is a few cut lines rather than the whole body.
 */
export function errorText(message: string): string {
  return terminalText(message, {
    multiline: true,
    maxLineChars: ERROR_LINE_CHARS,
    maxLines: ERROR_MAX_LINES,
  });
}

function cutLine(line: string, max: number): string {
  if (line.length <= max) return line;
  // Never half a surrogate pair: an emoji is cut whole.
  const end = /[\ud800-\udbff]/.test(line.charAt(max - 1)) ? max - 1 : max;
  return `${line.slice(0, end)} …[${line.length - end} more chars cut]`;
}

/** The head is where a message says what happened, the tail where a stderr tail ends. */
function cutLines(lines: readonly string[], max: number): string[] {
  const tail = Math.floor(max / 3);
  const head = Math.max(1, max - tail);
  const dropped = lines.length - head - tail;
  return [
    ...lines.slice(0, head),
    `…[${dropped} more lines cut]`,
    ...(tail > 0 ? lines.slice(-tail) : []),
  ];
}
