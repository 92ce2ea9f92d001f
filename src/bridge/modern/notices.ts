/**
 * What a modern host hears unasked of the pool: list changes on its listen streams, and a
 * pooled server's log lines on its requests in flight on that server (2026-07-28 has no
 * other channel for either). As for a legacy session (legacy/pool-traffic.ts), a server's
 * own line or list change reaches only the hosts the connection that sent it serves: the
 * daemon names them by their profiles (`about`), and each serving unit and each request in
 * flight is told apart by the profile its requests named — direct, a host hears only its
 * own server process. A change of the pool's own (a server connected or closed, a new
 * daemon) names no hosts: every listen stream hears it.
 *
 * The HTTP face's listen streams are told through its handlers' bus, which has no profile
 * per stream: they hear every list change in scope.
 */
import type { McpHttpHandler, Server, ServerContext } from "@modelcontextprotocol/server";
import type { HostProfile, LoggingLevel, NotificationAbout } from "mcpool-client";

import {
  callerOf,
  hearsAbout,
  passesLevel,
  tellListsChanged,
  type ListKind,
} from "../core/session.js";

/** One serving unit of the modern side (a connection, or one HTTP request): its Server. */
export interface ServingUnit {
  readonly server: Server;
  /** The profile its requests named last; undefined: none yet (the pool's own host's). */
  last: HostProfile | undefined;
}

/** A modern host's request in flight (ModernNotices.deliverLog). */
interface Inflight {
  readonly unit: ServingUnit;
  /** The pooled server it went to; undefined: not known, any server's lines are its. */
  readonly serverId: string | undefined;
  /** The profile it named: the daemon's hosts of a line are told apart by it. */
  readonly profile: HostProfile | undefined;
  /** The level its envelope asked for; undefined: it asked for no log lines. */
  readonly level: LoggingLevel | undefined;
  notify(message: { method: string; params: object }): Promise<void>;
}

export class ModernNotices {
  /** Connections' serving units, told of list changes (their listen streams get them). */
  readonly #live = new Set<ServingUnit>();
  /** The HTTP faces, whose listen streams are told through their bus. */
  readonly #handlers = new Set<McpHttpHandler>();
  /** Requests in flight, oldest first, for the log lines of their server. */
  readonly #inflight: Inflight[] = [];

  /** A connection's unit, told of list changes until its server closes. */
  track(unit: ServingUnit): void {
    this.#live.add(unit);
    unit.server.onclose = () => this.#live.delete(unit);
  }

  /** An HTTP face, whose listen streams hear every list change; `close()` ends it. */
  addHandler(handler: McpHttpHandler): void {
    this.#handlers.add(handler);
  }

  /** Lists changed; `about`: a server's own notice, to the units whose host it names. */
  listChanged(kinds: readonly ListKind[], about?: NotificationAbout): void {
    for (const { notify } of this.#handlers) {
      for (const kind of kinds) {
        if (kind === "tools") notify.toolsChanged();
        else if (kind === "resources") notify.resourcesChanged();
        else notify.promptsChanged();
      }
    }
    for (const unit of this.#live)
      if (hearsAbout(unit.last, about)) tellListsChanged(unit.server, kinds);
  }

  /**
   * A pooled server's `notifications/message`, to the requests in flight on it whose host
   * `about` names and that asked for its level in their envelope (none asked: none sent, as
   * a modern server would), on the request's own stream; one request per unit, the newest.
   */
  deliverLog(
    serverId: string,
    message: { method: string; params: { level: unknown } },
    about: NotificationAbout,
  ): void {
    const told = new Set<ServingUnit>();
    for (let i = this.#inflight.length - 1; i >= 0; i--) {
      const request = this.#inflight[i] as Inflight;
      if (request.serverId !== undefined && request.serverId !== serverId) continue;
      if (told.has(request.unit) || !hearsAbout(request.profile, about)) continue;
      const level = request.level;
      if (level === undefined || !passesLevel(message.params.level, level)) continue;
      told.add(request.unit);
      request.notify(message).catch(() => undefined);
    }
  }

  /** `run` with the request it serves in flight: its server's log lines reach it meanwhile. */
  async inFlight<R>(
    ctx: ServerContext,
    unit: ServingUnit,
    on: { serverId: string | undefined; profile: HostProfile | undefined },
    run: () => Promise<R>,
  ): Promise<R> {
    const request: Inflight = {
      unit,
      ...on,
      level: callerOf(ctx).logLevel,
      notify: (message) => ctx.mcpReq.notify(message as never),
    };
    this.#inflight.push(request);
    try {
      return await run();
    } finally {
      this.#inflight.splice(this.#inflight.indexOf(request), 1);
    }
  }

  /** Ends every HTTP face (the bridge closes). */
  close(): void {
    for (const handler of this.#handlers) void handler.close().catch(() => undefined);
    this.#handlers.clear();
  }
}
