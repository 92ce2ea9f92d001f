import { describe, expect, it } from "vitest";
import { oversizeKind } from "../../src/pool/transport/line-reader.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
/** What a measuring reader keeps of `line`: its first and last `edge` bytes. */
const edges = (line: string, edge = 64): [Uint8Array, Uint8Array] => [
  bytes(line.slice(0, edge)),
  bytes(line.slice(-edge)),
];
const filler = "x".repeat(1000);

describe("oversizeKind", () => {
  it("finds the id at the end of an answer the SDK serialised (result first, id last)", () => {
    const line = `{"result":{"content":[{"type":"text","text":"${filler}"}]},"jsonrpc":"2.0","id":42}`;
    expect(oversizeKind(...edges(line))).toEqual({ kind: "answer", id: 42 });
  });

  it("finds the id at the start, a string id, and an error answer", () => {
    const line = `{"jsonrpc":"2.0","id":"req-7","error":{"code":1,"message":"${filler}"}}`;
    expect(oversizeKind(...edges(line))).toEqual({ kind: "answer", id: "req-7" });
  });

  it("takes no id from inside the result, at either end", () => {
    const nested = `{"result":{"id":5,"text":"${filler}","more":{"id":6}}}`;
    expect(oversizeKind(...edges(nested))).toEqual({ kind: "unknown" });
    const quoted = `{"result":{"text":"${filler} \\"id\\":9}"}}`;
    expect(oversizeKind(...edges(quoted))).toEqual({ kind: "unknown" });
  });

  it("tells a request or notification of the server's by its method", () => {
    const note = `{"method":"notifications/message","params":{"data":"${filler}"},"jsonrpc":"2.0"}`;
    expect(oversizeKind(...edges(note))).toEqual({
      kind: "message",
      method: "notifications/message",
    });
    const request = `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"x":"${filler}"}}`;
    expect(oversizeKind(...edges(request))).toEqual({
      kind: "message",
      method: "sampling/createMessage",
      id: 3,
    });
    // As the SDK writes a request: method first, id last.
    const sdk = `{"method":"ping","params":{"pad":"${filler}"},"jsonrpc":"2.0","id":"s-1"}`;
    expect(oversizeKind(...edges(sdk))).toEqual({ kind: "message", method: "ping", id: "s-1" });
  });

  it("never throws on a key or method JSON does not accept, and reads what it can", () => {
    for (const bad of ['"\\q"', '"\\u12"', '"a\tb"']) {
      const key = `{${bad}:1,"jsonrpc":"2.0","result":{"text":"${filler}"},"id":3}`;
      expect(oversizeKind(...edges(key))).toEqual({ kind: "answer", id: 3 });
      const method = `{"jsonrpc":"2.0","method":${bad},"params":{"x":"${filler}"}}`;
      expect(oversizeKind(...edges(method))).toEqual({ kind: "unknown" });
    }
  });

  it("says unknown for what is not a JSON object", () => {
    expect(oversizeKind(...edges(`${filler}"id":1}`))).toEqual({ kind: "unknown" });
  });
});
