/** `mcpool/testing`: helpers for testing against the pool without spawning anything. */
export {
  echoServer,
  ECHO_TOOL_NAMES,
  type EchoServerOptions,
  type EchoToolName,
} from "../demo/echo-server.js";
export { echoServerPath } from "../demo/echo-server-path.js";
export { memoryTransport, memoryRow, type ServerBuilder } from "./memory-transport.js";
export { makePool } from "./make-pool.js";
