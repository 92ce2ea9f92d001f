/**
 * The lines of `mcpool status` about the daemon's own limits: its
 * connection cap, when anything was refused or it is nearly full, and the data and state
 * folders it could not save to, with what that costs, and why its log file is not being
 * written when it is not. Nothing when all is well.
 */
import type { DaemonStatus } from "mcpool-protocol";
import { terminalText } from "./terminal.js";

/** Open connections past this share of the cap are shown even before any is refused. */
const NEAR_FULL = 0.8;

export function limitLines(status: DaemonStatus): string[] {
  const lines: string[] = [];
  const cap = status.connections;
  if (cap !== undefined && (cap.refused > 0 || cap.open >= cap.max * NEAR_FULL)) {
    const refused =
      cap.refused > 0
        ? `; ${cap.refused} refused since start (close some, or raise mcpool.maxConnections)`
        : "";
    lines.push(`limits  ${cap.open} of ${cap.max} connections open${refused}`);
  }
  for (const problem of status.saveProblems ?? []) {
    lines.push(`saving  cannot save to ${problem.folder} (${problem.code}): ${problem.effect}`);
  }
  if (status.log?.problem !== undefined) lines.push(`log     not written: ${status.log.problem}`);
  return lines.map((line) => terminalText(line));
}
