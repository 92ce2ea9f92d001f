/**
 * Frames: one JSON value per line of UTF-8, ended by "\n". Both sides use this.
 * Bytes are kept until their line is complete and only then decoded, so a code point split
 * across chunks survives. A line is refused as soon as its buffered bytes pass the cap and
 * skipped up to its newline, never held whole. A bad frame is reported on its own and the
 * frames after it still decode. The codec knows frames, not methods.
 *
 * Runtime-free: bytes are Uint8Array (a Node Buffer is one, and keeps its fast indexOf),
 * text is the WHATWG TextDecoder/TextEncoder. LineSplitter is the framing alone, for a
 * reader that decodes its lines itself (a child's stdout, src/pool/mcp/line-reader.ts).
 */
/** Largest frame accepted by default, bytes: room for a large tool result, yet bounded. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

// JSON.parse copes with any depth, but the recursive code that later walks a value
// (JSON.stringify, schema checks, argument coercion) overflows the stack near 10,000 levels.
/** Deepest nesting of arrays and objects accepted by default. */
export const DEFAULT_MAX_DEPTH = 512;

export type FrameErrorReason = "oversize" | "encoding" | "depth" | "parse" | "truncated";

export interface FrameError {
  reason: FrameErrorReason;
  message: string;
  /** Bytes of the refused line seen so far (all of it, except for `oversize`). */
  bytes: number;
}

export type Frame = { ok: true; value: unknown } | { ok: false; error: FrameError };

export interface FrameDecoderOptions {
  /** Largest line accepted, bytes, newline excluded. Default DEFAULT_MAX_FRAME_BYTES (16 MiB). */
  maxFrameBytes?: number;
  /** Deepest nesting of arrays and objects accepted. Default DEFAULT_MAX_DEPTH (512). */
  maxDepth?: number;
}

/** A line that passed the cap: reported once, with the bytes seen when it did. */
export interface OversizeLine {
  oversize: number;
}

const NEWLINE = 0x0a;

/**
 * Newline-delimited framing over byte chunks. Each push returns the lines it completed,
 * newline excluded and still bytes; a line passing `maxLineBytes` comes out once as an
 * OversizeLine and the rest of it, up to its newline, is dropped unbuffered.
 */
export class LineSplitter {
  readonly maxLineBytes: number;
  #parts: Uint8Array[] = [];
  #partBytes = 0;
  /** Inside a line already refused as oversize: drop bytes up to its newline. */
  #skipping = false;

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Bytes held for an incomplete line; never more than maxLineBytes. */
  get bufferedBytes(): number {
    return this.#partBytes;
  }

  /** The lines completed by `chunk`, in order. */
  push(chunk: Uint8Array): (Uint8Array | OversizeLine)[] {
    const lines: (Uint8Array | OversizeLine)[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.#skipping) {
        if (newline === -1) break;
        this.#skipping = false;
        start = newline + 1;
        continue;
      }
      const bytes = this.#partBytes + (end - start);
      if (bytes > this.maxLineBytes) {
        lines.push({ oversize: bytes });
        this.clear();
        if (newline === -1) {
          this.#skipping = true;
          break;
        }
        start = newline + 1;
        continue;
      }
      if (newline === -1) {
        this.#parts.push(chunk.subarray(start));
        this.#partBytes = bytes;
        break;
      }
      const tail = chunk.subarray(start, newline);
      lines.push(this.#parts.length === 0 ? tail : concat([...this.#parts, tail], bytes));
      this.clear();
      start = newline + 1;
    }
    return lines;
  }

  /** The stream ended: how many bytes of an incomplete line were dropped (0 for none). */
  end(): number {
    const bytes = this.#partBytes;
    this.clear();
    this.#skipping = false;
    return bytes;
  }

  /** Forgets the incomplete line. */
  clear(): void {
    this.#parts = [];
    this.#partBytes = 0;
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

// `fatal`: invalid UTF-8 throws instead of becoming U+FFFD (the frame is refused whole).
// `ignoreBOM`: a BOM stays in the text, so JSON.parse refuses it as it always did.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const ENCODER = new TextEncoder();

export class FrameDecoder {
  readonly maxFrameBytes: number;
  readonly maxDepth: number;
  readonly #lines: LineSplitter;

  constructor(options: FrameDecoderOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.#lines = new LineSplitter(this.maxFrameBytes);
  }

  /** Bytes held for an incomplete line; never more than maxFrameBytes. */
  get bufferedBytes(): number {
    return this.#lines.bufferedBytes;
  }

  /** The frames completed by `chunk`, in order, each decoded or refused on its own. */
  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    for (const line of this.#lines.push(chunk)) {
      if (line instanceof Uint8Array) {
        const frame = this.decodeLine(line);
        if (frame !== undefined) frames.push(frame);
      } else {
        const message = `frame exceeds ${this.maxFrameBytes} bytes`;
        frames.push(refused("oversize", message, line.oversize));
      }
    }
    return frames;
  }

  /** The stream ended: a refusal if a line was left incomplete. Drops what was held. */
  end(): FrameError | undefined {
    const bytes = this.#lines.end();
    if (bytes === 0) return undefined;
    return { reason: "truncated", message: `stream ended inside a ${bytes}-byte frame`, bytes };
  }

  private decodeLine(line: Uint8Array): Frame | undefined {
    if (isBlank(line)) return undefined;
    let text: string;
    try {
      text = UTF8.decode(line);
    } catch {
      return refused("encoding", "frame is not valid UTF-8", line.length);
    }
    if (line.length > this.maxDepth && nestsDeeperThan(line, this.maxDepth)) {
      return refused("depth", `frame nests deeper than ${this.maxDepth} levels`, line.length);
    }
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return refused("parse", `frame is not JSON: ${detail}`, line.length);
    }
  }
}

function refused(reason: FrameErrorReason, message: string, bytes: number): Frame {
  return { ok: false, error: { reason, message, bytes } };
}

/** Only spaces, tabs and carriage returns: a keep-alive or a CRLF, not a frame. */
function isBlank(line: Uint8Array): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** Bracket depth outside strings. Multi-byte UTF-8 never contains ASCII bytes, so bytes do. */
function nestsDeeperThan(line: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const byte = line[i];
    if (inString) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) return true;
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return false;
}

/** One frame: the value as JSON, then "\n". JSON.stringify escapes every newline in it. */
export function encodeFrame(value: unknown): Uint8Array {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError("a frame must hold a JSON value");
  return ENCODER.encode(json + "\n");
}
