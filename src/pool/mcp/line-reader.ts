/**
 * Newline-delimited JSON-RPC from a child's stdout. The SDK's ReadBuffer concatenates
 * every chunk into one buffer and runs a zod schema over every message; on the hot path
 * (one call = one line each way) that schema was the largest single cost the profile
 * showed in the daemon (bench/README.md). This keeps the same framing, the protocol's
 * LineSplitter (the one newline framing of the tree: UTF-8 lines split on bytes, so a
 * character split across chunks decodes whole), with a structural check in place of the
 * schema: the SDK's Protocol validates each request and result it handles.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "mcpool-protocol";

export class LineReader {
  readonly #lines: LineSplitter;

  constructor(maxLineBytes: number) {
    this.#lines = new LineSplitter(maxLineBytes);
  }

  /** The complete lines this chunk finishes; throws when a line outgrows the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    for (const line of this.#lines.push(chunk)) {
      if (!(line instanceof Uint8Array)) {
        this.clear();
        throw new Error(`a stdout line grew past ${this.#lines.maxLineBytes} bytes`);
      }
      lines.push(textOf(line).replace(/\r$/, ""));
    }
    return lines;
  }

  /** Forgets the incomplete line, and that one was being skipped: the next byte starts a line. */
  clear(): void {
    this.#lines.end();
  }
}

/** A line as text, as Buffer decodes it (a bad sequence becomes U+FFFD, a BOM stays). */
function textOf(line: Uint8Array): string {
  return Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString("utf8");
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
