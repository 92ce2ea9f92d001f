/**
 * What the pool sends a bridge's hosts unasked, legacy sessions and the modern side alike.
 *
 * - `tools/list_changed` (and resources/prompts list changes) go to every session when the
 *   pool's lists change: `connect` and `close` events of an in-scope server (the row's own
 *   connection's), a reconcile that added, removed or changed an in-scope row (one not
 *   connected says so by no other event), and a daemon that was replaced (the client
 *   reconnected: the level each host set is set again on the new daemon too). Not a close
 *   after which the pool goes on offering what the server listed — it ended idle, crashed,
 *   hung, was stopped or is dialled again — nor the connect that brings it back: what the
 *   host lists is what it was, and a server back with other tools is said as any list change
 *   (below).
 * - A pooled server's own list changes and log lines go to the sessions whose host the
 *   connection that sent them serves (the daemon names those hosts by their profiles: a
 *   project's child's lines reach that project's hosts alone, the row's own connection's
 *   the hosts it serves, as direct each host hears only its own server process); a tool
 *   list change once the connection's new list is read (the pool sends it then). Log lines
 *   are filtered by the level each host set (logger prefixed with the slug in pool scope);
 *   while the host has a call in flight on that server, on that call's stream. The modern
 *   side tells its hosts apart the same way (modern/notices.ts).
 * - A subscribed resource's `notifications/resources/updated`, to the sessions that
 *   subscribed (resources-prompts.ts); a task's `notifications/tasks/status`, to the session
 *   that made the task (core/tasks.ts).
 */
import type { LoggingLevel, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import {
  type HostProfile,
  type NotificationAbout,
  type PoolClient,
  type PoolEvent,
  type ServerNotification,
  type ServerState,
} from "mcpool-client";

import type { Scope } from "../core/naming.js";
import type { ResourcesPromptsRouter } from "../core/resources-prompts.js";
import {
  hearsAbout,
  passesLevel,
  tellListsChanged,
  type ListKind,
  type Sessions,
} from "../core/session.js";
import type { ModernBridge } from "../modern/bridge.js";
import { renamedStatus, statusTaskId } from "../core/tasks.js";

const EVERY_LIST: readonly ListKind[] = ["tools", "resources", "prompts"];

/** The pool events that change what a host lists; the bridge subscribes to these alone. */
const LIST_EVENTS: PoolEvent["type"][] = ["connect", "close", "rows-changed"];

export interface PoolTrafficOptions {
  client: PoolClient;
  scope: Scope;
  /** The pool's servers when the bridge was made: each one's slug names its log lines. */
  states: readonly ServerState[];
  /** What every session declares: a list a session was not offered changes for nobody. */
  capabilities: ServerCapabilities;
  sessions: Sessions;
  router: ResourcesPromptsRouter;
  log: (line: string) => void;
  /** The modern side, once a modern host has loaded it. */
  modern: () => ModernBridge | undefined;
}

export class PoolTraffic {
  readonly #upstream: PoolClient;
  readonly #scope: Scope;
  readonly #capabilities: ServerCapabilities;
  readonly #sessions: Sessions;
  readonly #router: ResourcesPromptsRouter;
  readonly #log: (line: string) => void;
  readonly #modern: () => ModernBridge | undefined;
  readonly #slugOf: Map<string, string>;
  /** In-scope rows closed with their lists kept offered: their return is no news either. */
  readonly #kept: Set<string>;
  readonly #off: Array<() => void>;
  #daemonPid: number | undefined;

  /** Starts listening to the pool; `close()` stops. */
  constructor(options: PoolTrafficOptions) {
    this.#upstream = options.client;
    this.#scope = options.scope;
    this.#capabilities = options.capabilities;
    this.#sessions = options.sessions;
    this.#router = options.router;
    this.#log = options.log;
    this.#modern = options.modern;
    this.#slugOf = new Map(options.states.map((s) => [s.id, s.slug]));
    // Down with a list offered (cached, or its last): one that has listed nothing yet (a lazy
    // row the daemon has not learnt yet) adds its tools at its first start, news to every host.
    this.#kept = new Set(
      options.states.filter((s) => s.status !== "ready" && s.tools.length > 0).map((s) => s.id),
    );
    this.#daemonPid = this.#upstream.daemon?.pid;
    const offEvents = this.#listenEvents();
    const offReconnect = this.#listenReconnect();
    const offNotifications = this.#listenNotifications();
    this.#off = [offEvents, offNotifications, offReconnect];
  }

  /**
   * Tells every session (and the modern side) that these lists changed; `about`: a server's
   * own notice, to the sessions whose host is among those the daemon named.
   */
  listChanged(kinds: readonly ListKind[], about?: NotificationAbout): void {
    const offered = (kind: ListKind): boolean =>
      kind === "tools" || this.#capabilities[kind] !== undefined;
    this.#modern()?.listChanged(kinds.filter(offered), about);
    for (const session of this.#sessions) {
      if (!hearsAbout(session.profile.last, about)) continue;
      tellListsChanged(session.server, kinds.filter(offered));
    }
  }

  /**
   * A host's `logging/setLevel`, for the connection its calls go to (`profile`: its host's).
   * Only a one-server bridge passes the level on: in pool scope it would change the level of
   * servers every other agent shares, so there the bridge only filters.
   */
  async setLevel(level: LoggingLevel, profile: HostProfile): Promise<void> {
    await this.#router.setLoggingLevel(level, profile).catch((error: unknown) => {
      this.#log(`mcpool bridge: logging/setLevel: ${(error as Error).message}`);
    });
  }

  /** Stops listening to the pool. */
  close(): void {
    for (const off of this.#off) off();
  }

  /** A replaced daemon may hold another pool: every list the host has may be stale. */
  #checkDaemon(): void {
    const pid = this.#upstream.daemon?.pid;
    if (pid === undefined || pid === this.#daemonPid) return;
    this.#daemonPid = pid;
    this.listChanged(EVERY_LIST);
  }

  #deliverLog(serverId: string, notification: ServerNotification, about: NotificationAbout): void {
    const params = { ...notification.params };
    if (this.#scope.single === undefined) {
      const slug = this.#slugOf.get(serverId) ?? serverId;
      params.logger = typeof params.logger === "string" ? `${slug}/${params.logger}` : slug;
    }
    const message = {
      method: "notifications/message" as const,
      params: params as { level: "info"; data: unknown },
    };
    // A modern host's requests in flight, each by the level its envelope asked for.
    this.#modern()?.deliverLog(serverId, message, about);
    for (const session of this.#sessions) {
      if (!hearsAbout(session.profile.last, about) || !passesLevel(params.level, session.level)) {
        continue;
      }
      const call = this.#sessions.latestCall(serverId, session);
      const sent =
        call !== undefined
          ? call.extra.sendNotification(message)
          : session.server.notification(message);
      sent.catch(() => undefined);
    }
  }

  /**
   * A task's status, to the session whose task it is (the daemon sent it to its owner only,
   * naming the session: a status the server sent before its answer comes before the answer
   * that tells the session its task id).
   */
  #deliverTaskStatus(
    serverId: string,
    notification: ServerNotification,
    taskOwner: string | undefined,
  ): void {
    const taskId = statusTaskId(notification as never);
    if (taskId === undefined) return;
    for (const session of this.#sessions) {
      const tasks = session.tasks;
      if (tasks === undefined) continue;
      // Named by the id the session knows the task by (made now, if the status came first).
      void tasks.statusId(serverId, taskId, taskOwner).then((hostId) => {
        if (hostId === undefined) return;
        const named = renamedStatus(notification, taskId, hostId);
        session.server.notification(named as never).catch(() => undefined);
      });
    }
  }

  // Only the events that change a list: the daemon then encodes and writes no `call`
  // event to this connection for every call made by anyone.
  #listenEvents(): () => void {
    return this.#upstream.onEvent(
      (event) => {
        this.#checkDaemon();
        if (event.type === "rows-changed") {
          const { added, removed, changed } = event;
          const rows = [...added, ...removed, ...changed];
          if (rows.some((id) => this.#scope.includes(id))) this.listChanged(EVERY_LIST);
          return;
        }
        if (event.type === "call" || event.serverId === undefined) return;
        if (!this.#scope.includes(event.serverId)) return;
        if (this.#keepsLists(event)) return;
        this.listChanged(EVERY_LIST);
      },
      { types: LIST_EVENTS },
    );
  }

  /**
   * Whether `event` (a `connect` or `close`) leaves what a host lists as it was: a close
   * the pool says kept the row's lists offered, or the connect that ends one.
   */
  #keepsLists(event: PoolEvent & { serverId: string }): boolean {
    if (event.type === "close" && event.kept === true) {
      this.#kept.add(event.serverId);
      return true;
    }
    return this.#kept.delete(event.serverId) && event.type === "connect";
  }

  // A new daemon (a restart, an upgrade): the log levels it was given are gone, and every
  // list may differ. The client sent its subscriptions again already.
  #listenReconnect(): () => void {
    return this.#upstream.onReconnect((daemon) => {
      this.#daemonPid = daemon.pid;
      this.listChanged(EVERY_LIST);
      for (const session of this.#sessions) {
        const { level } = session;
        if (level === undefined) continue;
        this.#router.setLoggingLevel(level, session.profile.last).catch((error: unknown) => {
          this.#log(`mcpool bridge: logging/setLevel again: ${(error as Error).message}`);
        });
      }
    });
  }

  #listenNotifications(): () => void {
    return this.#upstream.onNotification((serverId, notification, about) => {
      this.#checkDaemon();
      if (!this.#scope.includes(serverId)) return;
      switch (notification.method) {
        case "notifications/message":
          this.#deliverLog(serverId, notification, about);
          break;
        // Sent by the pool once the connection's new list is read (its `tools-changed`).
        case "notifications/tools/list_changed":
          this.listChanged(["tools"], about);
          break;
        case "notifications/resources/list_changed":
          this.listChanged(["resources"], about);
          break;
        case "notifications/prompts/list_changed":
          this.listChanged(["prompts"], about);
          break;
        case "notifications/resources/updated":
          this.#router.deliverUpdated(serverId, notification, about);
          break;
        case "notifications/tasks/status":
          this.#deliverTaskStatus(serverId, notification, about.taskOwner);
          break;
        default:
          break;
      }
    });
  }
}
