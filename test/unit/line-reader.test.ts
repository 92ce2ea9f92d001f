import { describe, expect, it } from "vitest";
import {
  afterDroppedLine,
  LineReader,
  LineTail,
  parseJsonRpcLine,
} from "../../src/pool/transport/line-reader.js";

describe("LineReader", () => {
  it("splits many lines per chunk and joins a line split across chunks", () => {
    const reader = new LineReader(1024);
    expect(reader.push(Buffer.from("a\nb\r\nc"))).toEqual(["a", "b"]);
    expect(reader.push(Buffer.from("d"))).toEqual([]);
    expect(reader.push(Buffer.from("e\n"))).toEqual(["cde"]);
  });

  it("decodes a character split across chunk boundaries exactly", () => {
    const bytes = Buffer.from("é🙂\n");
    const reader = new LineReader(1024);
    const lines = [...bytes].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(lines).toEqual(["é🙂"]);
  });

  it("measures a 40 MB line without holding more than its cap, then reads the next line whole", () => {
    const cap = 16 * 1024 * 1024;
    const reader = new LineReader(cap);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const lines: unknown[] = [];
    let most = 0;
    let sent = 0;
    for (; sent < 40 * 1000 * 1000; sent += chunk.length) {
      lines.push(...reader.push(chunk));
      most = Math.max(most, reader.bufferedBytes);
    }
    lines.push(...reader.push(Buffer.from('\n{"jsonrpc":"2.0","id":2,"result":{}}\n')));
    expect(most).toBeLessThanOrEqual(cap);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ oversize: sent });
    expect(lines[1]).toBe('{"jsonrpc":"2.0","id":2,"result":{}}');
  });
});

describe("parseJsonRpcLine", () => {
  it("takes requests, notifications and responses", () => {
    expect(parseJsonRpcLine('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toMatchObject({
      method: "ping",
    });
    expect(parseJsonRpcLine('{"jsonrpc":"2.0","method":"notifications/x"}')).toMatchObject({
      method: "notifications/x",
    });
    expect(parseJsonRpcLine('{"jsonrpc":"2.0","id":"a","result":{}}')).toMatchObject({ id: "a" });
    expect(
      parseJsonRpcLine('{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}'),
    ).toMatchObject({ id: 2 });
  });

  it("skips what is not JSON-RPC 2.0", () => {
    for (const junk of [
      "this is not json",
      '{"half":',
      "[1,2]",
      "null",
      '{"jsonrpc":"1.0","method":"x"}',
      '{"jsonrpc":"2.0","id":1}',
      "",
    ]) {
      expect(parseJsonRpcLine(junk)).toBeUndefined();
    }
  });
});

describe("LineTail: what a successor daemon reads first of a child's stdout", () => {
  const chunk = (text: string): Buffer => Buffer.from(text);
  const unread = (tail: LineTail): string => Buffer.from(tail.handed().unread, "base64").toString();

  it("hands over the line under way, while it is under the cap", () => {
    const tail = new LineTail(16);
    tail.keep(chunk('{"a":1}\n{"b"'));
    tail.keep(chunk(":2"));
    expect(unread(tail)).toBe('{"b":2');
    expect(tail.handed().skipToNewline).toBeUndefined();
  });

  it("hands over nothing of a line past the cap, not its middle, and says to drop to its newline", () => {
    const tail = new LineTail(16);
    tail.keep(chunk('{"a":1}\n{"result":"xxxx'));
    tail.keep(chunk("x".repeat(20)));
    // The rest of the dropped line, each chunk small enough to fit under the cap again.
    tail.keep(chunk("xxxx"));
    tail.keep(chunk("xxxx"));
    expect(tail.handed()).toEqual({ unread: "", skipToNewline: true });
    tail.keep(chunk('x"}\n{"c"'));
    expect(tail.handed()).toEqual({ unread: Buffer.from('{"c"').toString("base64") });
  });

  it("a successor drops the rest of that line, then reads on", () => {
    const read: string[] = [];
    const dropped: number[] = [];
    const feed = afterDroppedLine(
      true,
      (c) => read.push(c.toString()),
      (bytes) => dropped.push(bytes),
    );
    feed(chunk("xxxx"));
    feed(chunk('x"}\n{"c"'));
    feed(chunk(":3}\n"));
    expect(read).toEqual(['{"c"', ":3}\n"]);
    expect(dropped).toEqual([8]);
  });
});
