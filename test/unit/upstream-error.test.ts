/**
 * An answer over the frame cap, as the caller is told of it: "the tool ran" only for a tool
 * call; a resource read or a prompt ran nothing the caller asked to be done.
 */
import { describe, expect, it } from "vitest";
import { upstreamError } from "../../src/pool/calls/upstream-error.js";
import { ErrorCode, McpError } from "../../src/pool/core/mcp-error.js";
import { AnswerTooLarge } from "../../src/pool/transport/line-reader.js";

const tooLarge = (): McpError =>
  new McpError(ErrorCode.InternalError, "dropped", new AnswerTooLarge(40_000_077, 16_777_216));

describe("answer-too-large, as the caller is told", () => {
  it("says the tool ran for a call", () => {
    const error = upstreamError(tooLarge(), {
      serverId: "big",
      what: 'call to "text"',
      toolCall: true,
      timeoutMs: undefined,
    }) as Error;
    expect(error.message).toMatch(
      /answered the call to "text" with 40000077 bytes.*; the tool ran: ask it for less$/,
    );
  });

  it("says no tool ran for a resource read", () => {
    const error = upstreamError(tooLarge(), {
      serverId: "big",
      what: "resources/read",
      timeoutMs: undefined,
    }) as Error;
    expect(error.message).toMatch(/answered the resources\/read with 40000077 bytes/);
    expect(error.message).not.toMatch(/tool/);
  });
});
