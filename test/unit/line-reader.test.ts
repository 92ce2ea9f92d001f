import { describe, expect, it } from "vitest";
import { LineReader, parseJsonRpcLine } from "../../src/pool/transport/line-reader.js";

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
