import { describe, expect, it } from "vitest";

import {
  DEFAULT_MAX_FRAME_BYTES,
  EDGE_BYTES,
  FrameDecoder,
  LineSplitter,
  encodeFrame,
  type Frame,
  type OversizeLine,
} from "../src/codec.js";

const values = (frames: Frame[]): unknown[] =>
  frames.map((frame) => (frame.ok ? frame.value : { refused: frame.error.reason }));

describe("FrameDecoder", () => {
  it("holds a frame split across chunks until its newline arrives", () => {
    const decoder = new FrameDecoder();
    const bytes = encodeFrame({ jsonrpc: "2.0", id: 1, method: "hello" });
    expect(decoder.push(bytes.subarray(0, 5))).toEqual([]);
    expect(decoder.push(bytes.subarray(5, 20))).toEqual([]);
    expect(decoder.bufferedBytes).toBe(20);
    expect(values(decoder.push(bytes.subarray(20)))).toEqual([
      { jsonrpc: "2.0", id: 1, method: "hello" },
    ]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("decodes many frames from one chunk, in order, and keeps the tail for later", () => {
    const decoder = new FrameDecoder();
    const chunk = Buffer.concat([encodeFrame(1), encodeFrame("two"), encodeFrame({ three: 3 })]);
    const tail = encodeFrame([4]);
    expect(values(decoder.push(Buffer.concat([chunk, tail.subarray(0, 2)])))).toEqual([
      1,
      "two",
      { three: 3 },
    ]);
    expect(values(decoder.push(tail.subarray(2)))).toEqual([[4]]);
  });

  it("decodes a code point split across chunks, byte by byte", () => {
    const text = "é, 日本, 🎉 and 𝄞";
    const bytes = encodeFrame({ text });
    const decoder = new FrameDecoder();
    const frames: Frame[] = [];
    for (let i = 0; i < bytes.length; i++) frames.push(...decoder.push(bytes.subarray(i, i + 1)));
    expect(values(frames)).toEqual([{ text }]);
  });

  it("decodes an emoji split in the middle of its four bytes", () => {
    const bytes = encodeFrame("🎉");
    const emojiStart = bytes.indexOf(0xf0);
    const decoder = new FrameDecoder();
    expect(decoder.push(bytes.subarray(0, emojiStart + 2))).toEqual([]);
    expect(values(decoder.push(bytes.subarray(emojiStart + 2)))).toEqual(["🎉"]);
  });

  it("refuses a line as soon as its buffered bytes pass the cap, before any newline", () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    expect(decoder.push(Buffer.alloc(1000, 0x20))).toEqual([]);
    const frames = decoder.push(Buffer.alloc(100, 0x20));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ ok: false, error: { reason: "oversize", bytes: 1100 } });
    expect(decoder.bufferedBytes).toBe(0);
    // The rest of the refused line is skipped, never buffered; the next line decodes.
    expect(decoder.push(Buffer.alloc(64 * 1024, 0x61))).toEqual([]);
    expect(decoder.bufferedBytes).toBe(0);
    expect(values(decoder.push(Buffer.from('tail"\n{"next":true}\n')))).toEqual([{ next: true }]);
  });

  it("refuses an oversize line that arrives whole, and keeps the frames around it", () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 16 });
    const chunk = Buffer.from(`1\n"${"x".repeat(40)}"\n2\n`);
    expect(values(decoder.push(chunk))).toEqual([1, { refused: "oversize" }, 2]);
  });

  it("accepts a frame of exactly the cap", () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 10 });
    expect(values(decoder.push(Buffer.from('"12345678"\n')))).toEqual(["12345678"]);
  });

  it("reports a parse error for one frame and still decodes the next", () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.from('{"a":1}\n{not json\n{"b":2}\n'));
    expect(values(frames)).toEqual([{ a: 1 }, { refused: "parse" }, { b: 2 }]);
  });

  it("refuses invalid UTF-8 and NUL bytes as frames, not as the stream", () => {
    const decoder = new FrameDecoder();
    const chunk = Buffer.concat([
      Buffer.from([0x22, 0xc3, 0x28, 0x22, 0x0a]), // an invalid 2-byte sequence in a string
      Buffer.from([0x7b, 0x00, 0x7d, 0x0a]), // NUL where JSON allows none
      Buffer.from('"ok"\n'),
    ]);
    expect(values(decoder.push(chunk))).toEqual([
      { refused: "encoding" },
      { refused: "parse" },
      "ok",
    ]);
  });

  it("refuses nesting deeper than its bound without parsing it", () => {
    const decoder = new FrameDecoder({ maxDepth: 8 });
    const deep = "[".repeat(9) + "]".repeat(9);
    const fine = "[".repeat(8) + "]".repeat(8);
    const inString = JSON.stringify("[".repeat(100));
    expect(values(decoder.push(Buffer.from(`${deep}\n${fine}\n${inString}\n`)))).toEqual([
      { refused: "depth" },
      JSON.parse(fine),
      "[".repeat(100),
    ]);
  });

  it("skips blank lines and tolerates CRLF", () => {
    const decoder = new FrameDecoder();
    expect(values(decoder.push(Buffer.from('\n  \n{"a":1}\r\n\r\n')))).toEqual([{ a: 1 }]);
  });

  it("says when the stream ends inside a frame, and forgets it", () => {
    const decoder = new FrameDecoder();
    decoder.push(Buffer.from('{"half":'));
    expect(decoder.end()).toMatchObject({ reason: "truncated", bytes: 8 });
    expect(decoder.bufferedBytes).toBe(0);
    expect(decoder.end()).toBeUndefined();
  });

  it("caps frames at 16 MiB unless told otherwise", () => {
    expect(DEFAULT_MAX_FRAME_BYTES).toBe(16 * 1024 * 1024);
    expect(new FrameDecoder().maxFrameBytes).toBe(DEFAULT_MAX_FRAME_BYTES);
  });
});

describe("encodeFrame", () => {
  it("writes one line per value, whatever newlines the value holds", () => {
    const frame = encodeFrame({ text: "a\nb\u2028c" });
    expect(frame.indexOf(0x0a)).toBe(frame.length - 1);
    expect(values(new FrameDecoder().push(frame))).toEqual([{ text: "a\nb\u2028c" }]);
  });

  it("refuses what JSON cannot hold", () => {
    expect(() => encodeFrame(undefined)).toThrow(TypeError);
    expect(() => encodeFrame({ big: 1n })).toThrow(TypeError);
  });
});

describe("LineSplitter", () => {
  const text = (lines: (Uint8Array | { oversize: number })[]): unknown[] =>
    lines.map((line) => (line instanceof Uint8Array ? new TextDecoder().decode(line) : line));

  it("hands out whole lines as bytes, joining a line split across chunks", () => {
    const lines = new LineSplitter(64);
    expect(text(lines.push(new TextEncoder().encode("one\ntw")))).toEqual(["one"]);
    expect(lines.bufferedBytes).toBe(2);
    expect(text(lines.push(new TextEncoder().encode("o\n\nthree")))).toEqual(["two", ""]);
    expect(lines.end()).toBe(5);
    expect(lines.bufferedBytes).toBe(0);
  });

  it("holds at most the cap while a 40 MB frame streams through, and decodes the next frame whole", () => {
    const cap = 16 * 1024 * 1024;
    const decoder = new FrameDecoder({ maxFrameBytes: cap });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const frames: Frame[] = [];
    let most = 0;
    for (let sent = 0; sent < 40 * 1000 * 1000; sent += chunk.length) {
      frames.push(...decoder.push(chunk));
      most = Math.max(most, decoder.bufferedBytes);
    }
    frames.push(...decoder.push(Buffer.from('\n{"next":true}\n')));
    expect(most).toBeLessThanOrEqual(cap);
    expect(values(frames)).toEqual([{ refused: "oversize" }, { next: true }]);
  });

  it("reports an oversize line once, drops the rest of it unbuffered, and goes on", () => {
    const lines = new LineSplitter(4);
    expect(lines.push(new TextEncoder().encode("abc"))).toEqual([]);
    expect(lines.push(new TextEncoder().encode("defgh"))).toEqual([{ oversize: 8 }]);
    expect(lines.push(new TextEncoder().encode("ijklmnop"))).toEqual([]);
    expect(lines.bufferedBytes).toBe(0);
    expect(text(lines.push(new TextEncoder().encode("q\nok\n")))).toEqual(["ok"]);
  });

  it("measuring, reports an oversize line at its newline with every byte counted, its head and its tail", () => {
    const lines = new LineSplitter(1024, { measure: true });
    const encode = (s: string): Uint8Array => new TextEncoder().encode(s);
    const body = "x".repeat(EDGE_BYTES * 3);
    let most = 0;
    const seen = [];
    for (const piece of ['{"result":"', body, body, '","id":7}\n{"ok":1}\n']) {
      seen.push(...lines.push(encode(piece)));
      most = Math.max(most, lines.bufferedBytes);
    }
    expect(most).toBeLessThanOrEqual(1024);
    const length = 11 + 2 * body.length + 9;
    const [oversize, next] = seen as [Required<OversizeLine>, Uint8Array];
    expect(oversize.oversize).toBe(length);
    expect(new TextDecoder().decode(oversize.head)).toBe(`{"result":"${body}`.slice(0, EDGE_BYTES));
    expect(new TextDecoder().decode(oversize.tail)).toBe(`${body}","id":7}`.slice(-EDGE_BYTES));
    expect(new TextDecoder().decode(next)).toBe('{"ok":1}');
  });

  it("measuring, keeps the end of the held part in the tail when the line passes the cap at its newline", () => {
    const lines = new LineSplitter(8, { measure: true });
    const encode = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(lines.push(encode('{"id":3'))).toEqual([]);
    const [oversize] = lines.push(encode(',"x":1}\n')) as [Required<OversizeLine>];
    expect(oversize.oversize).toBe(14);
    expect(new TextDecoder().decode(oversize.tail)).toBe('{"id":3,"x":1}');
    expect(new TextDecoder().decode(oversize.head)).toBe('{"id":3,"x":1}');
  });
});
