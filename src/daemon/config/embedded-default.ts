/**
 * The embedded default (SPEC D6): with no `mcp.json`, the daemon writes a starter file
 * holding the package's own stdio echo server, so a new user's first `mcpool tools`
 * shows something real. Absolute paths: the daemon may run from any directory.
 */
import { echoServerPath } from "../../demo/echo-server-path.js";

export function starterConfig(
  node: string = process.execPath,
  script: string = echoServerPath,
): string {
  const echo = JSON.stringify({ command: node, args: [script], label: "Echo" });
  return [
    "{",
    "  // mcpool's starter configuration: its built-in echo server, so `mcpool tools` shows",
    "  // something. Add your servers beside it in the shape Claude Desktop, Cursor or",
    "  // VS Code use; the daemon applies every save. `mcpool validate` checks this file.",
    '  "mcpServers": {',
    `    "echo": ${echo}`,
    "  }",
    "}",
    "",
  ].join("\n");
}
