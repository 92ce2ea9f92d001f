/**
 * Newline-delimited JSON-RPC from a child's stdout. The SDK's ReadBuffer concatenates
 * every chunk into one buffer and runs a zod schema over every message; on the hot path
 * (one call = one line each way) that schema was the largest single cost the profile
 * showed in the daemon (bench/README.md). This keeps the same framing — UTF-8 lines split
 * on bytes, so a character split across chunks decodes whole — with a structural check in
 * place of the schema: the SDK's Protocol validates each request and result it handles.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export class LineReader {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  readonly #maxLineBytes: number;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** The complete lines this chunk finishes; throws when a line outgrows the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const tail = chunk.subarray(start, newline);
      const bytes =
        this.#pendingBytes === 0
          ? tail
          : Buffer.concat([...this.#pending, tail], this.#pendingBytes + tail.length);
      this.#pending = [];
      this.#pendingBytes = 0;
      lines.push(bytes.toString("utf8").replace(/\r$/, ""));
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > this.#maxLineBytes) {
        this.clear();
        throw new Error(`a stdout line grew past ${this.#maxLineBytes} bytes`);
      }
      this.#pending.push(chunk.subarray(start));
    }
    return lines;
  }

  clear(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
  }
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
