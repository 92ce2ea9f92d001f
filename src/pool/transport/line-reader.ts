/**
 * Newline-delimited JSON-RPC from a child's stdout. The SDK's ReadBuffer concatenates
 * every chunk into one buffer and runs a zod schema over every message; on the hot path
 * (one call = one line each way) that schema was the largest single cost the profile
 * showed in the daemon (bench/README.md). This keeps the same framing, the protocol's
 * LineSplitter (the one newline framing of the tree: UTF-8 lines split on bytes, so a
 * character split across chunks decodes whole), with a structural check in place of the
 * schema: the SDK's Protocol validates each request and result it handles.
 */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_MAX_FRAME_BYTES, LineSplitter, type OversizeLine } from "mcpool-protocol";
import { ErrorCode } from "../core/mcp-error.js";

/** A line over the cap, measured to its newline: its bytes, first and last bytes. */
export type MeasuredLine = Required<OversizeLine>;

export class LineReader {
  readonly #lines: LineSplitter;

  /** A line longer than `maxLineBytes` is counted and dropped as it arrives, never held. */
  constructor(maxLineBytes: number) {
    this.#lines = new LineSplitter(maxLineBytes, { measure: true });
  }

  get maxLineBytes(): number {
    return this.#lines.maxLineBytes;
  }

  /** Bytes held for the incomplete line; never more than the cap. */
  get bufferedBytes(): number {
    return this.#lines.bufferedBytes;
  }

  /** The oversize line being dropped, as counted so far; undefined when none is. */
  get dropping(): Readonly<MeasuredLine> | undefined {
    return this.#lines.dropping;
  }

  /** The lines this chunk finishes: each as text, or measured when it was over the cap. */
  push(chunk: Buffer): (string | MeasuredLine)[] {
    // The splitter's own array, each line made text in place: no second array a chunk.
    const lines: (Uint8Array | string | OversizeLine)[] = this.#lines.push(chunk);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line instanceof Uint8Array) lines[i] = textOf(line);
    }
    return lines as (string | MeasuredLine)[];
  }

  /** Forgets the incomplete line, and that one was being skipped: the next byte starts a line. */
  clear(): void {
    this.#lines.end();
  }
}

/**
 * A line as text, as Buffer decodes it (a bad sequence becomes U+FFFD, a BOM stays), without
 * a last carriage return. A line cut from one chunk is a Buffer already, decoded as it is.
 */
function textOf(line: Uint8Array): string {
  const end = line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
  if (line instanceof Buffer) return line.toString("utf8", 0, end);
  return Buffer.from(line.buffer, line.byteOffset, end).toString("utf8");
}

/** The message a line holds, or undefined when it is not JSON-RPC 2.0 at all. */
export function parseJsonRpcLine(line: string): JSONRPCMessage | undefined {
  if (line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== "2.0") return undefined;
  const hasId = typeof message.id === "string" || typeof message.id === "number";
  if (typeof message.method === "string") return message as JSONRPCMessage;
  if (hasId && ("result" in message || "error" in message)) return message as JSONRPCMessage;
  return undefined;
}

// ── A line over the cap ──

/*
 * A server's message over the frame cap is refused as it arrives and never held whole: the
 * reader counts its bytes and keeps only its first and last few hundred (LineSplitter's
 * measuring mode). From those this tells what it was — the answer to one of our requests
 * (its id), or a request or notification of the server's — so the answer's caller is
 * refused at once with the size measured, and the connection reads on.
 *
 * Only the outermost object's keys count: the head is read key by key from its start, and
 * the tail is taken only when it ends `"id": <scalar> }`, the last key of that object.
 */

/** The largest message read from a server, bytes: the frame cap an agent's answer must fit. */
export const MAX_MESSAGE_BYTES = DEFAULT_MAX_FRAME_BYTES;

/**
 * The `data` of the error an oversize answer's request is rejected with. A class, so only
 * the reader can make one: no server can forge it through JSON.
 */
export class AnswerTooLarge {
  constructor(
    /** Bytes of the answer, counted to its end. */
    readonly bytes: number,
    /** The cap it passed, bytes. */
    readonly maxBytes: number,
  ) {}
}

/** What an oversize message was, as far as its first and last bytes tell. */
/** A message of the server's carries `id` when it is a request and its head holds the id. */
type OversizeKind =
  | { kind: "answer"; id: RequestId }
  | { kind: "message"; method: string; id?: RequestId }
  | { kind: "unknown" };

/** Whether a line's first bytes open a JSON object: what a JSON-RPC message is. */
export function opensObject(head: Uint8Array): boolean {
  for (const byte of head) {
    if (byte === 0x7b) return true;
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return false;
}

/** Reads an oversize message from its `head` (first bytes) and `tail` (last bytes). */
export function oversizeKind(head: Uint8Array, tail: Uint8Array): OversizeKind {
  const text = latin1(head);
  if (!/^\s*\{/.test(text)) return { kind: "unknown" };
  const top = topKeys(text);
  const id = top.id ?? lastId(latin1(tail));
  if (top.method !== undefined) {
    // The SDK writes a request's id last: its head names the method, its tail the id.
    return { kind: "message", method: top.method, ...(id === undefined ? {} : { id }) };
  }
  return id === undefined ? { kind: "unknown" } : { kind: "answer", id };
}

/** What a server is answered for its request `id` that came over the cap, dropped unread. */
export function tooLargeRequest(id: RequestId, bytes: number, maxBytes: number): JSONRPCMessage {
  const message = `the request is ${bytes} bytes, over the ${maxBytes}-byte cap: dropped unread`;
  return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message } };
}

/** The error answer that stands for an oversize answer to request `id`. */
export function tooLargeAnswer(id: RequestId, bytes: number, maxBytes: number): JSONRPCMessage {
  const message = `the answer is ${bytes} bytes, over the ${maxBytes}-byte cap: dropped as it arrived, unread`;
  const error = {
    code: ErrorCode.InternalError,
    message,
    data: new AnswerTooLarge(bytes, maxBytes),
  };
  return { jsonrpc: "2.0", id, error } as JSONRPCMessage;
}

/**
 * Bytes as text one char per byte: multi-byte UTF-8 never holds an ASCII byte, so JSON's structure
 * reads the same.
 */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

const SCALAR = /^(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*")/;
const LAST_ID = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

/**
 * A JSON scalar's text as its value; undefined when JSON does not accept it. The
 * `SCALAR` pattern lets through escapes and raw control bytes JSON refuses (`"\q"`),
 * and the head is a server's bytes: never let them throw.
 */
function valueOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A JSON scalar's text as an id: a string or an integer; undefined for anything else. */
function idOf(text: string): RequestId | undefined {
  const value = valueOf(text);
  if (typeof value === "string") return value;
  return Number.isSafeInteger(value) ? (value as number) : undefined;
}

/** The outermost object's `id` and `method`, as far as the head holds them. */
function topKeys(head: string): { id?: RequestId; method?: string } {
  const found: { id?: RequestId; method?: string } = {};
  let at = head.indexOf("{") + 1;
  let depth = 1;
  let expectKey = true;
  while (at < head.length && depth > 0) {
    const char = head[at]!;
    if (char === '"') {
      const string = SCALAR.exec(head.slice(at))?.[0];
      if (string === undefined) return found;
      at += string.length;
      if (depth !== 1 || !expectKey) continue;
      const key = valueOf(string);
      if (typeof key !== "string") return found;
      const colon = /^\s*:\s*/.exec(head.slice(at));
      if (colon === null) return found;
      at += colon[0].length;
      expectKey = false;
      if (key !== "id" && key !== "method") continue;
      const scalar = SCALAR.exec(head.slice(at))?.[0];
      if (scalar === undefined) continue;
      const id = key === "id" ? idOf(scalar) : undefined;
      if (id !== undefined) found.id = id;
      else if (key === "method") {
        const method = valueOf(scalar);
        if (typeof method === "string") found.method = method;
      }
      at += scalar.length;
      continue;
    }
    if (char === "{" || char === "[") depth++;
    else if (char === "}" || char === "]") depth--;
    else if (char === "," && depth === 1) expectKey = true;
    at++;
  }
  return found;
}

/** The id when the tail ends with it as the outermost object's last key. */
function lastId(tail: string): RequestId | undefined {
  const match = LAST_ID.exec(tail);
  return match ? idOf(match[1]!) : undefined;
}

/**
 * What a successor daemon must read first of a child's stdout (handOff()): the bytes since
 * the last newline, while that line is under the cap. A line past the cap is being dropped:
 * none of it is kept, not even the part that comes after the cap was passed (it is the middle
 * of a line, not the start of one), and the successor is told to drop up to the next newline.
 */
export class LineTail {
  #chunks: Buffer[] = [];
  #bytes = 0;
  /** The line under way passed the cap: nothing of it is kept until its newline. */
  #dropped = false;

  constructor(readonly maxBytes: number) {}

  keep(chunk: Buffer): void {
    const newline = chunk.lastIndexOf(10);
    if (newline >= 0) {
      if (newline + 1 < chunk.length) this.#chunks = [chunk.subarray(newline + 1)];
      else if (this.#chunks.length > 0) this.#chunks = [];
      this.#bytes = chunk.length - newline - 1;
      this.#dropped = this.#bytes > this.maxBytes;
      if (this.#dropped) this.#chunks = [];
    } else if (!this.#dropped && this.#bytes + chunk.length <= this.maxBytes) {
      this.#chunks.push(chunk);
      this.#bytes += chunk.length;
    } else {
      this.#chunks = [];
      this.#bytes = 0;
      this.#dropped = true;
    }
  }

  /** The bytes a successor reads first (base64), and whether it drops up to a newline first. */
  handed(): { unread: string; skipToNewline?: true } {
    const unread = Buffer.concat(this.#chunks).toString("base64");
    return this.#dropped ? { unread, skipToNewline: true } : { unread };
  }
}

/**
 * A successor's reading of a child whose predecessor was dropping an oversize line: every
 * chunk goes to `read`, but for the rest of that line (up to its newline), given to `dropped`
 * in byte counts. With `skip` false, `read` itself.
 */
export function afterDroppedLine(
  skip: boolean,
  read: (chunk: Buffer) => void,
  dropped: (bytes: number) => void,
): (chunk: Buffer) => void {
  let skipping = skip;
  let bytes = 0;
  return (chunk) => {
    if (skipping) {
      const newline = chunk.indexOf(10);
      bytes += newline < 0 ? chunk.length : newline + 1;
      if (newline < 0) return;
      skipping = false;
      dropped(bytes);
      chunk = chunk.subarray(newline + 1);
      if (chunk.length === 0) return;
    }
    read(chunk);
  };
}
