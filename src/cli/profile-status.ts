/**
 * The lines `mcpool status` adds for the children that serve hosts with other capabilities
 * or roots than the pool's (SPEC I4, I5): per server, each child's pid, what it declared
 * and, for a per-project child, its roots. Roots are a host's text: made printable.
 */
import type { ServerState } from "mcpool-protocol";
import { terminalText } from "./output/terminal.js";

/** One line per child, under a heading; nothing when no server has one. */
export function profileLines(servers: readonly ServerState[]): string[] {
  const rows = servers.filter((s) => (s.profiles ?? []).length > 0);
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((s) => s.id.length));
  return [
    "",
    "children for host profiles",
    ...rows.flatMap((s) =>
      (s.profiles ?? []).map((child) => {
        const parts = [
          child.pid !== undefined ? `pid ${child.pid}` : child.status,
          `declares ${child.capabilities}`,
        ];
        if (child.roots !== undefined) {
          parts.push(
            `roots ${child.roots.map((root) => terminalText(root)).join(" ") || "(none)"}`,
          );
        }
        return `  ${s.id.padEnd(width)}  ${parts.join(", ")}`;
      }),
    ),
  ];
}
