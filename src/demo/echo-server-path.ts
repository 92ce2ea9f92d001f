/**
 * Where the echo server's stdio script is, for production code that starts it as a child
 * (the daemon's starter `mcp.json`, `mcpool demo`). This module imports nothing of the MCP
 * SDK: naming the script must not load the SDK's server into the process that names it.
 */
import { fileURLToPath } from "node:url";

/**
 * A stdio script serving the echo server's tools, for a test or a demo that wants a real
 * child. Always the built file: from sources (under a TypeScript runner) it points into dist.
 */
export const echoServerPath: string = fileURLToPath(
  new URL("./echo-server-bin.js", import.meta.url),
).replace(/([\\/])src\1demo\1/, "$1dist$1demo$1");
