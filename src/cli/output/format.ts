/** Plain-text tables and durations for people; `--json` output bypasses all of this. */
import { terminalText } from "./terminal.js";

/**
 * Columns padded to their widest cell. Every cell is made safe first (terminal.ts): a name or
 * description a server sent is measured and shown as the text a person reads.
 */
export function table(headers: readonly string[], body: readonly (readonly string[])[]): string {
  const rows = body.map((row) => row.map((text) => terminalText(text)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400)
    return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d${Math.floor(s / 3600) % 24}h`;
}

/** The first line of a message, made safe and cut to fit a table cell. */
export function cell(text: string | undefined, max = 60): string {
  if (!text) return "";
  const first = terminalText(text.split("\n")[0] ?? "");
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}
