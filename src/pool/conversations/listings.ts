/**
 * Tool listings of a conversation row: per client, unless the row declares
 * a share. A listing belongs to one client, or — under share names an operator vouches
 * for — to every conversation of one tenant that resolves to the same names over the same
 * connection. Each listing has a binding, an opaque token a call may present: it is
 * refused before anything is sent when its listing stopped being served (`stale-tools`)
 * or when the share names it was listed under are no longer the caller's
 * (`binding-changed`).
 *
 * A listing stops being served on permissionsChanged(), toolsChanged(), the server's own
 * tools/list_changed, its `definitionTtlMs`, a client replacement (per-client listings)
 * and a reconfigured row.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../../config/rows.js";
import type { ShareNames } from "../../config/conversation.js";
import { canonicalJson } from "../core/fingerprint.js";
import type { ServerEntry } from "../server/entry.js";
import { buildToolIndex, type IndexedTool } from "../catalog/tool-index.js";
import { connectionHash } from "../catalog/tools-cache.js";

/**
 * Listings kept per row, bindings included. Past it the oldest are forgotten and their
 * bindings answer `stale-tools`: a caller lists again, and memory stays bounded however
 * many conversations come and go.
 */
export const MAX_LISTINGS_PER_SERVER = 1024;

export interface Listing {
  /** The binding calls present; opaque, unguessable, never reused. */
  readonly token: string;
  readonly serverId: string;
  /** The tenant the listing was made for ("" for none): never served to another. */
  readonly tenant: string;
  readonly tools: readonly IndexedTool[];
  readonly byQualified: ReadonlyMap<string, IndexedTool>;
  /** Clock reading (the registry's `now`) when the answer arrived. */
  readonly listedAt: number;
  /** The share key it was listed under, for a shared listing. */
  readonly shareKey: string | undefined;
  /** The conversation key and client id, for a per-client listing. */
  readonly conversation: string | undefined;
  readonly clientId: number | undefined;
  /** Cleared when the listing stops being served. */
  valid: boolean;
}

/**
 * The key a shared listing is kept under: the row, its connection (a changed url or
 * command never reuses a list), the tenant (never shared across tenants) and both names.
 */
export function shareKeyOf(row: McpServerConfig, tenant: string, names: ShareNames): string {
  return createHash("sha256")
    .update(
      canonicalJson([
        row.id,
        connectionHash(row),
        tenant,
        names.configuration,
        names.authorization,
      ]),
    )
    .digest("hex");
}

/** Whether two share-name answers are the same names (both absent included). */
export function sameNames(a: ShareNames | undefined, b: ShareNames | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.configuration === b.configuration && a.authorization === b.authorization;
}

/** The part of a definition a call relies on: what a replacement client must list alike. */
export function definitionKey(tool: Tool): string {
  return canonicalJson({
    name: tool.name,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
    description: tool.description,
  });
}

export interface ListingInit {
  entry: ServerEntry;
  tools: Tool[];
  tenant: string;
  listedAt: number;
  shareKey?: string | undefined;
  conversation?: string | undefined;
  clientId?: number | undefined;
  maxDescriptionChars: number | undefined;
  onClash(key: string, message: string): void;
}

/**
 * A listing built the way the shared index builds definitions (naming, `[Label]`
 * prefixes, description caps, duplicate names), over the row's own registered entry.
 */
export function buildListing(init: ListingInit): Listing {
  // The index reads only id, row and tools of an entry; the conversation's list stands in
  // for the (never dialled) registered entry's.
  const standIn = { id: init.entry.id, row: init.entry.row, tools: init.tools } as ServerEntry;
  const index = buildToolIndex([standIn], {
    maxDescriptionChars: init.maxDescriptionChars,
    onClash: init.onClash,
  });
  const tools = index.ordered.map((indexed) => ({ ...indexed, entry: init.entry }));
  return {
    token: randomUUID(),
    serverId: init.entry.id,
    tenant: init.tenant,
    tools,
    byQualified: new Map(tools.map((indexed) => [indexed.qualified, indexed])),
    listedAt: init.listedAt,
    shareKey: init.shareKey,
    conversation: init.conversation,
    clientId: init.clientId,
    valid: true,
  };
}

/** One row's listings: by binding, by share key, and each conversation's latest. */
export class ListingStore {
  readonly #byToken = new Map<string, Listing>();
  readonly #shared = new Map<string, Listing>();
  readonly #byConversation = new Map<string, Listing>();

  /** How many listings are kept. */
  get size(): number {
    return this.#byToken.size;
  }

  add(listing: Listing): void {
    this.#byToken.set(listing.token, listing);
    if (listing.shareKey !== undefined) this.#replace(this.#shared, listing.shareKey, listing);
    if (listing.conversation !== undefined)
      this.#replace(this.#byConversation, listing.conversation, listing);
    while (this.#byToken.size > MAX_LISTINGS_PER_SERVER) {
      const oldest = this.#byToken.values().next().value as Listing;
      this.#forget(oldest);
    }
  }

  /** The listing a binding names, while it is served. */
  byToken(token: string, fresh: (listing: Listing) => boolean): Listing | undefined {
    return this.#served(this.#byToken.get(token), fresh);
  }

  shared(shareKey: string, fresh: (listing: Listing) => boolean): Listing | undefined {
    return this.#served(this.#shared.get(shareKey), fresh);
  }

  /** The conversation's latest per-client listing, while it is served. */
  ofConversation(conversation: string, fresh: (listing: Listing) => boolean): Listing | undefined {
    return this.#served(this.#byConversation.get(conversation), fresh);
  }

  /** Stops serving every listing `match` selects; their bindings answer `stale-tools`. */
  invalidate(match: (listing: Listing) => boolean): void {
    for (const listing of [...this.#byToken.values()]) if (match(listing)) this.#forget(listing);
  }

  #served(listing: Listing | undefined, fresh: (listing: Listing) => boolean): Listing | undefined {
    if (listing === undefined) return undefined;
    if (listing.valid && fresh(listing)) return listing;
    this.#forget(listing);
    return undefined;
  }

  #replace(map: Map<string, Listing>, key: string, listing: Listing): void {
    const previous = map.get(key);
    map.set(key, listing);
    // A per-client listing replaced by its conversation's next one is not served again;
    // a shared one replaced under the same names is the same list, listed later.
    if (previous !== undefined && previous !== listing) this.#forget(previous);
  }

  #forget(listing: Listing): void {
    listing.valid = false;
    this.#byToken.delete(listing.token);
    if (listing.shareKey !== undefined && this.#shared.get(listing.shareKey) === listing)
      this.#shared.delete(listing.shareKey);
    if (
      listing.conversation !== undefined &&
      this.#byConversation.get(listing.conversation) === listing
    )
      this.#byConversation.delete(listing.conversation);
  }
}
