/**
 * The embedded default (SPEC D6): with no `mcp.json`, the daemon writes a starter file
 * holding the package's own stdio echo server, so a new user's first `mcpool tools`
 * shows something real. Absolute paths: the daemon may run from any directory.
 */
import { echoServerPath } from "../testing/index.js";

export function starterConfig(
  node: string = process.execPath,
  script: string = echoServerPath,
): string {
  return `${JSON.stringify(
    {
      mcpServers: {
        echo: {
          command: node,
          args: [script],
          label: "Echo (mcpool demo server; replace me with your own servers)",
        },
      },
    },
    null,
    2,
  )}\n`;
}
