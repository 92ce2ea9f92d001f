/**
 * A shared row's child for one host profile (SPEC I4, I5): a ServerEntry like the row's own,
 * dialled declaring the profile's capabilities instead of the pool's, answering `roots/list`
 * with the profile's roots. Its life (dial, crash, backoff, idle reap) is the entry's; the
 * pool's HostProfiles (host-profiles.ts) makes one on first use and says which calls it serves.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { HostProfile } from "mcpool-protocol";
import type { McpServerConfig } from "../../config/rows.js";
import type { Connection } from "./connection.js";
import type { EntryContext } from "./context.js";
import { ServerEntry } from "./entry.js";

/**
 * How long a child with roots waits, at its start, for its server to ask them, ms: a row
 * known to ask (server-filesystem asks right after `initialized`) waits longer than one not
 * yet known to, whose wait is paid once — a row that never asks is then served by its own
 * connection (host-profiles.ts).
 */
export const ROOTS_ASK_WAIT_MS = { known: 5_000, unknown: 1_000 } as const;

export class ProfileEntry extends ServerEntry {
  /** The profile key (mcpool-protocol's profileKey, or its capability key): its calls' route. */
  readonly key: string;
  readonly profile: HostProfile;
  /** The server asked this child for its roots. */
  asksRoots = false;
  /** How long its first use waits for its server to ask its roots (ROOTS_ASK_WAIT_MS). */
  rootsWaitMs: number = ROOTS_ASK_WAIT_MS.unknown;
  /** The server asked since the last dial began. */
  #askedSinceDial = false;
  readonly #waiting = new Set<() => void>();
  /** Per connection, its first use's wait (rootsTaken). */
  readonly #taken = new WeakMap<Connection, Promise<Connection>>();

  constructor(row: McpServerConfig, context: EntryContext, profile: HostProfile, key: string) {
    super(row, context);
    this.profile = profile;
    this.key = key;
  }

  /** The server asked for the roots (its `roots/list`, answered). */
  rootsAsked(): void {
    this.asksRoots = true;
    this.#askedSinceDial = true;
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
  }

  /**
   * A child with roots is ready once its server has taken them in (SPEC I5): a server that
   * asks for roots asks right after `initialized` and applies the answer on its own time
   * (server-filesystem checks each directory first), so a first call sent at once could be
   * served with the row's own configuration. Its first use waits for the ask (bounded by
   * rootsWaitMs), then one round trip, which the server reads after our answer.
   */
  override ensure(options: { ignoreBackoff?: boolean } = {}): Promise<Connection> {
    if (this.profile.roots === undefined) return super.ensure(options);
    if (this.connection === undefined && !this.connecting) this.#askedSinceDial = false;
    return super.ensure(options).then((connection) => {
      let taken = this.#taken.get(connection);
      if (taken === undefined) {
        taken = this.#rootsTaken(connection);
        this.#taken.set(connection, taken);
      }
      return taken;
    });
  }

  async #rootsTaken(connection: Connection): Promise<Connection> {
    await this.rootsWindow();
    if (this.#askedSinceDial) {
      await connection.client.ping({ timeout: this.rootsWaitMs }).catch(() => undefined);
    }
    return connection;
  }

  /** Resolves once the server has asked its roots since its last dial, or rootsWaitMs later. */
  rootsWindow(): Promise<void> {
    if (this.#askedSinceDial) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.rootsWaitMs);
      this.#waiting.add(wake);
    });
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
