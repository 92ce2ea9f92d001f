/**
 * Text a child wrote, made safe to put in a log line or an error message. A server
 * can print anything; read back with `mcpool logs`, `tail -f` or `journalctl` in a terminal,
 * an escape sequence would recolour, retitle or rewrite the reader's screen. So:
 * - ANSI escape sequences (CSI `ESC [`, OSC `ESC ]`, DCS/PM/APC/SOS strings, the short
 *   `ESC x` forms, and their 8-bit C1 introducers) disappear whole: `\x1b[31mred` → `red`;
 * - every other C0 control, DEL and C1 control becomes visible text, `\x07` for BEL.
 * With `sequences: "show"` nothing is removed: a sequence's introducer is shown like any other
 * control (`\x1b]0;title\x07`), for a person who should see what a server tried to send.
 */

/** A string sequence (OSC, DCS, SOS, PM, APC): up to BEL or ST, or to the end if unterminated. */
const STRING_SEQUENCE = String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?`;
/** A control sequence (CSI): parameters, intermediates, one final byte. */
const CONTROL_SEQUENCE = String.raw`(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]`;
/** The two- and three-byte forms: `ESC 7`, `ESC c`, `ESC ( B`. */
const SHORT_SEQUENCE = String.raw`\x1b[ -/]*[0-~]`;
const ESCAPE_SEQUENCE = new RegExp(`${STRING_SEQUENCE}|${CONTROL_SEQUENCE}|${SHORT_SEQUENCE}`, "g");

// Matching control characters is this module's purpose.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
/** The same, sparing the newline and tab of multi-line text such as a stderr tail. */
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

const visible = (char: string): string => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`;

/**
 * `text` without escape sequences and with every control character shown as `\xNN`.
 * `multiline`: keep `\n` and `\t` (a `\r\n` becomes `\n`); otherwise they are shown too.
 * `sequences`: `"strip"` (the default) removes escape sequences whole, `"show"` keeps their
 * text with the controls in them shown.
 */
export function printable(
  text: string,
  options: { multiline?: boolean; sequences?: "strip" | "show" } = {},
): string {
  const stripped = options.sequences === "show" ? text : text.replace(ESCAPE_SEQUENCE, "");
  if (options.multiline) return stripped.replace(/\r\n/g, "\n").replace(CONTROL_BUT_LINES, visible);
  return stripped.replace(CONTROL, visible);
}
