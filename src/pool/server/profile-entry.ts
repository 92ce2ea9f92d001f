/**
 * A shared row's child for one host profile (SPEC I4, I5): a ServerEntry like the row's own,
 * dialled declaring the profile's capabilities instead of the pool's, answering `roots/list`
 * with the profile's roots. Its life (dial, crash, backoff, idle reap) is the entry's; the
 * pool's HostProfiles (host-profiles.ts) makes one on first use and says which calls it serves.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { HostProfile } from "mcpool-protocol";
import type { McpServerConfig } from "../../config/rows.js";
import type { EntryContext } from "./context.js";
import { ServerEntry } from "./entry.js";

export class ProfileEntry extends ServerEntry {
  /** The profile key (mcpool-protocol's profileKey, or its capability key): its calls' route. */
  readonly key: string;
  readonly profile: HostProfile;
  /** The server asked this child for its roots. */
  asksRoots = false;

  constructor(row: McpServerConfig, context: EntryContext, profile: HostProfile, key: string) {
    super(row, context);
    this.profile = profile;
    this.key = key;
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
  // One child per roots set: its roots never change, so it never sends list_changed.
  if (profile.roots !== undefined) capabilities.roots = {};
  return capabilities;
}
