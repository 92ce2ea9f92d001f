/**
 * What `mcpool serve` runs beside the daemon: the MCP sockets (src/bridge/
 * mcp-sockets.ts), kept in step with the pool's servers. The daemon does not know its fronts;
 * this composition root hands the front the daemon's socket path and the pool's ids, and the
 * front reaches the pool through mcpool-client like any other.
 */
import type { Daemon } from "../../daemon/daemon.js";
import { startMcpSockets, type McpSockets } from "../../bridge/fronts/mcp-sockets.js";
import { VERSION } from "../../version.js";
import { coldRecorder } from "../../daemon/stores/cold-answers.js";

/**
 * The MCP sockets for a started daemon; undefined (said on `log`) when they cannot be made.
 * `inherited`: the listening sockets a previous daemon handed over, fd by scope.
 */
export async function startFronts(
  daemon: Daemon,
  log: (line: string) => void,
  inherited?: ReadonlyMap<string, number>,
): Promise<McpSockets | undefined> {
  try {
    return await startMcpSockets({
      daemonSocketPath: daemon.paths.socketPath,
      ...(inherited ? { inherited } : {}),
      serverIds: () => daemon.pool.state().map((server) => server.id),
      // The pool says when a reconcile changed its servers, and only then: a row added to
      // mcp.json gets its socket with that reconcile (not at the next pool event), and a
      // call, a connect or a list change costs the sockets nothing.
      onChange: (listener) => daemon.pool.onServersChanged(() => listener()),
      version: VERSION,
      // One cap for the daemon's socket and the MCP sockets' sessions.
      connections: daemon.connections,
      // What each server's hosts are answered first, for an entry that has to start us.
      opened: coldRecorder(daemon.paths.configPath, daemon.paths.dataDir, log),
      log,
    }).then((sockets) => {
      // Their folder went with the daemon's socket (a `/tmp` cleaner): they come back with it.
      daemon.onRenewed(() => {
        sockets.renew().catch((error: unknown) => {
          log(`mcpool: could not re-create the MCP sockets: ${(error as Error).message}`);
        });
      });
      return sockets;
    });
  } catch (error) {
    log(`mcpool: no MCP sockets (hosts use \`mcpool bridge\`): ${(error as Error).message}`);
    return undefined;
  }
}
