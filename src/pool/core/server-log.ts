/**
 * One server's lines in the pool's log. Every line about a server — connects,
 * exits, failed dials with their cause, restarts, removals, re-listings — goes through a
 * serverLog(), which writes it as `mcpool: <id>: <text>` and hands the id beside it. That
 * prefix is what `mcpool logs --server ID` keeps and what `--json` gives as `server`, so no
 * room writes it by hand: a line that names its server in other words is a line the filter
 * loses.
 */
import type { LogAbout, PoolLog } from "./types.js";

/** The log of one server: text without the prefix, which it adds. */
export interface ServerLog {
  info(text: string): void;
  error(text: string): void;
}

/** `text` as a line about `serverId`: the form the daemon's log is read back by. */
export function serverLine(serverId: string, text: string): string {
  return `mcpool: ${serverId}: ${text}`;
}

/** `log`, scoped to one server: each line tagged with its id, in the text and beside it. */
export function serverLog(log: PoolLog, serverId: string): ServerLog {
  const about: LogAbout = { server: serverId };
  return {
    info: (text) => log.info?.(serverLine(serverId, text), about),
    error: (text) => log.error?.(serverLine(serverId, text), about),
  };
}
