/** `mcpool/testing`: helpers for testing against the pool without spawning anything. */
import { fileURLToPath } from "node:url";

export {
  echoServer,
  ECHO_TOOL_NAMES,
  type EchoServerOptions,
  type EchoToolName,
} from "./echo-server.js";
export { memoryTransport, memoryRow, type ServerBuilder } from "./memory-transport.js";
export { makePool } from "./make-pool.js";

/**
 * A stdio script serving the echo server's tools, for a test that wants a real child.
 * Always the built file: from sources (under a TypeScript runner) it points into dist.
 */
export const echoServerPath: string = fileURLToPath(
  new URL("./echo-server-bin.js", import.meta.url),
).replace(/([\\/])src\1testing\1/, "$1dist$1testing$1");
