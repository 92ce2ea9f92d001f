/**
 * One conversation's client: a ServerEntry of its own (the pool's one dialler, so a
 * conversation's child or session is opened, crash-detected and closed exactly as a shared
 * row's is), and what the registry counts on it — uses, leases, idleness, its listing —
 * and how it ends: the remote session first (DELETE, or the child stopped), then our side.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../../config/rows.js";
import type { ConversationEndReason } from "./types.js";
import type { Listing } from "./listings.js";
import type { CallRoutes } from "../calls/routes.js";
import { sharedKeepAliveFetch } from "../transport/fetch.js";
import type { ConversationIdentity } from "../core/identity.js";
import type { Connection } from "../server/connection.js";
import type { EraVerdict } from "../core/era.js";
import type { EntryContext } from "../server/context.js";
import { ServerEntry } from "../server/entry.js";
import {
  deleteSession,
  DeleteWatch,
  provisional,
  sessionHandleOf,
  type SessionEnd,
} from "../transport/session-end.js";
import { conversationHandedKey, handedFor, processOf } from "../transport/transport.js";
import type { CloseReason } from "../core/types.js";

export type ClientPhase = "opening" | "open" | "ending" | "ended";

export interface ClientInit {
  id: number;
  key: string;
  keyHash: string;
  principal: string;
  identity: ConversationIdentity;
  row: McpServerConfig;
  context: EntryContext;
  lastUsed: number;
  /** The pool's routes back to its callers: this client's requests go to its conversation's. */
  routes: CallRoutes;
  /** The connection closed under the client (a child that died). */
  onLost(client: ConversationClient): void;
  /** The server said its tools changed, on this client's session. */
  onListChanged(client: ConversationClient): void;
  /** The row's era, which this client dials on (conversations/era.ts). */
  era(): Promise<EraVerdict | undefined>;
}

export class ConversationClient {
  readonly id: number;
  readonly key: string;
  readonly keyHash: string;
  readonly principal: string;
  readonly identity: ConversationIdentity;
  readonly entry: ServerEntry;
  phase: ClientPhase = "opening";
  /** Leases and operations holding the client; in use while above zero. */
  uses = 0;
  leases = 0;
  /** Clock reading of the last release. */
  lastUsed: number;
  /** The connection closed without us: nothing can be sent on it. */
  lost = false;
  /** The server answered 404 for its session: there is nothing left to end. */
  expired = false;
  /** Ends once nobody uses it, for this reason. */
  endAfterUse: ConversationEndReason | undefined;
  /** Its own listing, when its tools are not shared. */
  listing: Listing | undefined;
  /** The share key it last listed or was served under, for list_changed. */
  lastShareKey: string | undefined;
  /** The whole ending, once begun: remote, then local. */
  ending: Promise<SessionEnd> | undefined;
  /** The remote part of the ending: what terminate() answers with. */
  remote: Promise<SessionEnd> | undefined;
  /** terminate() was answered before the ending finished. */
  deferred = false;
  /** The first open, joined by every use that arrives while it is in progress. */
  opened: Promise<void> | undefined;
  readonly #watch = new DeleteWatch();
  readonly #era: () => Promise<EraVerdict | undefined>;
  #transport: Transport | undefined;
  #unused: (() => void)[] = [];

  constructor(init: ClientInit) {
    this.id = init.id;
    this.key = init.key;
    this.keyHash = init.keyHash;
    this.principal = init.principal;
    this.identity = init.identity;
    this.lastUsed = init.lastUsed;
    this.#era = init.era;
    // No idle timer of its own: the registry sweeps on use (no timer is installed).
    const row = { ...init.row, idleTimeoutMs: 0 };
    this.entry = new ServerEntry(row, clientContext(init.context, this.#watch, this, init));
  }

  /** Dials the client's own connection; its tools are listed by the registry, not here. */
  async open(): Promise<Connection> {
    // The row's era, not one found on this child (`initialize` first).
    const verdict = await this.#era();
    if (verdict !== undefined) this.entry.adoptVerdict(verdict);
    const connection = await this.entry.ensure();
    this.#transport = connection.transport;
    if (this.phase === "opening") this.phase = "open";
    return connection;
  }

  /** The live connection, or undefined when it was lost or closed. */
  get connection(): Connection | undefined {
    return this.entry.connection;
  }

  /** Open, nobody holds it, nothing scheduled: what eviction and sweeping may end. */
  get idle(): boolean {
    return this.phase === "open" && this.uses === 0 && this.endAfterUse === undefined;
  }

  /** Usable for a new use: open or opening, not lost, not on its way out. */
  get usable(): boolean {
    return (
      (this.phase === "opening" || this.phase === "open") &&
      !this.lost &&
      !this.expired &&
      this.endAfterUse === undefined
    );
  }

  release(now: number): void {
    this.uses -= 1;
    this.lastUsed = now;
    if (this.uses > 0) return;
    for (const resolve of this.#unused.splice(0)) resolve();
  }

  /** Resolves once nobody uses the client. */
  whenUnused(): Promise<void> {
    if (this.uses <= 0) return Promise.resolve();
    return new Promise((resolve) => this.#unused.push(resolve));
  }

  /**
   * Ends the remote session and classifies the answer (session-end.ts). HTTP: a DELETE
   * with the session id, unless the handle was lost (nothing is sent) or the server already
   * said it forgot the session. stdio: the child is the session; stopping it is the end.
   * Never rejects.
   */
  async endRemote(reason: CloseReason, timeoutMs: number): Promise<SessionEnd> {
    const transport = this.#transport;
    if (transport === undefined) return { outcome: "no-session" };
    const live = this.entry.connection !== undefined && !this.lost;
    const handle = sessionHandleOf(transport);
    if (handle !== undefined) {
      if (this.expired) return { outcome: "already-gone" };
      // A hand-over moved the session to the next daemon: it goes on there.
      if (this.entry.connection?.handedAway === true) return { outcome: "handle-lost" };
      // Taken in a hand-over that has not gone through: the old daemon may serve on in it.
      if (provisional(transport)) return { outcome: "handle-lost" };
      if (!live) return { outcome: handle.sessionId === undefined ? "no-session" : "handle-lost" };
      return deleteSession(handle, this.#watch, timeoutMs);
    }
    if (processOf(transport) !== undefined) {
      if (!live) return { outcome: "already-gone" };
      return bounded(
        this.closeLocal(reason).then((): SessionEnd => ({ outcome: "terminated" })),
        timeoutMs,
      );
    }
    // In memory, or a transport with no session to speak of.
    return { outcome: "no-session" };
  }

  /** Closes our side: the SDK client, the transport, a child's whole group. Idempotent. */
  closeLocal(reason: CloseReason): Promise<void> {
    return this.entry.close(reason);
  }
}

/** `work`'s answer, or `timed-out` after `timeoutMs` of elapsed time. */
function bounded(work: Promise<SessionEnd>, timeoutMs: number): Promise<SessionEnd> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SessionEnd>((resolve) => {
    timer = setTimeout(() => resolve({ outcome: "timed-out" }), timeoutMs);
    timer.unref();
  });
  return Promise.race([work.catch((): SessionEnd => ({ outcome: "failed" })), deadline]).finally(
    () => clearTimeout(timer),
  );
}

/**
 * The pool's EntryContext, narrowed for one conversation's client: no idle timer, no
 * listing at connect (the registry lists, or serves a shared listing), no tools cache, no
 * reindexing, a fetch whose DELETE answers are watched. Its connect and close events stay
 * inside the registry, which reports them keyed by keyHash. What the server sends belongs
 * to one conversation: its notifications are not passed to every subscriber (progress
 * reaches its call through the SDK), and its elicitations and sampling requests go to the
 * calls in flight of this conversation only — never to another conversation's caller —
 * else to the pool's handler (calls/routes.ts).
 */
function clientContext(
  base: EntryContext,
  watch: DeleteWatch,
  client: ConversationClient,
  init: ClientInit,
): EntryContext {
  const fetch = base.transportContext.fetch ?? sharedKeepAliveFetch();
  // The child a previous daemon ran for this conversation, if it handed one over.
  const handed = handedFor(base.transportContext.handed, conversationHandedKey(client.key));
  const { handed: _rows, ...transportContext } = base.transportContext;
  return {
    ...base,
    transportContext: {
      ...transportContext,
      fetch: watch.wrap(fetch),
      ...(handed ? { handed } : {}),
    },
    idleTimeoutMs: undefined,
    indexTools: false,
    // One child per conversation, none spare: the row's era is found once (era.ts).
    spareProbe: false,
    emit: (event) => {
      if (event.type === "close" && event.reason === "crash") {
        client.lost = true;
        init.onLost(client);
        return;
      }
      if (
        event.type === "connect" ||
        event.type === "connect-failed" ||
        event.type === "close" ||
        event.type === "tools-changed"
      )
        return;
      base.emit(event);
    },
    notify: (_serverId, notification) => {
      if (notification.method === "notifications/tools/list_changed") init.onListChanged(client);
    },
    elicit: (serverId, params, signal) =>
      init.routes.elicit({ serverId, conversation: client.key }, params, signal),
    sample: (serverId, params, signal) =>
      init.routes.sample({ serverId, conversation: client.key }, params, signal),
    changed: () => undefined,
    listed: () => undefined,
    schedule: (work) => work(),
  };
}
