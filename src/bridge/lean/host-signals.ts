/**
 * The lines an MCP socket carries beside MCP itself, all JSON-RPC notifications, which a
 * receiver that does not know them ignores (JSON-RPC 2.0 §4.1, the SDK's Protocol): a host's
 * EOF alone does not say whether it half-closed (`printf req | mcpool bridge` still wants its
 * answers) or is gone (SIGKILLed mid-call), and a session whose host is gone must cancel its
 * calls upstream at once, not after HALF_CLOSE_ANSWER_MS; and a daemon that took over from
 * another knows a host whose entry dials again by the name it gave before.
 *
 * - hostNameLine(), lean bridge and perl relay → daemon, first on each connection: the name
 *   the host's session goes by, the same on every connection of the entry's process, so the
 *   host's tasks and subscription places are found again after a hand-over.
 * - HOST_GONE, lean bridge → daemon: "my host is gone"; the session ends on it at once.
 * - HOST_PROBE, daemon → host: written while a half-closed host's calls are due, for the
 *   write's EPIPE when nobody holds the other end any more (a stock relay that exited).
 *
 * No import at all: the lean `mcpool bridge` loads this before anything else.
 */

/** The method of the lean bridge's last line when its host is gone. */
export const HOST_GONE_METHOD = "notifications/mcpool/host-gone";

/** The lean bridge's last line when its host is gone, framed (one line of JSON). */
export const HOST_GONE = `${JSON.stringify({ jsonrpc: "2.0", method: HOST_GONE_METHOD })}\n`;

/** The daemon's probe of a half-closed host, framed; a live host ignores it. */
export const HOST_PROBE = `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/mcpool/probe" })}\n`;

/** The method of the line an entry opens each connection with: the name its host goes by. */
export const HOST_NAME_METHOD = "notifications/mcpool/host-name";

/**
 * The line naming the host, framed. The name goes in `taskOwner`, the field `mcpool bridge`
 * names its hosts by on the daemon's socket (a random id made once per entry process).
 */
export function hostNameLine(name: string): string {
  const line = { jsonrpc: "2.0", method: HOST_NAME_METHOD, params: { taskOwner: name } };
  return `${JSON.stringify(line)}\n`;
}

/**
 * Whether `name` is a host name the daemon takes: the shapes entries make, a `randomUUID()`
 * (8-4-4-4-12 hex digits) or 16 random bytes in hex (32 digits), lower case, with at least
 * eight different digits (a random name has about sixteen; `000…0` was typed, not drawn). The
 * name alone finds the host's records that moved with a hand-over, so one that could be
 * guessed or copied is not taken.
 */
export function isHostName(name: unknown): name is string {
  if (typeof name !== "string") return false;
  if (!/^(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.test(name))
    return false;
  return new Set(name.replaceAll("-", "")).size >= 8;
}
