/**
 * Frames: one JSON value per line of UTF-8, ended by "\n". Both sides use this.
 * Bytes are kept until their line is complete and only then decoded, so a code point split
 * across chunks survives. A line is refused as soon as its buffered bytes pass the cap and
 * skipped up to its newline, never held whole. A bad frame is reported on its own and the
 * frames after it still decode. The codec knows frames, not methods.
 *
 * Runtime-free: bytes are Uint8Array (a Node Buffer is one, and keeps its fast indexOf),
 * text is the WHATWG TextDecoder/TextEncoder. LineSplitter is the framing alone, for a
 * reader that decodes its lines itself (a child's stdout, src/pool/transport/line-reader.ts).
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

/**
 * A line that passed the cap, reported once. By default as soon as it does, with the bytes
 * seen then; a measuring splitter reports it at its newline instead, with every byte of it
 * counted and its first and last EDGE_BYTES kept (`head`, `tail`), enough to tell what the
 * line was (a JSON-RPC message's id or method) without holding it.
 */
export interface OversizeLine {
  oversize: number;
  head?: Uint8Array;
  tail?: Uint8Array;
}

export interface LineSplitterOptions {
  /** Report an oversize line at its end, measured whole, with its head and tail. */
  measure?: boolean;
}

/** How many of an oversize line's first bytes, and of its last, a measuring splitter keeps. */
export const EDGE_BYTES = 512;

const NEWLINE = 0x0a;

/**
 * Newline-delimited framing over byte chunks. Each push returns the lines it completed,
 * newline excluded and still bytes; a line passing `maxLineBytes` comes out once as an
 * OversizeLine and the rest of it, up to its newline, is counted and dropped unbuffered.
 */
export class LineSplitter {
  readonly maxLineBytes: number;
  readonly #measure: boolean;
  #parts: Uint8Array[] = [];
  #partBytes = 0;
  /** Inside a line already refused as oversize: drop bytes up to its newline. */
  #skipping = false;
  /** A measuring splitter's oversize line so far: its bytes, head and last bytes. */
  #skipped: Required<OversizeLine> = { oversize: 0, head: EMPTY, tail: EMPTY };

  constructor(maxLineBytes: number, options: LineSplitterOptions = {}) {
    this.maxLineBytes = maxLineBytes;
    this.#measure = options.measure === true;
  }

  /** Bytes held for an incomplete line; never more than maxLineBytes. */
  get bufferedBytes(): number {
    return this.#partBytes;
  }

  /** A measuring splitter's oversize line being dropped, as counted so far; else undefined. */
  get dropping(): Readonly<Required<OversizeLine>> | undefined {
    return this.#skipping && this.#measure ? this.#skipped : undefined;
  }

  /** The lines completed by `chunk`, in order. */
  push(chunk: Uint8Array): (Uint8Array | OversizeLine)[] {
    const lines: (Uint8Array | OversizeLine)[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.#skipping) {
        this.#count(chunk.subarray(start, end));
        if (newline === -1) break;
        if (this.#measure) lines.push(this.#skipped);
        this.#skipping = false;
        start = newline + 1;
        continue;
      }
      const bytes = this.#partBytes + (end - start);
      if (bytes > this.maxLineBytes) {
        this.#refuse(chunk.subarray(start, end), lines);
        if (newline === -1) {
          this.#skipping = true;
          break;
        }
        if (this.#measure) lines.push(this.#skipped);
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

  /** The line being held passed the cap with `piece`: reported now, or measured from here. */
  #refuse(piece: Uint8Array, lines: (Uint8Array | OversizeLine)[]): void {
    if (this.#measure) {
      const parts = this.#parts;
      const head = firstBytes([...parts, piece], EDGE_BYTES);
      const tail = parts.reduce((kept, part) => lastBytes(kept, part, EDGE_BYTES), EMPTY);
      this.#skipped = { oversize: this.#partBytes, head, tail };
      this.clear();
      this.#count(piece);
      return;
    }
    lines.push({ oversize: this.#partBytes + piece.length });
    this.clear();
  }

  /** Bytes of an oversize line going by: counted, and its last EDGE_BYTES kept when measuring. */
  #count(piece: Uint8Array): void {
    if (!this.#measure) return;
    const skipped = this.#skipped;
    skipped.oversize += piece.length;
    skipped.tail = lastBytes(skipped.tail, piece, EDGE_BYTES);
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
    // A new array only when there was a part: most lines come whole, in one chunk.
    if (this.#parts.length > 0) this.#parts = [];
    this.#partBytes = 0;
  }
}

const EMPTY = new Uint8Array(0);

/** The first `max` bytes of `parts` joined, copied. */
function firstBytes(parts: Uint8Array[], max: number): Uint8Array {
  const taken: Uint8Array[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (bytes >= max) break;
    const piece = part.subarray(0, max - bytes);
    taken.push(piece);
    bytes += piece.length;
  }
  return concat(taken, bytes);
}

/** The last `max` bytes of `before` followed by `piece`, copied: the chunk is not kept alive. */
function lastBytes(before: Uint8Array, piece: Uint8Array, max: number): Uint8Array {
  if (piece.length >= max) return piece.slice(piece.length - max);
  const keep = Math.min(before.length, max - piece.length);
  return concat([before.subarray(before.length - keep), piece]);
}

function concat(
  parts: Uint8Array[],
  total = parts.reduce((sum, part) => sum + part.length, 0),
): Uint8Array {
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
    // The splitter's own array, each line made a frame in place: no second array a chunk.
    const lines: (Uint8Array | OversizeLine | Frame)[] = this.#lines.push(chunk);
    let frames = 0;
    for (const line of lines) {
      if (line instanceof Uint8Array) {
        const frame = this.decodeLine(line);
        if (frame !== undefined) lines[frames++] = frame;
      } else {
        const message = `frame exceeds ${this.maxFrameBytes} bytes`;
        lines[frames++] = refused("oversize", message, (line as OversizeLine).oversize);
      }
    }
    lines.length = frames;
    return lines as Frame[];
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

/**
 * One frame as text: the value as JSON, then "\n". JSON.stringify escapes every newline in
 * it. A Node socket writes text straight into its write request, where encodeFrame's bytes
 * are one more copy made first.
 */
export function frameText(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError("a frame must hold a JSON value");
  return json + "\n";
}

/** One frame as UTF-8 bytes (frameText's). */
export function encodeFrame(value: unknown): Uint8Array {
  return ENCODER.encode(frameText(value));
}
