/**
 * A bounded tail of what a child wrote to stderr: the explanation of a failed start is
 * nearly always its last lines, and a child writing gigabytes must not grow our memory.
 * It ends up in error messages, status and the log, so it is read back printable: no escape
 * sequences or control bytes, only its lines (printable.ts).
 */
import { printable } from "../core/printable.js";

/** Enough for a Python traceback or a Node stack; small enough to put in an error. */
export const DEFAULT_STDERR_TAIL_CHARS = 4096;

export class StderrTail {
  #text = "";
  readonly #max: number;
  readonly #decoder = new TextDecoder("utf-8");

  constructor(maxChars = DEFAULT_STDERR_TAIL_CHARS) {
    this.#max = maxChars;
  }

  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    // Keep at most twice the cap between trims so a flood costs O(n), not O(n²).
    this.#text += text.length > this.#max ? text.slice(-this.#max) : text;
    if (this.#text.length > this.#max * 2) this.#text = this.#text.slice(-this.#max);
  }

  /** The last `maxChars` characters, trimmed and made printable. */
  text(): string {
    return printable(this.#text.slice(-this.#max), { multiline: true }).trim();
  }
}
