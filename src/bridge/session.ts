/**
 * One host connection to the bridge (stdio: the only one; HTTP: one per MCP session), and
 * the calls it has in flight. A pooled server's traffic that belongs to a call — progress,
 * log lines while it runs, an elicitation — goes back to the session and request that made
 * the call, through that request's `extra`, so the Streamable HTTP transport puts it on the
 * request's own stream.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  callerProblem,
  defined,
  LOGGING_LEVELS,
  passesLevel,
  type Caller,
  type ConversationIdentity,
} from "mcpool-client";
import type { FoundTools } from "./found-tools.js";
import type { SessionProfile } from "./host-profile.js";
import type {
  LoggingLevel,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface InflightCall {
  readonly session: Session;
  /** The pooled server the call went to, when the bridge knows it. */
  readonly serverId: string | undefined;
  readonly extra: Extra;
}

export interface Session {
  readonly server: Server;
  /** The level the host set with logging/setLevel; undefined: everything is sent. */
  level: LoggingLevel | undefined;
  /** URIs this host subscribed to, each with the server it was routed to. */
  readonly subscriptions: Map<string, string>;
  /** This connection's conversation, for `session: "conversation"` servers (conversation.ts). */
  readonly identity?: ConversationIdentity;
  /** Catalogue mode (catalog.ts): the tools this session's searches found, listed with it. */
  readonly found?: FoundTools;
  /** What the host declared that a pooled server sees, and its roots (SPEC I4, I5). */
  readonly profile: SessionProfile;
}

/** Whether a message at `level` passes the threshold the host set (mcpool-protocol). */
export { passesLevel };

/**
 * Who a legacy host's requests are for, to a modern server (SPEC H2): the clientInfo it
 * sent in `initialize` and the level it set last (none when it set none).
 */
export function sessionCaller(session: Session): Caller {
  return hostCaller(session.server.getClientVersion(), session.level);
}

/**
 * A host's caller from what it said of itself: a clientInfo the daemon would refuse (too
 * large, not an Implementation) is left out, so the host's requests name the pool's
 * instead of failing.
 */
export function hostCaller(clientInfo: unknown, logLevel: unknown): Caller {
  const level = LOGGING_LEVELS.includes(logLevel as LoggingLevel)
    ? (logLevel as LoggingLevel)
    : undefined;
  const info =
    clientInfo !== undefined && callerProblem({ clientInfo }) === undefined
      ? (clientInfo as Caller["clientInfo"])
      : undefined;
  return defined({ clientInfo: info, logLevel: level });
}

/** Every open session and every call in flight, newest last. */
export class Sessions {
  readonly #sessions = new Set<Session>();
  readonly #calls: InflightCall[] = [];

  get size(): number {
    return this.#sessions.size;
  }

  add(session: Session): void {
    this.#sessions.add(session);
  }

  delete(session: Session): void {
    this.#sessions.delete(session);
    for (let i = this.#calls.length - 1; i >= 0; i--) {
      if (this.#calls[i]?.session === session) this.#calls.splice(i, 1);
    }
  }

  [Symbol.iterator](): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /** Records a call; the returned function forgets it. */
  track(call: InflightCall): () => void {
    this.#calls.push(call);
    return () => {
      const at = this.#calls.indexOf(call);
      if (at !== -1) this.#calls.splice(at, 1);
    };
  }

  /**
   * The newest call in flight on `serverId` (in `session`, when given). A call whose server
   * the bridge could not name counts for any server: it is the best guess left.
   */
  latestCall(serverId: string, session?: Session): InflightCall | undefined {
    let fallback: InflightCall | undefined;
    for (let i = this.#calls.length - 1; i >= 0; i--) {
      const call = this.#calls[i] as InflightCall;
      if (session !== undefined && call.session !== session) continue;
      if (call.serverId === serverId) return call;
      if (call.serverId === undefined) fallback ??= call;
    }
    return fallback;
  }
}
