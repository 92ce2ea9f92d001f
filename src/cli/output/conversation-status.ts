/**
 * The lines `mcpool status` adds for `session: "conversation"` rows: counts per
 * server, never who the conversations are for.
 */
import type { ServerState } from "mcpool-protocol";

/** One line per conversation row, under a heading; nothing when there is none. */
export function conversationLines(servers: readonly ServerState[]): string[] {
  const rows = servers.filter((s) => s.conversations !== undefined);
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map((s) => s.id.length));
  return [
    "",
    "conversations",
    ...rows.map((s) => {
      const c = s.conversations!;
      const parts = [
        `${c.clients} open (${c.inUse} in use, ${c.idle} idle${c.opening > 0 ? `, ${c.opening} opening` : ""})`,
        `${c.ending} ending`,
        `${c.operations} operations`,
        `${c.leases} leases`,
      ];
      if (c.unsettled > 0) parts.push(`${c.unsettled} unsettled`);
      if (c.unresolvedEndings > 0) parts.push(`${c.unresolvedEndings} unresolved endings`);
      return `  ${s.id.padEnd(width)}  ${parts.join(", ")}`;
    }),
  ];
}
