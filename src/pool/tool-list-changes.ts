/**
 * How one of a row's connections — the row's own, or a host profile's child of it
 * (host-profiles.ts) — tells the hosts it serves that its tool list changed: once it has
 * listed again and found the list changed (its `tools-changed`), not as its server sends it,
 * for a host told at once would list the old tools. Said as that connection's notification,
 * so it reaches only the hosts that connection serves (the daemon's connection-hosts.ts), as
 * direct a host hears only its own server process; the `tools-changed` event itself stays the
 * pool's, for what the pool keeps (the result cache, the catalogue). A pool that does not
 * list (`indexTools: false`, a consumer proxying the protocol) never lists again: there the
 * server's own notification goes on as it came.
 */
import type { Connection } from "./server/connection.js";
import type { EntryContext } from "./server/context.js";
import type { PoolEvent, ServerNotification } from "./core/types.js";

/** The notification a connection's changed tool list is said with. */
export const TOOLS_LIST_CHANGED = {
  method: "notifications/tools/list_changed",
} as const satisfies ServerNotification;

export interface ToolListChanges {
  /** An event of the connection's entry: a `tools-changed` is said to its hosts. */
  emitted(event: PoolEvent): void;
  /** A notification its server sent: passed on, but for a tool list change said later. */
  notify(serverId: string, notification: ServerNotification, connection: Connection): void;
}

/**
 * The tool list changes of the connections of `key` (undefined: the rows' own), passed to
 * `notify` (the pool's); `live(serverId)`: that entry's connection now.
 */
export function toolListChanges(
  notify: EntryContext["notify"],
  live: (serverId: string) => Connection | undefined,
  relists: boolean,
  key?: string,
): ToolListChanges {
  return {
    emitted: (event) => {
      if (event.type !== "tools-changed") return;
      const connection = live(event.serverId);
      if (connection !== undefined) notify(event.serverId, TOOLS_LIST_CHANGED, connection, key);
    },
    notify: (serverId, notification, connection) => {
      if (relists && notification.method === TOOLS_LIST_CHANGED.method) return;
      notify(serverId, notification, connection, key);
    },
  };
}
