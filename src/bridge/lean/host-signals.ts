/**
 * The two lines an MCP socket carries beside MCP itself, both JSON-RPC
 * notifications, which a receiver that does not know them ignores (JSON-RPC 2.0 §4.1, the
 * SDK's Protocol): a host's EOF alone does not say whether it half-closed (`printf req |
 * mcpool bridge` still wants its answers) or is gone (SIGKILLed mid-call), and a session whose
 * host is gone must cancel its calls upstream at once, not after HALF_CLOSE_ANSWER_MS.
 *
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
