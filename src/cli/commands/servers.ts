/**
 * What the daemon is asked to do to its servers and to itself: `probe ID` (dial a
 * configured server afresh), `stop ID` and `restart ID`, `reload` (re-read mcp.json) and
 * `shutdown` (stop the daemon, also one whose socket was removed).
 */
import { McpPoolError } from "mcpool-protocol";
import { EXIT } from "../output/exit-codes.js";
import { stoppedMessage } from "../output/messages.js";
import { withProgress } from "../output/progress.js";
import { errorText, terminalText } from "../output/terminal.js";
import type { CommandContext } from "./context.js";

/** `mcpool probe ID`: exit 1 when the server fails. */
export function probeCommand(context: CommandContext): Promise<number> {
  const id = context.arg(0, "server ID");
  return context.withClient(async (client) => {
    const state = (await client.state({ secrets: true })).find((s) => s.id === id);
    if (!state) throw new McpPoolError("unknown-server", `unknown server "${id}"`);
    const result = await withProgress(`probing ${id}`, () => client.probe(state.config));
    context.print(result, () =>
      result.ok
        ? [
            `${id}: ok, ${result.tools.length} tools`,
            ...result.tools.map((t) => `  ${t.name}`),
          ].join("\n")
        : `${id}: FAILED\n${errorText(result.error ?? "")}`,
    );
    return result.ok ? EXIT.ok : EXIT.failed;
  });
}

/** `mcpool stop ID` and `mcpool restart ID`. */
export function stopCommand(context: CommandContext): Promise<number> {
  const id = context.arg(0, "server ID");
  const stop = context.name === "stop";
  return context.withClient(async (client) => {
    if (stop) await client.stop(id);
    else await withProgress(`restarting ${id}`, () => client.reconnect(id));
    context.print({ ok: true }, () => (stop ? stoppedMessage(id) : `${id}: restarted`));
    return EXIT.ok;
  });
}

/** `mcpool reload`: exit 2 when mcp.json does not parse. */
export function reloadCommand(context: CommandContext): Promise<number> {
  return context.withClient(async (client) => {
    const config = await withProgress("reloading", () => client.reload());
    context.print(config, () =>
      config.ok
        ? [
            `reloaded ${config.path}`,
            ...config.problems.map((p) => `problem: ${terminalText(p)}`),
          ].join("\n")
        : `${config.path}: ${config.error}; the last good configuration keeps running`,
    );
    return config.ok ? EXIT.ok : EXIT.badInput;
  });
}

/** `mcpool shutdown`: a daemon whose socket was removed is found by its record and stopped. */
export function shutdownCommand(context: CommandContext): Promise<number> {
  return context
    .withClient(async (client) => {
      await client.shutdown();
      context.print({ ok: true }, () => "the daemon is shutting down");
      return EXIT.ok;
    })
    .catch(async (error: unknown) => {
      const lost = await import("./lost-socket.js");
      const d = lost.socketlessDaemon(error, context.target());
      if (d === undefined) throw error;
      return lost.shutdownWithoutSocket(d, context.print, context.err);
    });
}
