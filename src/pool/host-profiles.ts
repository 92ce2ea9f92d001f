/**
 * Host profiles: a pooled server sees what the calling host can do. A legacy server reads
 * its client's capabilities once, at initialize, and offers tools by them (server-everything's
 * sampling and elicitation tools), and asks its client for roots (server-filesystem's allowed
 * directories). So a shared row serves each host profile — the host's sampling, elicitation
 * modes, extensions and roots — from a child that declared exactly it:
 *
 * - No profile, or the pool's own (sampling + elicitation, no roots): the row's own entry.
 * - A modern server (2026-07-28): the row's own entry, whatever the profile — each request
 *   names its host's capabilities, and roots are asked inside the request — unless
 *   its list is `private`: then each profile's child lists for that profile alone.
 * - Any other: a ProfileEntry per (row, key), made on first use, dialled by the listing or
 *   call that needs it, reaped by the row's idle rules (DEFAULT_PROFILE_IDLE_MS where the
 *   row and pool set none). The key is the capability key, with the roots added when the
 *   host declares roots: one child per project, shared by every session in it.
 * - A child whose tool list is the row's own and whose server never asked for roots is
 *   the row's own for that capability key from then on (checked once per row and key until
 *   the row's connection is edited; a list that later moves is the server's state, not its
 *   reading of capabilities): those hosts share the row's connection, and what they cannot
 *   answer is refused for them (pipeline.ts, hostOnly). A server that asks for roots is
 *   never collapsed for hosts that declare roots, nor one whose list says it is `private`
 *   (a 2026-07-28 cache hint): that list is for its profile alone; nor one seen to ask its
 *   client a question (sampling, an elicitation mode) for hosts that lack it
 *   (profile-facts.ts: such a server may check its client's capabilities itself).
 * - A legacy host (`era: "legacy"`) on a row held in 2026-07-28: a legacy-era child per key
 *   (`initialize`, as direct), under the same cap, never collapsed into the modern connection.
 *   A server that refuses its `initialize` speaks only 2026-07-28: learnt once (kept with the
 *   tools cache), its legacy hosts then share the row's connection, bridged.
 *
 * The children never reach the catalog's index, the tools cache or the pool's
 * connect/close events (a bridge would relist on each one): each profile has a catalog
 * of its own over the rows with its children in place (`view`).
 */
import {
  capabilityKey,
  hostProfile,
  profileKey,
  type HostProfile,
  type ProfileChildState,
  type ServerState,
} from "mcpool-protocol";
import { isConversationRow } from "../config/conversation.js";
import { isEnabled } from "../config/rows.js";
import type { Catalog } from "./catalog/catalog.js";
import type { CallRoutes } from "./calls/routes.js";
import type { EntryContext } from "./server/context.js";
import type { ProfileMemo } from "./catalog/tools-cache.js";
import type { ServerEntry } from "./server/entry.js";
import type { AdoptedProfile, Handable } from "./server/handoff.js";
import { handedFor } from "./transport/transport.js";
import { isProfileEntry, ProfileEntry, profileCapabilities } from "./server/profile-entry.js";
import { ProfileSlots } from "./profile-slots.js";
import { PreparedChildren } from "./prepared-children.js";
import { ProfileFacts, type Question } from "./profile-facts.js";
import {
  childStates,
  describeProfile,
  dialFresh,
  faceOf,
  handableChildren,
  hostQuestions,
  keepsOwnChild,
  learnsUptake,
  syncChildren,
  legacyApart,
  legacyFaceState,
  maskedProfile,
  servedInLegacy,
} from "./profile-children.js";
import { toolListChanges } from "./tool-list-changes.js";
import { serverLog } from "./core/server-log.js";
import type { PoolEvent, PoolLog, ToolDefinition, ToolDescription } from "./core/types.js";

/**
 * How long an unused profile child lives when the row sets no idle timeout and the pool none
 * above 0, ms: a project closed for the day must not keep its own server forever. A row's own
 * `idleTimeoutMs` (0 included) outranks it, as it does for the row's child.
 */
export const DEFAULT_PROFILE_IDLE_MS = 10 * 60_000;

/** The events of a child the pool's listeners must not take for the row's own. */
const ROW_EVENTS: ReadonlySet<PoolEvent["type"]> = new Set(["connect", "close", "tools-changed"]);

/** The key of a legacy host's child of a row held in 2026-07-28, beside the row's others. */
const legacyKey = (key: string): string => `legacy ${key}`;

export interface HostProfilesInit {
  /** The pool's entry context: children are dialled as their rows are, but for their host. */
  context: EntryContext;
  /** The rows' own entries, in configuration order. */
  entries(): readonly ServerEntry[];
  routes: CallRoutes;
  /** A catalog over `entries` (the pool's settings). */
  catalog(entries: () => readonly ServerEntry[]): Catalog;
  /** What was learnt about row `id` changed: keep it (the tools cache, beside its list). */
  learnt(id: string): void;
  /** Children for host profiles per row (`mcpool.maxChildrenPerServer`; profile-slots.ts). */
  maxChildren?: number | undefined;
  /** Row `id`'s child for the profile under `key` connected (again): its subscriptions are sent again. */
  connected?(id: string, key: string): void;
  log: PoolLog;
}

interface View {
  readonly profile: HostProfile;
  readonly catalog: Catalog;
  entries(): readonly ServerEntry[];
}

export class HostProfiles {
  readonly #init: HostProfilesInit;
  /** The capability key of the pool's own children. */
  readonly #poolKey: string;
  /** Row id → profile key → its child. */
  readonly #children = new Map<string, Map<string, ProfileEntry>>();
  /** What was learnt about each row's server, kept with its tools cache. */
  readonly #facts = new ProfileFacts();
  readonly #slots: ProfileSlots;
  /** Connections opened ahead for hosts whose roots are not known yet (prepared-children.ts). */
  readonly #prepared: PreparedChildren;
  /** Profile key → the catalog and entries calls with that profile resolve in. */
  readonly #views = new Map<string, View>();
  /** Children a previous daemon handed over, being taken up: its choice to make them stands. */
  readonly #adopting = new Set<ProfileEntry>();
  #closed = false;

  constructor(init: HostProfilesInit) {
    this.#init = init;
    this.#poolKey = capabilityKey(hostProfile(init.context.capabilities));
    this.#slots = new ProfileSlots(init.maxChildren, init.log);
    this.#prepared = new PreparedChildren(init.context, (id) => this.#slots.changed(id));
  }

  /** For a 2025-11-25 host whose roots are not known yet: PreparedChildren.prepare(). */
  prepare(profile: HostProfile, holder: string, servers?: readonly string[]): Promise<string[]> {
    const masked = this.#masked({ ...profile, roots: [] });
    const rows = this.#init.entries().filter((entry) => {
      if (this.#closed || (servers !== undefined && !servers.includes(entry.id))) return false;
      const children = [...(this.#children.get(entry.id)?.values() ?? [])];
      if (!this.#slots.room(children, this.#prepared.count(entry.id))) return false;
      return !servedInLegacy(entry, masked, this.#facts.modernOnly) && !!this.keyFor(entry, masked);
    });
    return this.#prepared.prepare(rows, masked, holder);
  }

  /** `holder`'s host has its roots known (or is gone): what was opened ahead for it alone ends. */
  release(holder: string): void {
    this.#prepared.release(holder);
  }

  /** What `profile` can be served as in this pool: what the pool cannot route is left out. */
  #masked(profile: HostProfile): HostProfile {
    return maskedProfile(profile, this.#init.context.capabilities);
  }

  /** The key of the child that serves `profile` on `entry`'s row; undefined: the row's own. */
  keyFor(entry: ServerEntry, profile: HostProfile): string | undefined {
    if (isConversationRow(entry.row) || !isEnabled(entry.row)) return undefined;
    if (servedInLegacy(entry, profile, this.#facts.modernOnly)) {
      return legacyKey(profile.roots === undefined ? capabilityKey(profile) : profileKey(profile));
    }
    // A modern server reads each request's envelope, which names its own host's
    // capabilities, and asks for roots inside that request: one connection serves them all,
    // unless its list says it is `private` (for the caller it was listed for).
    if (entry.verdict?.era === "modern" && entry.cacheScope !== "private") return undefined;
    const caps = capabilityKey(profile);
    if (profile.roots === undefined && caps === this.#poolKey) return undefined;
    // A private list is the caller's it was listed for: never lent to another.
    const shared = entry.cacheScope !== "private";
    if (shared && this.#facts.shares(entry.id, profile)) return undefined;
    return profile.roots === undefined ? caps : profileKey(profile);
  }

  /** The catalog and entries of `profile`: each row's child for it in place of its own. */
  view(profile: HostProfile): View {
    const masked = this.#masked(profile);
    const key = masked.era === "legacy" ? legacyKey(profileKey(masked)) : profileKey(masked);
    let view = this.#views.get(key);
    if (view === undefined) {
      const entries = (): readonly ServerEntry[] =>
        this.#init.entries().map((entry) => this.#served(entry, masked));
      view = { profile: masked, catalog: this.#init.catalog(entries), entries };
      this.#views.set(key, view);
    }
    return view;
  }

  /**
   * What serves row `id` for `profile`, as its view would give it (the row's child for it, or
   * the row's own entry), making only that row's child; undefined: no such row.
   */
  entryFor(id: string, profile: HostProfile): ServerEntry | undefined {
    const entry = this.#init.entries().find((candidate) => candidate.id === id);
    return entry === undefined ? undefined : this.#served(entry, this.#masked(profile));
  }

  /** The key of row `id`'s child that serves `profile` now, none made; undefined: the row's own. */
  servedBy(id: string, profile: HostProfile): string | undefined {
    const entry = this.#init.entries().find((candidate) => candidate.id === id);
    return entry === undefined ? undefined : this.keyFor(entry, this.#masked(profile));
  }

  /** `entry`'s child for the masked profile `masked`, or `entry` itself when it serves it. */
  #served(entry: ServerEntry, masked: HostProfile): ServerEntry {
    const child = this.keyFor(entry, masked);
    if (child === undefined) return entry;
    return this.#child(entry, child, masked, servedInLegacy(entry, masked, this.#facts.modernOnly));
  }

  /** tools() for `profile`: a child never listed is dialled, one that failed is left out. */
  async tools(
    profile: HostProfile,
    options: { names?: readonly string[]; servers?: readonly string[] },
  ): Promise<ToolDefinition[]> {
    await dialFresh(() => this.view(profile).entries(), options.servers, this.#init.log);
    await this.view(profile).catalog.fresh(options.servers);
    return this.view(profile).catalog.tools(options);
  }

  describe(
    profile: HostProfile,
    qualified: string,
    options: { servers?: readonly string[]; hidden?: boolean },
  ): ToolDescription | undefined {
    return this.view(profile).catalog.describe(qualified, options);
  }

  /** The children of row `id` that are up or starting, for state() (per-project children). */
  stateOf(id: string): ProfileChildState[] | undefined {
    return childStates(this.#children.get(id)?.values() ?? [], this.#prepared.stateOf(id));
  }

  /**
   * For state(): what row `id`'s server declares to its legacy hosts when they are served by
   * children in that era (`known: false` until one's handshake told it); else undefined.
   */
  legacyFaceOf(id: string): ServerState["legacyFace"] {
    const entry = this.#init.entries().find((own) => own.id === id);
    if (entry === undefined || !legacyApart(entry, this.#facts.modernOnly)) return undefined;
    return legacyFaceState(this.#facts.legacyFace(id));
  }

  /** What the tools cache kept about a row: nothing is found out twice. */
  learn(entry: ServerEntry, memo: ProfileMemo): void {
    this.#facts.learn(entry.row, entry.id, memo);
    this.invalidate();
  }

  /** What was learnt about row `id`, for the tools cache; undefined: nothing. */
  memo(id: string): ProfileMemo | undefined {
    return this.#facts.memo(id);
  }

  /**
   * Row `id`'s server asked `question` of one of its 2025-11-25 connections (its own or a
   * child's), whoever it was for: from now on no host lacking it shares the row's connection.
   */
  asked(id: string, question: Question): void {
    const entry = this.#init.entries().find((own) => own.id === id);
    if (entry === undefined || entry.verdict?.era === "modern") return;
    if (!this.#facts.asked(entry.row, id, question)) return;
    serverLog(this.#init.log, id).info(
      `asks its client for ${question}: hosts that do not declare it get a child of their own`,
    );
    this.invalidate();
    this.#init.learnt(id);
  }

  /** Something a listing reads changed: every profile's index is rebuilt on its next read. */
  invalidate(): void {
    for (const view of this.#views.values()) view.catalog.invalidate();
  }

  /**
   * The rows after a reconcile: the children of a removed row, or of one whose connection
   * changed, are ended; an edit that keeps the connection is taken as the row's own is.
   */
  async sync(): Promise<void> {
    const rows = new Map(this.#init.entries().map((entry) => [entry.id, entry.row]));
    const ending = syncChildren(this.#children, rows);
    // What was opened ahead was opened from rows as they were: the children dial afresh.
    this.#prepared.end();
    this.#facts.sync(rows);
    this.invalidate();
    await Promise.allSettled(ending);
  }

  /** Row `id`'s child for the profile under `key`, if there is one. */
  child(id: string, key: string): ServerEntry | undefined {
    return this.#children.get(id)?.get(key);
  }

  /** stop()/reconnect() of row `id`: its children end too (the next use dials them again). */
  async end(id: string): Promise<void> {
    const children = [...(this.#children.get(id)?.values() ?? [])];
    this.#children.delete(id);
    this.#prepared.end(id);
    this.invalidate();
    await Promise.allSettled(children.map((child) => child.remove("removed")));
  }

  /** The children another daemon may take over (profile-children.ts); none opened ahead. */
  handable(): Handable[] {
    this.#prepared.end();
    return [...this.#children.values()].flatMap((children) => handableChildren(children.values()));
  }

  /**
   * Takes up children a previous daemon handed over: each is made under its key, as a
   * host's first use would make it, and dialled over its fds now (its row's transport
   * context takes the handed child by row and key); a child whose row is gone is left.
   */
  async adopt(children: readonly AdoptedProfile[]): Promise<void> {
    const entries = new Map(this.#init.entries().map((entry) => [entry.id, entry]));
    await Promise.allSettled(
      children.map(async (handed) => {
        const entry = entries.get(handed.serverId);
        if (entry === undefined) return;
        const child = this.#child(entry, handed.key, handed.profile, handed.era === "legacy");
        if (!isProfileEntry(child)) return;
        this.#adopting.add(child);
        await child.ensure().finally(() => this.#adopting.delete(child));
        child.idle();
      }),
    );
  }

  /** Ends every child; none is made afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#prepared.end();
    const children = [...this.#children.values()].flatMap((map) => [...map.values()]);
    this.#children.clear();
    await Promise.allSettled(children.map((child) => child.remove("shutdown")));
  }

  // ── Children ───────────────────────────────────────────────────────────────────────

  #child(entry: ServerEntry, key: string, profile: HostProfile, legacy: boolean): ServerEntry {
    if (this.#closed) return entry;
    let children = this.#children.get(entry.id);
    let child = children?.get(key);
    if (child !== undefined) return child;
    if (children === undefined) {
      children = new Map();
      this.#children.set(entry.id, children);
    }
    child = this.#made(entry, key, profile, legacy);
    children.set(key, child);
    return child;
  }

  #made(entry: ServerEntry, key: string, profile: HostProfile, legacy: boolean): ProfileEntry {
    const pool = this.#init.context;
    const roots = profile.roots;
    const capabilities = capabilityKey(profile);
    // A previous daemon's child for this profile, if it handed one over: whichever dial takes
    // it (a host's first use, or adopt()), the child serves as the old daemon's did.
    const handed = handedFor(pool.transportContext.handed, key, (taken) => {
      if (taken.uptake === undefined) return;
      child.adopted(taken.uptake, "sessionId" in taken ? taken.sessionId : undefined);
    });
    const { handed: _rows, ...transportContext } = pool.transportContext;
    const changes = toolListChanges(pool.notify, () => child.connection, pool.indexTools, key);
    const context: EntryContext = {
      ...pool,
      transportContext: handed ? { ...transportContext, handed } : transportContext,
      capabilities: profileCapabilities(profile),
      idleTimeoutMs: pool.idleTimeoutMs || DEFAULT_PROFILE_IDLE_MS,
      emit: (event) => {
        if (event.type === "close" || event.type === "connect") this.#slots.changed(entry.id);
        if (event.type === "connect" && legacy) this.#legacyConnected(child);
        if (event.type === "connect") this.#init.connected?.(entry.id, key);
        changes.emitted(event);
        if (!ROW_EVENTS.has(event.type)) pool.emit(event);
      },
      // Said as this child's (each of its processes): its tasks are its own (calls/tasks.ts),
      // a resource update reaches the hosts that subscribed on this child, a log line or list
      // change the hosts it serves, and its subscriptions hold it as a row's hold the row.
      notify: (id, notification, connection) => changes.notify(id, notification, connection),
      changed: () => this.invalidate(),
      listed: (listed) => this.#listed(listed as ProfileEntry),
      held: (id) => pool.held?.(id, key) === true,
      revives: () => false,
    };
    // A child answers only what its host declared; the SDK refuses the rest (-32601).
    delete context.elicit;
    delete context.sample;
    delete context.roots;
    Object.assign(
      context,
      hostQuestions(profile, this.#init.routes, { serverId: entry.id, profile: key }, (asked) =>
        this.asked(entry.id, asked),
      ),
    );
    if (roots !== undefined && !legacy) {
      // A connection opened ahead for its host, before its roots were known: taken, if there.
      context.openedAhead = () => this.#prepared.take(entry.id, capabilities);
    }
    if (roots !== undefined) {
      context.roots = {
        list: () => roots,
        asked: (connection) => {
          child.rootsAsked(connection);
          this.#rootsAsked(entry.id);
        },
      };
    }
    const child: ProfileEntry = new ProfileEntry(
      entry.row,
      context,
      profile,
      key,
      legacy ? "legacy" : undefined,
    );
    const siblings = (): ProfileEntry[] => [...(this.#children.get(entry.id)?.values() ?? [])];
    const others = (): number => this.#prepared.count(entry.id, capabilities);
    const bound = entry.row.connectTimeoutMs ?? pool.connectTimeoutMs;
    child.slot = (start) => this.#slots.take(child, siblings, others, bound, start);
    child.onIdle = () => this.#slots.changed(entry.id);
    child.knownToAsk = () => this.#facts.asksRoots(entry.id);
    child.onServedSilently = () => {
      if (this.#children.get(child.id)?.get(child.key) === child) this.#decide(child);
    };
    learnsUptake(child, this.#facts, () => this.#init.learnt(entry.id));
    // The row's era is the child's: found once, not on a spare child of each.
    if (entry.verdict && !legacy) child.adoptVerdict(entry.verdict);
    child.onOtherEraRefused = () => this.#refusedLegacy(child);
    return child;
  }

  /**
   * A child listed: when its list is the row's own and its server has not asked for roots,
   * the row's own connection serves that capability key from now on, and the child ends.
   */
  #listed(child: ProfileEntry): void {
    // A server may ask for roots at any time: a host with roots shares the row only once a
    // child has served a use without its server asking, at its start or since
    // (ProfileEntry.idle, onServedSilently) — never on a listing alone.
    if (child.profile.roots !== undefined || this.#adopting.has(child)) return;
    this.#decide(child);
  }

  /** A legacy child connected: what its server declared is the row's legacy face, kept. */
  #legacyConnected(child: ProfileEntry): void {
    const face = faceOf(child);
    if (face === undefined || child.era !== "legacy") return;
    if (!this.#facts.sawLegacyFace(child.row, child.id, face)) return;
    this.#init.learnt(child.id);
  }

  /** The server refused a legacy child's `initialize`: its legacy hosts share the row's connection. */
  #refusedLegacy(child: ProfileEntry): void {
    if (!this.#facts.refusedLegacy(child.id)) return;
    serverLog(this.#init.log, child.id).info(
      "speaks only 2026-07-28: its legacy hosts share its connection, bridged",
    );
    const children = this.#children.get(child.id);
    for (const [key, other] of [...(children ?? [])]) {
      if (other.era === undefined) continue;
      children?.delete(key);
      void this.#init.context.schedule(() => other.remove("removed"));
    }
    this.invalidate();
    this.#init.learnt(child.id);
  }

  /** Whether `child`'s row serves its capability key from now on, its list being the same. */
  #decide(child: ProfileEntry): void {
    if (child.atStart === "silent" && !child.asksRoots && this.#facts.servedSilently(child.id)) {
      this.#init.learnt(child.id);
    }
    const own = this.#init.entries().find((entry) => entry.id === child.id);
    const caps = capabilityKey(child.profile);
    // Its hosts' resource subscriptions are held on it: it serves on (decided on a later use).
    const subscribed = this.#init.context.held?.(child.id, child.key) === true;
    if (keepsOwnChild(child, own, this.#facts, subscribed)) {
      const pid = child.connection?.pid;
      serverLog(this.#init.log, child.id).info(
        `a child of its own for hosts declaring ${describeProfile(child.profile)}${pid === undefined ? "" : ` (pid ${pid})`}`,
      );
      return;
    }
    this.#facts.same(child.row, child.id, caps);
    serverLog(this.#init.log, child.id).info(
      `lists the same tools for hosts declaring ${caps}: they share its connection`,
    );
    this.#children.get(child.id)?.delete(child.key);
    this.invalidate();
    this.#init.learnt(child.id);
    void this.#init.context.schedule(() => child.remove("removed"));
  }

  /** The server asked a child for roots: hosts that declare roots get one child per roots set. */
  #rootsAsked(id: string): void {
    if (!this.#facts.rootsAsked(id)) return;
    this.invalidate();
    this.#init.learnt(id);
  }
}
