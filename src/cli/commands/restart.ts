/**
 * `mcpool restart ID` restarts one server (as `stop ID` stops it, servers.ts). `mcpool
 * restart` with no ID hands the daemon's socket and running servers to a new daemon started
 * from the installed code (src/daemon/handover/README.md): how an upgrade takes effect without
 * a cold start. It says what the new daemon took over, or why the old one serves on (exit 1).
 */
import type { HandoverResult } from "mcpool-client";
import { EXIT } from "../output/exit-codes.js";
import { withProgress } from "../output/progress.js";
import type { CommandContext } from "./context.js";
import { stopCommand } from "./servers.js";

export function handoverText(result: HandoverResult): string {
  const adopted = result.adopted.length > 0 ? ` (${result.adopted.join(", ")})` : "";
  const lines = [
    `restarted: pid ${result.pid} serves now, ${result.adopted.length} servers handed over running${adopted}`,
  ];
  const children = result.children ?? [];
  if (children.length > 0) {
    lines.push(`and ${children.length} other children: ${children.join(", ")}`);
  }
  if (result.untaken.length > 0) {
    lines.push(`started again (their mcp.json entry changed): ${result.untaken.join(", ")}`);
  }
  if (result.cold !== undefined) {
    lines.push(`the new daemon started every server again: ${result.cold}`);
  }
  return lines.join("\n");
}

export function restartCommand(context: CommandContext): Promise<number> {
  if (context.args[0] !== undefined) return stopCommand(context);
  return context.withClient(async (client) => {
    const result = await withProgress("handing the servers to a new daemon", () =>
      client.handover(),
    );
    context.print(result, () => handoverText(result));
    return EXIT.ok;
  });
}
