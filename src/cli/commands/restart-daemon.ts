/**
 * `mcpool restart` with no server id: the daemon hands its socket and running servers to a new
 * daemon started from the installed code (src/daemon/handover/README.md), which is how an
 * upgrade takes effect without a cold start. Says what the new daemon took over, or why the
 * old one serves on (exit 1).
 */
import type { HandoverResult, PoolClient } from "mcpool-client";
import { withProgress } from "../output/progress.js";

export interface RestartIo {
  json: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
}

export function handoverText(result: HandoverResult): string {
  const lines = [
    `restarted: pid ${result.pid} serves now, ${result.adopted.length} servers handed over running${result.adopted.length > 0 ? ` (${result.adopted.join(", ")})` : ""}`,
  ];
  if (result.untaken.length > 0) {
    lines.push(`started again (their mcp.json entry changed): ${result.untaken.join(", ")}`);
  }
  if (result.cold !== undefined) {
    lines.push(`the new daemon started every server again: ${result.cold}`);
  }
  return lines.join("\n");
}

export async function restartDaemon(client: PoolClient, io: RestartIo): Promise<number> {
  const result = await withProgress("handing the servers to a new daemon", () => client.handover());
  io.out(io.json ? JSON.stringify(result, null, 2) : handoverText(result));
  return 0;
}
