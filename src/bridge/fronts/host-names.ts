/**
 * The names hosts' sessions go by on the MCP sockets: the lean bridge and the perl relay open
 * each connection with their host's name (hostNameLine() of lean/host-signals.ts), the same on
 * every connection of the entry's process, so a daemon that took over from another finds the
 * host's moved tasks (and kept subscription places) by it, as it finds those of a host of
 * `mcpool bridge`, whose session keeps its name across the reconnect.
 *
 * On the daemon's socket a host's records are its connection's and its name's; every session
 * here shares one connection, so the rule is kept here: a name a live session of these
 * sockets goes by is not taken again (another host must never own its records), nor one
 * that could be guessed, nor one that is not the connection's first line (its session was
 * made nameless already). A session with no name taken goes by one of its own, as ever. The
 * daemon's log says why a name was not taken, never the name.
 */
import type { Socket } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { HostName } from "../core/session.js";
import { HOST_NAME_METHOD, isHostName } from "../lean/host-signals.js";

/** The part of the SDK's stdio server transport the wrapper below replaces. */
interface SessionTransport {
  onmessage?: ((message: JSONRPCMessage, extra?: never) => void) | undefined;
}

/** Why a named session's name is not taken, or undefined when it is. */
function refusal(name: unknown, first: boolean, live: ReadonlySet<string>): string | undefined {
  if (!first) return "it was not the connection's first line";
  if (!isHostName(name)) return "it is not a random UUID or 32 hex digits";
  if (live.has(name)) return "a live session here goes by it";
  return undefined;
}

export class HostNames {
  /** The names the live sessions go by. */
  readonly #live = new Set<string>();

  /**
   * Sets `host.name` from the first line on `socket` when that names the host (the line goes
   * no further); the name is given back when the socket closes. Wraps `transport`'s
   * onmessage, as the bridge set it: call it before the socket is read.
   */
  take(
    transport: SessionTransport,
    socket: Socket,
    host: HostName,
    log: (why: string) => void,
  ): void {
    let first = true;
    const received = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const opening = first;
      first = false;
      if (!("method" in message) || "id" in message || message.method !== HOST_NAME_METHOD) {
        return received?.(message, extra);
      }
      const name = (message.params as { taskOwner?: unknown } | undefined)?.taskOwner;
      const why = refusal(name, opening, this.#live);
      if (why !== undefined) {
        return log(`an entry's host name is not taken (${why}); its session goes by its own`);
      }
      const taken = name as string;
      if (socket.destroyed) return;
      this.#live.add(taken);
      host.name = taken;
      socket.once("close", () => this.#live.delete(taken));
    };
  }
}
