/**
 * The embedded default: with no `mcp.json`, the daemon writes a starter file
 * holding the package's own stdio echo server, so a new user's first `mcpool tools`
 * shows something real.
 *
 * The echo server is started as `mcpool echo-server` when the `mcpool` on the daemon's PATH
 * is this very package: a reinstall elsewhere (another prefix, another Node) moves the
 * package, and absolute paths written into the user's file would point at what is gone,
 * while the command on PATH follows the install. Run from a checkout, with no such `mcpool`
 * on PATH, the file names this Node and this package's script instead.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { echoServerPath } from "../../demo/echo-server-path.js";
import { onPath } from "../process/on-path.js";

/** How the starter file starts the echo server. */
export interface StarterEcho {
  command: string;
  args: string[];
}

/** This package's `mcpool` executable (package.json `bin`), two rooms up from here. */
const OWN_BIN = fileURLToPath(new URL("../../cli/bin.js", import.meta.url));

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** `mcpool echo-server` when PATH's `mcpool` is this package; else this Node and script. */
export function starterEcho(env: NodeJS.ProcessEnv = process.env): StarterEcho {
  const found = onPath("mcpool", env.PATH ?? "");
  const own = realpathOrUndefined(OWN_BIN);
  if (found !== undefined && own !== undefined && realpathOrUndefined(found) === own) {
    return { command: "mcpool", args: ["echo-server"] };
  }
  return { command: process.execPath, args: [echoServerPath] };
}

export function starterConfig(echo: StarterEcho = starterEcho()): string {
  const row = JSON.stringify({ ...echo, label: "Echo" });
  return [
    "{",
    "  // mcpool's starter configuration: its built-in echo server, so `mcpool tools` shows",
    "  // something. Add your servers beside it in the shape Claude Desktop, Cursor or",
    "  // VS Code use; the daemon applies every save. `mcpool validate` checks this file.",
    '  "mcpServers": {',
    `    "echo": ${row}`,
    "  }",
    "}",
    "",
  ].join("\n");
}
