/**
 * Frames: one JSON value per line of UTF-8, ended by "\n" (SPEC D2). Both sides use this.
 * Bytes are kept until their line is complete and only then decoded, so a code point split
 * across chunks survives. A line is refused as soon as its buffered bytes pass the cap and
 * skipped up to its newline, never held whole. A bad frame is reported on its own and the
 * frames after it still decode. The codec knows frames, not methods.
 */
import { isUtf8 } from "node:buffer";

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

const NEWLINE = 0x0a;

export class FrameDecoder {
  readonly maxFrameBytes: number;
  readonly maxDepth: number;
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Inside a line already refused as oversize: drop bytes up to its newline. */
  private skipping = false;

  constructor(options: FrameDecoderOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  }

  /** Bytes held for an incomplete line; never more than maxFrameBytes. */
  get bufferedBytes(): number {
    return this.partBytes;
  }

  /** The frames completed by `chunk`, in order, each decoded or refused on its own. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.skipping) {
        if (newline === -1) break;
        this.skipping = false;
        start = newline + 1;
        continue;
      }
      const bytes = this.partBytes + (end - start);
      if (bytes > this.maxFrameBytes) {
        frames.push(refused("oversize", `frame exceeds ${this.maxFrameBytes} bytes`, bytes));
        this.parts = [];
        this.partBytes = 0;
        if (newline === -1) {
          this.skipping = true;
          break;
        }
        start = newline + 1;
        continue;
      }
      if (newline === -1) {
        this.parts.push(chunk.subarray(start));
        this.partBytes = bytes;
        break;
      }
      const line =
        this.parts.length === 0
          ? chunk.subarray(start, newline)
          : Buffer.concat([...this.parts, chunk.subarray(start, newline)], bytes);
      this.parts = [];
      this.partBytes = 0;
      start = newline + 1;
      const frame = this.decodeLine(line);
      if (frame !== undefined) frames.push(frame);
    }
    return frames;
  }

  /** The stream ended: a refusal if a line was left incomplete. Drops what was held. */
  end(): FrameError | undefined {
    const bytes = this.partBytes;
    this.parts = [];
    this.partBytes = 0;
    this.skipping = false;
    if (bytes === 0) return undefined;
    return { reason: "truncated", message: `stream ended inside a ${bytes}-byte frame`, bytes };
  }

  private decodeLine(line: Buffer): Frame | undefined {
    if (isBlank(line)) return undefined;
    if (!isUtf8(line)) return refused("encoding", "frame is not valid UTF-8", line.length);
    if (line.length > this.maxDepth && nestsDeeperThan(line, this.maxDepth)) {
      return refused("depth", `frame nests deeper than ${this.maxDepth} levels`, line.length);
    }
    try {
      return { ok: true, value: JSON.parse(line.toString("utf8")) };
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
function isBlank(line: Buffer): boolean {
  for (const byte of line) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** Bracket depth outside strings. Multi-byte UTF-8 never contains ASCII bytes, so bytes do. */
function nestsDeeperThan(line: Buffer, max: number): boolean {
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
export function encodeFrame(value: unknown): Buffer {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError("a frame must hold a JSON value");
  return Buffer.from(json + "\n", "utf8");
}
