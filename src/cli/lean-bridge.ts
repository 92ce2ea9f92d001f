/**
 * The lean `mcpool bridge` (issue 20): with the daemon's MCP socket for the scope present,
 * `mcpool bridge [--server ID | --catalog[=auto]] [--socket PATH]` is a byte pipe — stdin to the socket, the
 * socket to stdout — that loads nothing but Node's net, fs and path: a host's session costs
 * a bare Node process, not Node plus the MCP SDK (bench P10). A socket absent or refusing
 * (no daemon yet, a daemon without MCP sockets), `--http` and `--servers` go to the full CLI,
 * which starts the daemon when needed and serves through the SDK bridge.
 */
import { existsSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { resolve } from "node:path";
// The client's paths.js alone (node:fs, os and path), not the client: one discovery for all.
import { defaultSocketPath } from "mcpool-client/paths";
import { mcpCatalogSocketPath, mcpSocketPath } from "../bridge/mcp-socket-paths.js";

/** The MCP socket a lean bridge pipes to, when argv asks for one it can serve; else undefined. */
export function leanBridgeSocket(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (argv[0] !== "bridge") return undefined;
  let server: string | undefined;
  let socket: string | undefined;
  let catalog: "on" | "auto" | undefined;
  for (let i = 1; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    // The pool's catalogue sockets (SPEC J1): `--catalog` takes no value, `--catalog=auto` its own.
    const mode = flag === "--catalog" ? "on" : flag === "--catalog=auto" ? "auto" : undefined;
    if (mode !== undefined) {
      if (catalog !== undefined) return undefined;
      catalog = mode;
      i -= 1;
      continue;
    }
    if (value === undefined || value.startsWith("-")) return undefined;
    if (flag === "--server" && server === undefined) server = value;
    else if (flag === "--socket" && socket === undefined) socket = value;
    else return undefined;
  }
  const daemon = resolve(socket ?? defaultSocketPath(env));
  if (catalog === undefined) return mcpSocketPath(daemon, server);
  // One server in catalogue mode has no socket of its own: the full CLI serves it.
  return server === undefined ? mcpCatalogSocketPath(daemon, catalog) : undefined;
}

/** Joins stdio to the connected socket until either end is done. */
function pipe(socket: Socket): void {
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
  // The daemon ended the session (or went away): nothing more will come.
  socket.once("close", () => process.stdout.end(() => process.exit(0)));
  // The host stopped reading: the session is over.
  process.stdout.once("error", () => process.exit(0));
}

/**
 * Pipes to the MCP socket argv names when it answers; else `fullCli()` (main.ts), which
 * reads argv itself.
 */
export function runLeanBridge(fullCli: () => void): void {
  const path = leanBridgeSocket(process.argv.slice(2), process.env);
  if (path === undefined || !existsSync(path)) {
    fullCli();
    return;
  }
  const socket = connect(path);
  const refused = (): void => {
    socket.destroy();
    fullCli();
  };
  socket.once("error", refused);
  socket.once("connect", () => {
    socket.off("error", refused);
    socket.on("error", () => process.exit(0));
    pipe(socket);
  });
}
