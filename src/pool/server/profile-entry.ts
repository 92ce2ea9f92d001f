/**
 * A shared row's child for one host profile: a ServerEntry like the row's own,
 * dialled declaring the profile's capabilities instead of the pool's, answering `roots/list`
 * with the profile's roots. Its life (dial, crash, backoff, idle reap) is the entry's; the
 * pool's HostProfiles (host-profiles.ts) makes one on first use and says which calls it serves.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { HostProfile } from "mcpool-protocol";
import type { McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";
import { serverLog } from "../core/server-log.js";
import type { Connection } from "./connection.js";
import type { EntryContext } from "./context.js";
import { ServerEntry } from "./entry.js";
import { signOfLife } from "./sign-of-life.js";
import { processOf, type HandedUptake } from "../transport/transport.js";
import { sessionHandleOf } from "../transport/session-end.js";

/**
 * How long a server that asked for its roots may take to show it took them in, ms, when
 * the row sets no connect budget: it bounds a server that asks and then says nothing (the
 * row is then known as one, and its next children do not wait), not which connection a
 * call reaches.
 */
export const ROOTS_UPTAKE_BOUND_MS = 10_000;

/** What one dial of a child with roots found out about its server's roots. */
interface Uptake {
  /** The server asked for the roots on this connection. */
  asked: boolean;
  /** Resolves on the server's first sign of life after our first answer (sign-of-life.ts). */
  followUp?: Promise<boolean>;
  /** Told of the first ask. */
  wake?: (() => void) | undefined;
}

export class ProfileEntry extends ServerEntry {
  /** The profile key (mcpool-protocol's profileKey, or its capability key): its calls' route. */
  readonly key: string;
  readonly profile: HostProfile;
  /** The server asked this child for its roots. */
  asksRoots = false;
  /**
   * What the server did at the start of this child's last connection: `asks` (it asked
   * its roots before answering what we sent after `initialized`), `silent` (it answered
   * first), undefined while not known.
   */
  atStart: "asks" | "silent" | undefined;
  /** When this child was last used (a call or listing began or ended), for the cap (LRU). */
  usedAt = Date.now();
  /** Starts a dial within the row's cap (HostProfiles sets it, profile-slots.ts). */
  slot: ((start: () => Promise<Connection>) => Promise<Connection>) | undefined;
  /** Whether the row's server is known to ask for roots, if later than at its start. */
  knownToAsk: () => boolean = () => false;
  /** Whether the row's server is known to say nothing after taking its roots in. */
  knownQuiet: () => boolean = () => false;
  /** Whether the row's server is known to show that it took its roots in. */
  knownToShow: () => boolean = () => false;
  /** Told that the server asked and said nothing within its bound. */
  onQuiet: (() => void) | undefined;
  /** Told that the server showed it took its roots in. */
  onShown: (() => void) | undefined;
  /** Told when a use ended and the server has not asked for roots since it started. */
  onServedSilently: (() => void) | undefined;
  /** What a previous daemon's child showed, when this entry's dial took one over (adopted()). */
  #handed: HandedUptake | undefined;
  /** The http session a previous daemon handed over, when that is what this entry took. */
  #handedSession: string | undefined;
  /** Uses (calls, reads) begun and not ended. */
  #using = 0;
  /** Told when a use ends (a child waiting for a slot may take this one's). */
  onIdle: (() => void) | undefined;
  /** A dial waiting for its slot. */
  #slotted: Promise<Connection> | undefined;
  readonly #context: EntryContext;
  readonly #uptakes = new WeakMap<Connection, Uptake>();
  /** Per connection, the wait of its first use (rootsTaken). */
  readonly #taken = new WeakMap<Connection, Promise<Connection>>();
  /** The connections whose server took the roots in. */
  readonly #ready = new WeakSet<Connection>();
  /** The connections ended because their server showed no sign of taking the roots in. */
  readonly #untaken = new WeakSet<Connection>();

  /**
   * `legacy`: a legacy host's child of a row held in 2026-07-28, dialled with `initialize` as
   * its host would dial the server direct; undefined: the row's era.
   */
  readonly era: "legacy" | undefined;
  /** Told that the server refused this child's era (it speaks only the row's). */
  onOtherEraRefused: (() => void) | undefined;

  constructor(
    row: McpServerConfig,
    context: EntryContext,
    profile: HostProfile,
    key: string,
    era?: "legacy",
  ) {
    super(row, context);
    this.#context = context;
    this.profile = profile;
    this.key = key;
    this.era = era;
  }

  protected override dialled = (row: McpServerConfig): McpServerConfig =>
    this.era === undefined ? row : { ...row, protocol: this.era };

  /**
   * This entry's dial took over a child, or an http session (`sessionId`), another daemon
   * served for the same profile (told as it takes it): its server took its roots in there,
   * so the connection serves at once.
   */
  adopted(handed: HandedUptake, sessionId?: string): void {
    this.#handed = handed;
    this.#handedSession = sessionId;
    this.asksRoots = handed.asksRoots;
    this.atStart = handed.atStart;
  }

  /**
   * A use (a call, a read) has begun and not ended, or a host holds a resource subscription
   * on it: the child is not to be ended for the cap.
   */
  get inUse(): boolean {
    return this.#using > 0 || this.#context.held?.(this.id) === true;
  }

  override busy(): void {
    this.usedAt = Date.now();
    this.#using += 1;
    super.busy();
  }

  override idle(): void {
    this.usedAt = Date.now();
    super.idle();
    const used = this.#using > 0;
    if (used) this.#using -= 1;
    // A use served by a server that never asked for the roots, not at its start nor
    // during the use: it is one that does not ask (host-profiles.ts may share the row).
    if (used && this.connection !== undefined && this.atStart === "silent" && !this.asksRoots) {
      this.onServedSilently?.();
    }
    this.onIdle?.();
  }

  /**
   * The server asked `connection` for the roots (its `roots/list`, answered right after
   * this returns): the first ask arms the watch for what the server does next.
   */
  rootsAsked(connection: Connection): void {
    this.asksRoots = true;
    const uptake = this.#uptake(connection);
    if (uptake.asked) return;
    uptake.asked = true;
    // A server without stderr (in memory, remote) shows nothing but its replies: the ping
    // after our answer is all there is to wait for.
    if (processOf(connection.transport) !== undefined) {
      // One known to show its uptake never serves without it: past the bound, the use
      // fails (#rootsTaken); no clock decides that a child serves roots it has not taken in.
      const watched = signOfLife(connection, this.#bound());
      void watched.then((shown) => {
        if (shown) this.onShown?.();
        else if (!connection.closing) this.onQuiet?.();
      });
      // One known to say nothing is served after the ping; its watch still learns if it
      // ever shows something after all.
      if (!this.knownQuiet()) uptake.followUp = watched;
    }
    uptake.wake?.();
  }

  /**
   * A child with roots serves once its server has taken them in, decided by what
   * the server does, never by a clock: a server that asks for roots at its start (as
   * server-filesystem does on `initialized`) has asked before it answers a request sent
   * after `initialized` (the first listing, or a ping), so one that answered first did not
   * ask at its start and has nothing to take in. One that asked applies the answer on its
   * own time (server-filesystem checks each directory first, then says so on stderr): the
   * child serves after the server's next sign of life following our answer — a line on
   * stderr, a notification or a request — and one ping after it. A server known (learnt
   * once, kept with the tools cache) to ask later than that is waited for to ask.
   */
  override ensure(options: { ignoreBackoff?: boolean } = {}): Promise<Connection> {
    const dialled = this.#dialled(options).catch((error: unknown) => {
      const speaks = (error as { detail?: { speaks?: unknown } }).detail?.speaks;
      if (this.era !== undefined && speaks !== undefined && speaks !== this.era) {
        this.onOtherEraRefused?.();
      }
      throw error;
    });
    if (this.profile.roots === undefined) return dialled;
    return dialled.then((connection) => {
      let taken = this.#taken.get(connection);
      if (taken === undefined) {
        taken = this.#rootsTaken(connection);
        this.#taken.set(connection, taken);
      }
      // Ended under the wait (the cap, an idle reap): the next connection serves instead.
      return taken.catch((error: unknown) => {
        if (this.connection === connection || !connection.closing) throw error;
        if (this.#untaken.has(connection)) throw error;
        return this.ensure(options);
      });
    });
  }

  /** Whether the live connection serves (its server took the roots in): it may be ended for the cap. */
  get ready(): boolean {
    const connection = this.connection;
    if (connection === undefined) return false;
    return this.profile.roots === undefined || this.#ready.has(connection);
  }

  /** The connection, a new dial waiting for a slot under its row's cap (profile-slots.ts). */
  #dialled(options: { ignoreBackoff?: boolean }): Promise<Connection> {
    if (this.connection !== undefined || this.connecting || this.slot === undefined) {
      return super.ensure(options);
    }
    this.#slotted ??= this.slot(() => super.ensure(options)).finally(() => {
      this.#slotted = undefined;
    });
    return this.#slotted;
  }

  /** Whether `connection` goes on in what a previous daemon handed over (adopted()). */
  #handedHere(connection: Connection): boolean {
    if (processOf(connection.transport)?.handedSession) return true;
    const session = this.#handedSession;
    return session !== undefined && sessionHandleOf(connection.transport)?.sessionId === session;
  }

  async #rootsTaken(connection: Connection): Promise<Connection> {
    if (this.#handed !== undefined && this.#handedHere(connection)) {
      // The previous daemon's child, which took its roots in there (adopted()).
      this.#ready.add(connection);
      return connection;
    }
    const uptake = this.#uptake(connection);
    const bound = this.#bound();
    if (!uptake.asked) await connection.client.ping({ timeout: bound });
    this.atStart = uptake.asked ? "asks" : "silent";
    if (!uptake.asked && this.knownToAsk()) await this.#asked(uptake, bound);
    if (uptake.followUp !== undefined && !(await uptake.followUp)) {
      // Known now, whether before this child's server asked or since (a sibling showed it).
      if (this.knownToShow() && !connection.closing) {
        // The next use dials afresh: this server may never take these roots in. Closed as an
        // idle child is (its list kept, no failure counted); a profile child's close is no
        // pool event (host-profiles.ts ROW_EVENTS), and the refusal below says why.
        this.#untaken.add(connection);
        void this.close("idle");
        throw new McpPoolError(
          "timeout",
          `server "${this.id}" asked for the roots ${this.#rootsText()} and gave no sign of taking them in within ${bound} ms (it shows one for other projects); not served with roots it may not have taken in`,
          { serverId: this.id, timeoutMs: bound },
        );
      }
      serverLog(this.#context.log, this.id).error(
        `asked for its roots and gave no sign of taking them in within ${bound} ms; serving ${this.#rootsText()} now`,
      );
    }
    if (uptake.asked) await connection.client.ping({ timeout: bound });
    this.#ready.add(connection);
    return connection;
  }

  /** Resolves once the server asks (rootsAsked), or after `bound` ms. */
  #asked(uptake: Uptake, bound: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, bound);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        uptake.wake = undefined;
        resolve();
      }
      uptake.wake = done;
    });
  }

  #rootsText(): string {
    return this.profile.roots?.map((root) => root.uri).join(" ") || "no roots";
  }

  #uptake(connection: Connection): Uptake {
    let uptake = this.#uptakes.get(connection);
    if (uptake === undefined) {
      uptake = { asked: false };
      this.#uptakes.set(connection, uptake);
    }
    return uptake;
  }

  #bound(): number {
    return this.row.connectTimeoutMs ?? this.#context.connectTimeoutMs ?? ROOTS_UPTAKE_BOUND_MS;
  }
}

export function isProfileEntry(entry: ServerEntry): entry is ProfileEntry {
  return entry instanceof ProfileEntry;
}

/** What a child for `profile` declares in its initialize: only what the host can answer. */
export function profileCapabilities(profile: HostProfile): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (profile.sampling === true) capabilities.sampling = {};
  const modes = profile.elicitation ?? [];
  if (modes.length > 0) {
    capabilities.elicitation = {
      ...(modes.includes("form") ? { form: {} } : {}),
      ...(modes.includes("url") ? { url: {} } : {}),
    };
  }
  if (profile.extensions !== undefined) capabilities.extensions = { ...profile.extensions };
  // One child per roots set: its roots never change, so it never sends list_changed.
  if (profile.roots !== undefined) capabilities.roots = {};
  return capabilities;
}
