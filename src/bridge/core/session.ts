/**
 * One host connection to the bridge (stdio: the only one; HTTP: one per MCP session), and
 * the calls it has in flight. A pooled server's traffic that belongs to a call — progress,
 * log lines while it runs, an elicitation — goes back to the session and request that made
 * the call, through that request's `extra`, so the Streamable HTTP transport puts it on the
 * request's own stream. A modern host's connection has no session: what it holds is the
 * URIs its listen streams name (ListenSubscriptions, below).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  callerProblem,
  defined,
  LOGGING_LEVELS,
  passesLevel,
  subscriptionKey,
  type Caller,
  type ConversationIdentity,
  type HostProfile,
  type NotificationAbout,
} from "mcpool-client";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerContext } from "@modelcontextprotocol/server";
import type { FoundTools } from "./found-tools.js";
import type { SessionProfile } from "./host-profile.js";
import type { SessionTasks } from "./tasks.js";
import type {
  JSONRPCMessage,
  LoggingLevel,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

/** A stdio-shaped connection to the bridge (era-switch.ts): the SDK v1 stdio transport's shape. */
export interface StdioLike {
  start(): Promise<void>;
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: JSONRPCMessage, extra?: never) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
}

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
  /** Catalog mode (catalog/on-demand.ts): the tools this session's searches found, listed with it. */
  readonly found?: FoundTools;
  /** What the host declared that a pooled server sees, and its roots. */
  readonly profile: SessionProfile;
  /** The tasks its task-augmented calls made (a bridge a server of which offers tasks). */
  readonly tasks?: SessionTasks;
  /** The name its entry gave its host (HostName): its tasks and subscriptions go by it. */
  readonly hostName?: string;
}

/**
 * The name a host's session goes by, when its entry gave one (hostNameLine() of
 * lean/host-signals.ts): set before the host's first message, read as its session is made.
 */
export interface HostName {
  name?: string;
}

/** Whether a message at `level` passes the threshold the host set (mcpool-protocol). */
export { passesLevel };

/**
 * Whether a host whose requests named `profile` last hears a server's log line or list
 * change the daemon sent for `about`'s hosts: those of that profile, or, before its requests
 * named one, the pool's own host's (the row's own connection's). A change of the pool's own
 * (no `about`), or one from an older daemon, which names no hosts: everyone hears it.
 */
export function hearsAbout(
  profile: HostProfile | undefined,
  about: NotificationAbout | undefined,
): boolean {
  if (about?.hosts === undefined) return true;
  return about.hosts.includes(subscriptionKey(profile));
}

/** A list a host may be told changed. */
export type ListKind = "tools" | "resources" | "prompts";

/** What tells a host its lists changed: an SDK server of either era. */
interface ListChangeSender {
  sendToolListChanged(): Promise<void>;
  sendResourceListChanged(): Promise<void>;
  sendPromptListChanged(): Promise<void>;
}

/** Tells `server`'s host (a legacy session, or a modern unit's listen streams) that `kinds` changed. */
export function tellListsChanged(server: ListChangeSender, kinds: readonly ListKind[]): void {
  for (const kind of kinds) {
    const sent =
      kind === "tools"
        ? server.sendToolListChanged()
        : kind === "resources"
          ? server.sendResourceListChanged()
          : server.sendPromptListChanged();
    sent.catch(() => undefined);
  }
}

/**
 * Who a legacy host's requests are for, to a modern server: the clientInfo it
 * sent in `initialize`, the level it set last (none when it set none), and whether its
 * roots say when they change.
 */
export function sessionCaller(session: Session): Caller {
  return hostCaller(
    session.server.getClientVersion(),
    session.level,
    session.server.getClientCapabilities(),
  );
}

/** The envelope keys of a modern request's client info, log level and capabilities (SDK v2's). */
const CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo";
const LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel";
const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/** Who the request is for: the envelope's clientInfo, log level and capabilities. */
export function callerOf(ctx: ServerContext): Caller {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  return hostCaller(
    envelope[CLIENT_INFO_META_KEY],
    envelope[LOG_LEVEL_META_KEY],
    envelope[CLIENT_CAPABILITIES_META_KEY],
  );
}

/**
 * A host's caller from what it said of itself: a clientInfo the daemon would refuse (too
 * large, not an Implementation) is left out, so the host's requests name the pool's
 * instead of failing.
 */
export function hostCaller(clientInfo: unknown, logLevel: unknown, capabilities?: unknown): Caller {
  const level = LOGGING_LEVELS.includes(logLevel as LoggingLevel)
    ? (logLevel as LoggingLevel)
    : undefined;
  const info =
    clientInfo !== undefined && callerProblem({ clientInfo }) === undefined
      ? (clientInfo as Caller["clientInfo"])
      : undefined;
  const roots = (capabilities as { roots?: { listChanged?: unknown } } | undefined)?.roots;
  const rootsListChanged = roots?.listChanged === true ? true : undefined;
  return defined({ clientInfo: info, logLevel: level, rootsListChanged });
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

// ── A modern host's connection: its listen streams ──────────────────────────────────

/** The `_meta` key naming the listen stream a notification belongs to (2026-07-28). */
const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/**
 * Who holds resource subscriptions: a legacy host's session, or a modern host's connection
 * (its listen streams, ListenSubscriptions below).
 */
export interface Subscriber {
  /** URIs held, each with the server it was routed to. */
  readonly subscriptions: Map<string, string>;
  /** The name its entry gave its host (HostName), whose subscriptions are its own. */
  readonly hostName?: string;
  readonly server: { sendResourceUpdated(params: { uri: string }): Promise<void> };
}

/** What ListenSubscriptions asks of the bridge's router (resources-prompts.ts). */
export interface SubscriptionRouter {
  subscribe(subscriber: Subscriber, uri: string): Promise<void>;
  unsubscribe(subscriber: Subscriber, uri: string): Promise<void>;
}

/**
 * A modern host's resource subscriptions: the 2026-07-28 revision has no
 * `resources/subscribe`; a host names URIs in a `subscriptions/listen` stream, and they are
 * held upstream (through the router, on whichever server owns each URI) while any of the
 * connection's streams names them, one `subscriber` for the connection. Each open and end
 * runs after the one before, so a stream that ends while its subscribe is on its way leaves
 * nothing held.
 */
export class ListenSubscriptions {
  readonly #router: SubscriptionRouter;
  readonly #subscriber: Subscriber;
  readonly #log: (line: string) => void;
  /** Open stream → the URIs it named. */
  readonly #streams = new Map<string, readonly string[]>();
  /** URI → how many open streams name it. */
  readonly #named = new Map<string, number>();
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(router: SubscriptionRouter, subscriber: Subscriber, log: (line: string) => void) {
    this.#router = router;
    this.#subscriber = subscriber;
    this.#log = log;
  }

  /**
   * A listen stream, `stream` its key on this connection, opened naming `uris`; resolves
   * once they are held upstream (or their failure is logged).
   */
  open(stream: string, uris: readonly string[]): Promise<void> {
    if (this.#closed || this.#streams.has(stream) || uris.length === 0) return this.#queue;
    const named = [...new Set(uris)];
    this.#streams.set(stream, named);
    for (const uri of named) {
      const count = (this.#named.get(uri) ?? 0) + 1;
      this.#named.set(uri, count);
      if (count === 1) this.#then(uri, () => this.#router.subscribe(this.#subscriber, uri));
    }
    return this.#queue;
  }

  /** The stream ended (cancelled, closed by either side). */
  end(stream: string): void {
    const named = this.#streams.get(stream);
    if (named === undefined) return;
    this.#streams.delete(stream);
    for (const uri of named) {
      const count = (this.#named.get(uri) ?? 1) - 1;
      if (count > 0) {
        this.#named.set(uri, count);
        continue;
      }
      this.#named.delete(uri);
      this.#then(uri, () => this.#router.unsubscribe(this.#subscriber, uri));
    }
  }

  /** The connection closed: every stream ends; resolves once upstream is told. */
  close(): Promise<void> {
    this.#closed = true;
    for (const stream of [...this.#streams.keys()]) this.end(stream);
    return this.#queue;
  }

  #then(uri: string, run: () => Promise<void>): void {
    this.#queue = this.#queue.then(run).catch((error: unknown) => {
      this.#log(`mcpool bridge: resource subscription ${uri}: ${(error as Error).message}`);
    });
  }
}

/** The URIs of a listen filter's `resourceSubscriptions`. */
export function urisOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((uri): uri is string => typeof uri === "string") : [];
}

/**
 * `transport` as the SDK v2 stdio entry sees it, with a modern host's listen streams told to
 * `listens`: the entry serves `subscriptions/listen` itself and tells its server nothing, so
 * its acknowledgement (what it honoured, after checking the request and our capabilities)
 * opens a stream's URIs, and reaches the host once they are held upstream — as a server
 * direct acknowledges what it has subscribed, so a change the host makes next is heard
 * (only the acknowledgement waits: a server that is slow to take the subscription holds up
 * nothing else of the connection's). The host's
 * `notifications/cancelled` of it, the entry's closing answer to it, or the connection's
 * end closes them.
 */
export function watchListens(transport: StdioLike, listens: ListenSubscriptions): StdioLike {
  const key = (id: unknown): string => JSON.stringify(id);
  const open = new Set<string>();
  const inbound = (message: JSONRPCMessage): void => {
    if ("method" in message && message.method === "notifications/cancelled") {
      const stream = key((message.params as { requestId?: unknown } | undefined)?.requestId);
      if (open.delete(stream)) listens.end(stream);
    }
  };
  /** What the message waits for before it goes: a stream's URIs held upstream. */
  const outbound = (message: JSONRPCMessage): Promise<void> | undefined => {
    if (!("method" in message)) {
      // The entry's empty answer to a listen request is that stream's graceful end.
      if ("id" in message && open.delete(key(message.id))) listens.end(key(message.id));
      return undefined;
    }
    if (message.method !== "notifications/subscriptions/acknowledged") return undefined;
    const params = message.params as
      | { notifications?: { resourceSubscriptions?: unknown }; _meta?: Record<string, unknown> }
      | undefined;
    const stream = key(params?._meta?.[SUBSCRIPTION_ID_KEY]);
    const uris = params?.notifications?.resourceSubscriptions;
    if (!Array.isArray(uris)) return undefined;
    open.add(stream);
    return listens.open(stream, urisOf(uris));
  };
  const watched: StdioLike = {
    start: () => transport.start(),
    send: (message, options) => {
      const held = outbound(message);
      if (held === undefined) return transport.send(message, options);
      return held.then(() => transport.send(message, options));
    },
    close: () => transport.close(),
  };
  transport.onmessage = (message, extra) => {
    inbound(message);
    watched.onmessage?.(message, extra);
  };
  transport.onclose = () => {
    void listens.close();
    watched.onclose?.();
  };
  transport.onerror = (error) => watched.onerror?.(error);
  return watched;
}
