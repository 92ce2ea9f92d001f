/**
 * The text an MCP SDK client puts before a peer's JSON-RPC error message (`MCP error -32602: `,
 * the SDK's McpError), in one place for the pool, which gives its own errors that shape, and
 * the bridge, which sends a peer's error on as the peer said it.
 */

/** The prefix an SDK client's McpError gives the message of an error with `code`. */
export function mcpErrorPrefix(code: number): string {
  return `MCP error ${code}: `;
}

/** `message` without that prefix for `code`, where it has it: the peer's own words. */
export function withoutMcpPrefix(code: number, message: string): string {
  const prefix = mcpErrorPrefix(code);
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}
