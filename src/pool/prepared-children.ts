/**
 * Children started ahead of their roots. A 2025-11-25 host that declares roots can be asked
 * for them only once its `initialize` is answered, and its project's child (host-profiles.ts)
 * can be made only once they are known: made then, its start falls in the host's first
 * listing, where direct it falls in the host's connect (the host waits for its server's
 * `initialize` answer, with a far larger budget than for a listing: Claude Code gives a
 * server 30 s to connect and `claude mcp list` 5 s to list). So the bridge has the daemon
 * open, at the host's `initialize`, one connection per row the host's project child will
 * be dialled on — started, its handshake done with the capabilities that child declares,
 * its `notifications/initialized` held, so its server has not asked for roots — and answers
 * the host once they are open. The project's child, made once the roots are known, takes
 * one (dial.ts openedAhead) and sends `initialized`: its server then asks for the roots and
 * gets that child's. No roots are guessed and no child is keyed before they are known: a
 * connection opened ahead is only ever given the roots of the child that takes it.
 *
 * One is opened per row and capability key at a time (those that ask at once share it): a
 * burst of hosts costs at most one process per row and key beyond the children they get.
 * Each is held by the sessions that asked for it (`holder`) and ends, unless a child took
 * it, once every holder let go (the session listed, or closed) or its server went away.
 */
import { capabilityKey, type HostProfile, type ProfileChildState } from "mcpool-protocol";
import { openAhead, type OpenedAhead } from "./server/dial.js";
import type { EntryContext } from "./server/context.js";
import type { ServerEntry } from "./server/entry.js";
import { profileCapabilities } from "./server/profile-entry.js";
import { serverLog } from "./core/server-log.js";

interface Ahead {
  readonly serverId: string;
  /** The capability key of the children it can serve (mcpool-protocol's capabilityKey). */
  readonly key: string;
  /** Resolves once open; undefined: it failed, or ended first. */
  readonly opening: Promise<OpenedAhead | undefined>;
  opened: OpenedAhead | undefined;
  /** The sessions holding it. */
  readonly holders: Set<string>;
  ended: boolean;
}

export class PreparedChildren {
  /** The pool's entry context: what is opened ahead is dialled as the rows' children are. */
  readonly #pool: EntryContext;
  /** `serverId` and capability key → the connection opened ahead for them. */
  readonly #ahead = new Map<string, Ahead>();

  /** Called with a row's id when one of its connections ahead ends (not when taken). */
  readonly #ended: (serverId: string) => void;

  constructor(pool: EntryContext, ended: (serverId: string) => void = () => undefined) {
    this.#pool = pool;
    this.#ended = ended;
  }

  /**
   * Opens ahead, held by `holder`, a connection for the children of `profile` (its roots
   * empty: not known yet) on each of `entries` that dials a child: a stdio row found to
   * speak 2025-11-25, up or idle (the entries given are those whose hosts with roots get a
   * child of their own, with room under the cap). Resolves with those rows' ids once each
   * is open or failed.
   */
  async prepare(
    entries: readonly ServerEntry[],
    profile: HostProfile,
    holder: string,
  ): Promise<string[]> {
    const { handed: _handed, ...transportContext } = this.#pool.transportContext;
    const context = {
      ...this.#pool,
      transportContext,
      capabilities: profileCapabilities(profile),
    };
    const key = capabilityKey(profile);
    // A row that is down would fail the same way for the child: it dials afresh.
    const rows = entries.filter(
      (entry) =>
        entry.row.transport === "stdio" &&
        entry.verdict?.era === "legacy" &&
        (entry.status === "ready" || entry.status === "idle"),
    );
    await Promise.all(
      rows.map((entry) =>
        this.#hold(entry.id, key, holder, () =>
          openAhead(entry.row, context, entry.row.connectTimeoutMs ?? context.connectTimeoutMs),
        ),
      ),
    );
    return rows.map((entry) => entry.id);
  }

  /**
   * Row `serverId`'s connection ahead for children of capability key `key`, held by `holder`:
   * the one being opened or open, or one opened now by `open`. Resolves once it is open or
   * failed (never rejects: a failure is the child's own dial to find and say).
   */
  async #hold(
    serverId: string,
    key: string,
    holder: string,
    open: () => Promise<OpenedAhead>,
  ): Promise<void> {
    const at = slot(serverId, key);
    let ahead = this.#ahead.get(at);
    if (ahead === undefined) {
      const opening = open().then(
        (opened) => this.#opened(made, opened),
        (error: unknown) => {
          this.#end(made);
          serverLog(this.#pool.log, serverId).info(
            `could not open a connection ahead for hosts declaring ${key}: ${(error as Error).message}`,
          );
          return undefined;
        },
      );
      const made: Ahead = {
        serverId,
        key,
        opening,
        opened: undefined,
        holders: new Set(),
        ended: false,
      };
      ahead = made;
      this.#ahead.set(at, made);
    }
    ahead.holders.add(holder);
    await ahead.opening;
  }

  /**
   * Row `serverId`'s connection ahead for a child of capability key `key`, taken (it is the
   * child's from now on); undefined when there is none. One still opening is taken too.
   */
  take(serverId: string, key: string): Promise<OpenedAhead | undefined> | undefined {
    const at = slot(serverId, key);
    const ahead = this.#ahead.get(at);
    if (ahead === undefined) return undefined;
    this.#ahead.delete(at);
    return ahead.opening;
  }

  /** `holder` lets go of what it asked for: each connection no session holds any more ends. */
  release(holder: string): void {
    for (const ahead of [...this.#ahead.values()]) {
      if (!ahead.holders.delete(holder) || ahead.holders.size > 0) continue;
      this.#end(ahead);
    }
  }

  /** Ends the connections ahead of row `serverId` (its row ended, or changed), or of every row. */
  end(serverId?: string): void {
    for (const ahead of [...this.#ahead.values()]) {
      if (serverId === undefined || ahead.serverId === serverId) this.#end(ahead);
    }
  }

  /**
   * How many connections ahead row `serverId` has, open or opening; `except`: not counting
   * the one for children of that capability key (the child that will take it).
   */
  count(serverId: string, except?: string): number {
    return [...this.#ahead.values()].filter(
      (ahead) => ahead.serverId === serverId && ahead.key !== except,
    ).length;
  }

  /** Row `serverId`'s connections ahead, for state(): each with its pid once open. */
  stateOf(serverId: string): ProfileChildState[] {
    return [...this.#ahead.values()]
      .filter((ahead) => ahead.serverId === serverId)
      .map((ahead) => {
        const pid = pidOf(ahead.opened);
        return {
          capabilities: ahead.key,
          status: ahead.opened === undefined ? "connecting" : "ready",
          awaitingRoots: true,
          ...(pid !== undefined ? { pid } : {}),
        };
      });
  }

  #opened(ahead: Ahead, opened: OpenedAhead): OpenedAhead | undefined {
    if (ahead.ended) {
      void opened.client.close().catch(() => undefined);
      return undefined;
    }
    ahead.opened = opened;
    // Its server went away before a child took it: there is nothing left to take.
    opened.client.onclose = () => this.#end(ahead);
    return opened;
  }

  #end(ahead: Ahead): void {
    if (this.#ahead.get(slot(ahead.serverId, ahead.key)) === ahead) {
      this.#ahead.delete(slot(ahead.serverId, ahead.key));
    }
    if (ahead.ended) return;
    ahead.ended = true;
    void ahead.opened?.client.close().catch(() => undefined);
    this.#ended(ahead.serverId);
  }
}

function slot(serverId: string, key: string): string {
  return `${serverId}\0${key}`;
}

/** The process behind an open connection ahead, if it is a child. */
function pidOf(opened: OpenedAhead | undefined): number | undefined {
  return (opened?.transport as { pid?: number } | undefined)?.pid;
}
