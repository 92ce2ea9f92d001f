/**
 * Listings and calls of per-conversation rows (docs/configuration.md, "Per-conversation
 * servers"): tool lists, and nothing sent unchecked. A conversation is served the tools of its own
 * client, or — under share names the operator vouches for — one listing shared by the conversations
 * of a tenant that resolve to the same names. Every call is checked against the listing it was
 * resolved from right before it is sent, on the client that sends it: `stale-tools` when the
 * listing stopped being served, `binding-changed` when the names moved. The budgets, clients and
 * endings are each row's own (conversations/row.ts).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ShareNames } from "../../config/conversation.js";
import { slugOf } from "../../config/rows.js";
import type { ConversationClient } from "./client.js";
import { buildListing, definitionKey, sameNames, shareKeyOf, type Listing } from "./listings.js";
import type { ConversationRow } from "./row.js";
import type { ConversationTools } from "./types.js";
import type { ListingScope } from "./registry.js";
import { McpPoolError } from "../core/errors.js";
import { upstreamError } from "../calls/upstream-error.js";
import {
  checkIdentity,
  conversationKey,
  identityOfKey,
  type ConversationIdentity,
} from "../core/identity.js";
import { listAllTools } from "../mcp/list-tools.js";
import { qualifiedName } from "../catalog/naming.js";
import type { Invoked } from "../calls/result-cache.js";
import { finishResult, forwardable, resultBudget } from "../calls/results.js";
import type { ServerEntry } from "../server/entry.js";
import { holding, sessionLost } from "../server/session.js";
import type { IndexedTool } from "../catalog/tool-index.js";
import { upstreamCaller, upstreamParams, type CallOptions } from "../calls/options.js";
import type { CallSignal, PoolLog } from "../core/types.js";

// Listings dropped in a row because the share names moved while each was in flight; past
// it the caller is refused (binding-changed) instead of listing forever.
const MAX_RELISTS = 3;

/** A tool of a conversation's listing, resolved for one call: where and for whom it goes. */
export interface ConversationTool extends IndexedTool {
  conversation: {
    served: ConversationRow;
    identity: ConversationIdentity;
    /** The binding the caller presented, if any. */
    binding: string | undefined;
    listing: Listing;
  };
}

/**
 * What listings and calls use of the registry: its rows. Clients and budgets are each
 * row's own (conversations/row.ts).
 */
export interface CallsHost {
  /** The conversation rows in scope (all when absent), in configuration order. */
  rows(servers?: readonly string[]): ConversationRow[];
  /** Whether `row` is still the registry's (not removed since it was resolved). */
  isCurrent(row: ConversationRow): boolean;
  now(): number;
  assertOpen(): void;
}

export interface CallsInit {
  share:
    | ((serverId: string, identity: Readonly<ConversationIdentity>) => ShareNames | undefined)
    | undefined;
  entryOf(serverId: string): ServerEntry | undefined;
  log: PoolLog;
  maxResultChars: number | undefined;
  maxDescriptionChars: number | undefined;
  callTimeoutMs: number | undefined;
  connectTimeoutMs: number | undefined;
}

export class ConversationCalls {
  readonly #host: CallsHost;
  readonly #init: CallsInit;
  readonly #reportedClashes = new Set<string>();

  constructor(host: CallsHost, init: CallsInit) {
    this.#host = host;
    this.#init = init;
  }

  /**
   * The conversation's tools on every conversation row in scope, with the binding of each
   * listing. A row whose listing is refused (a budget, a failed open) is left out and named
   * in `refused`; a missing or refused identity refuses the whole listing (`no-identity`).
   */
  async tools(identity: unknown, options: ListingScope = {}): Promise<ConversationTools> {
    this.#host.assertOpen();
    const names = options.names ? new Set(options.names) : undefined;
    const scoped = this.#host.rows(options.servers);
    const checked = scoped.map((served) => ({
      served,
      identity: checkIdentity(identity, served.settings.rules, served.row.id),
    }));
    const listed = await Promise.all(
      checked.map(({ served, identity }) =>
        this.#listing(served, identity).then(
          (listing) => ({ served, listing }),
          (error: unknown) => ({ served, error }),
        ),
      ),
    );
    const out: ConversationTools = { tools: [], bindings: {}, refused: [] };
    for (const item of listed) {
      const id = item.served.row.id;
      if ("error" in item) {
        const error = item.error;
        out.refused.push({
          serverId: id,
          code: error instanceof McpPoolError ? error.code : "error",
          message: (error as Error).message,
          ...(error instanceof McpPoolError && typeof error.detail.limit === "string"
            ? { limit: error.detail.limit }
            : {}),
        });
        continue;
      }
      out.bindings[id] = item.listing.token;
      const hidden = new Set(item.served.row.hiddenTools ?? []);
      for (const indexed of item.listing.tools) {
        if (hidden.has(indexed.tool.name)) continue;
        if (names && !names.has(indexed.qualified)) continue;
        out.tools.push(indexed.definition);
      }
    }
    return out;
  }

  /** Every listing of the tenant (and the principal's own) stops being served. */
  permissionsChanged(selector: { tenant?: string; principal?: string } = {}): void {
    for (const served of this.#host.rows()) {
      served.listings.invalidate((listing) => {
        if (selector.tenant !== undefined && listing.tenant !== selector.tenant) return false;
        if (listing.shareKey !== undefined || selector.principal === undefined) return true;
        return principalOfKey(listing.conversation) === selector.principal;
      });
    }
  }

  /** Every listing of the rows in scope (all when absent) stops being served. */
  toolsChanged(servers?: readonly string[]): void {
    for (const served of this.#host.rows(servers)) served.listings.invalidate(() => true);
  }

  /**
   * The conversation tool a qualified name answers to, or undefined when no conversation
   * row in scope could have made the name. Lists (opening the client) when the
   * conversation has no fresh listing; a presented binding is checked here and again
   * before the send.
   */
  async resolve(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    opts: CallOptions,
  ): Promise<ConversationTool | undefined> {
    const candidates = [...this.#host.rows()].filter(
      (served) =>
        (!scope || scope.has(served.row.id)) &&
        qualified.startsWith(qualifiedName(slugOf(served.row), "")),
    );
    for (const served of candidates) {
      const id = served.row.id;
      const identity = checkIdentity(opts.identity, served.settings.rules, id);
      const binding = opts.bindings?.[id];
      const listing =
        binding !== undefined
          ? this.#bound(served, identity, binding)
          : await this.#listing(served, identity);
      const indexed = listing.byQualified.get(qualified);
      if (indexed === undefined) continue;
      if (!opts.hidden && (served.row.hiddenTools ?? []).includes(indexed.tool.name)) continue;
      const entry = this.#init.entryOf(id) ?? indexed.entry;
      return { ...indexed, entry, conversation: { served, identity, binding, listing } };
    }
    return undefined;
  }

  /**
   * Sends a resolved call on the conversation's client, opening it when it has none, and
   * returns it as the pool's call pipeline does. Charged to the row's operations until the
   * call settles; never retried on another client (neither call is repeated).
   */
  async invoke(
    indexed: ConversationTool,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<Invoked> {
    const served = indexed.conversation.served as ConversationRow;
    const { identity } = indexed.conversation;
    const row = served.row;
    if (!this.#host.isCurrent(served)) {
      throw new McpPoolError("unknown-server", `unknown server "${row.id}"`, { serverId: row.id });
    }
    const uncharge = served.charge(served.keyHashOf(conversationKey(identity)));
    const timeoutMs = opts.timeoutMs ?? row.callTimeoutMs ?? this.#init.callTimeoutMs;
    let client: ConversationClient | undefined;
    let result: CallToolResult;
    try {
      client = await served.hold(identity);
      await this.#confirm(served, indexed, client);
      const connection = client.connection;
      if (connection === undefined) throw lostError(row.id, indexed.tool.name);
      // As a shared row's call: the answer checked in one pass and forwarded as received.
      result = forwardable(
        await holding(connection, () =>
          connection.client.callTool(upstreamParams(indexed.tool.name, args, opts.meta), {
            timeout: timeoutMs,
            signal: opts.signal,
            onprogress: opts.onProgress,
            // The calling agent, to a modern server, as on a shared row.
            ...upstreamCaller(opts.caller ? { caller: opts.caller } : {}),
          }),
        ),
      );
    } catch (error) {
      throw this.#callError(served, client, error, indexed.tool.name, timeoutMs, opts.signal);
    } finally {
      if (client !== undefined) served.release(client);
      uncharge();
    }
    const maxChars = resultBudget(
      opts.maxResultChars,
      row.maxResultChars,
      this.#init.maxResultChars,
    );
    return finishResult(result, { serverId: row.id, maxChars, raw: opts.raw });
  }

  /** The listing a binding names, checked for the caller; throws before anything is sent. */
  #bound(served: ConversationRow, identity: ConversationIdentity, token: string): Listing {
    const listing = served.listings.byToken(token, this.#fresh(served));
    const id = served.row.id;
    if (
      listing === undefined ||
      listing.tenant !== (identity.tenant ?? "") ||
      (listing.conversation !== undefined && listing.conversation !== conversationKey(identity))
    ) {
      throw staleTools(id);
    }
    if (this.#shareKey(served, identity) !== listing.shareKey) throw bindingChanged(id);
    return listing;
  }

  /**
   * Right before the send, on the client that will send it: the names are asked again
   * and the listing must still be served. A bound call whose listing stopped being
   * served is refused (`stale-tools`), whose names moved is refused (`binding-changed`). A
   * call whose listing belonged to a replaced client, or an unbound call whose listing
   * went stale, goes only if the list served now holds the same definition.
   */
  async #confirm(
    served: ConversationRow,
    indexed: ConversationTool,
    client: ConversationClient,
  ): Promise<void> {
    const { identity, binding, listing } = indexed.conversation;
    const id = served.row.id;
    for (let attempt = 0; attempt < MAX_RELISTS; attempt++) {
      const shareKey = this.#shareKey(served, identity);
      const fresh = listing.valid && this.#fresh(served)(listing);
      if (shareKey === listing.shareKey && fresh) {
        if (listing.clientId === undefined || listing.clientId === client.id) return;
      } else if (binding !== undefined) {
        throw shareKey === listing.shareKey ? staleTools(id) : bindingChanged(id);
      }
      const now = await this.#listing(served, identity);
      const again = now.byQualified.get(indexed.qualified);
      if (again === undefined || definitionKey(again.tool) !== definitionKey(indexed.tool)) {
        throw staleTools(id);
      }
      // Nothing awaits between this check and the send.
      if (this.#shareKey(served, identity) === now.shareKey && now.valid) return;
    }
    throw bindingChanged(id);
  }

  /**
   * The listing a conversation is served from now: a fresh shared one under its names, or
   * its client's own; otherwise one listing on its client (joined by every caller wanting
   * the same). An answer that arrives under other names than it was sent under is dropped
   * and listed again.
   */
  async #listing(served: ConversationRow, identity: ConversationIdentity): Promise<Listing> {
    const key = conversationKey(identity);
    const fresh = this.#fresh(served);
    for (let attempt = 0; attempt < MAX_RELISTS; attempt++) {
      const names = this.#names(served, identity);
      const shareKey = names && shareKeyOf(served.row, identity.tenant ?? "", names);
      const current = served.current.get(key);
      const kept =
        shareKey !== undefined
          ? served.listings.shared(shareKey, fresh)
          : current?.usable && current.listing?.valid && fresh(current.listing)
            ? current.listing
            : undefined;
      if (kept !== undefined) {
        if (shareKey !== undefined && current !== undefined) current.lastShareKey = shareKey;
        return kept;
      }
      const flightKey = shareKey ?? `conversation:${key}`;
      let flight = served.listing.get(flightKey);
      if (flight === undefined) {
        flight = this.#list(served, identity, names, shareKey).finally(() =>
          served.listing.delete(flightKey),
        );
        served.listing.set(flightKey, flight);
      }
      const listing = await flight;
      if (listing !== undefined) return listing;
    }
    throw bindingChanged(served.row.id);
  }

  /** One tools/list on the conversation's client; undefined when the names moved meanwhile. */
  async #list(
    served: ConversationRow,
    identity: ConversationIdentity,
    names: ShareNames | undefined,
    shareKey: string | undefined,
  ): Promise<Listing | undefined> {
    const key = conversationKey(identity);
    const uncharge = served.charge(served.keyHashOf(key));
    let client: ConversationClient | undefined;
    try {
      client = await served.hold(identity);
      const connection = client.connection;
      if (connection === undefined) throw lostError(served.row.id, "tools/list");
      const budget = served.row.connectTimeoutMs ?? this.#init.connectTimeoutMs;
      const tools = await holding(connection, () =>
        listAllTools(connection.client, budget === undefined ? {} : { timeout: budget }),
      );
      if (!sameNames(names, this.#names(served, identity))) return undefined;
      const listing = buildListing({
        entry: this.#init.entryOf(served.row.id) ?? client.entry,
        tools,
        tenant: identity.tenant ?? "",
        listedAt: this.#host.now(),
        shareKey,
        conversation: shareKey === undefined ? key : undefined,
        clientId: shareKey === undefined ? client.id : undefined,
        maxDescriptionChars: this.#init.maxDescriptionChars,
        onClash: (clash, message) => {
          if (this.#reportedClashes.has(clash)) return;
          this.#reportedClashes.add(clash);
          this.#init.log.error?.(`mcpool: ${message}`);
        },
      });
      served.listings.add(listing);
      if (shareKey !== undefined) client.lastShareKey = shareKey;
      else client.listing = listing;
      return listing;
    } catch (error) {
      throw this.#callError(served, client, error, "tools/list", undefined, undefined);
    } finally {
      if (client !== undefined) served.release(client);
      uncharge();
    }
  }

  #names(served: ConversationRow, identity: ConversationIdentity): ShareNames | undefined {
    const share = this.#init.share;
    if (share === undefined) return served.row.conversation?.share;
    return share(served.row.id, Object.freeze({ ...identity }));
  }

  #shareKey(served: ConversationRow, identity: ConversationIdentity): string | undefined {
    const names = this.#names(served, identity);
    return names && shareKeyOf(served.row, identity.tenant ?? "", names);
  }

  #fresh(served: ConversationRow): (listing: Listing) => boolean {
    const ttl = served.settings.definitionTtlMs;
    if (!ttl) return () => true;
    const now = this.#host.now();
    return (listing) => now - listing.listedAt < ttl;
  }

  /** A failure of a conversation's request, as the pool's codes say it. */
  #callError(
    served: ConversationRow,
    client: ConversationClient | undefined,
    error: unknown,
    name: string,
    timeoutMs: number | undefined,
    signal: CallSignal | undefined,
  ): unknown {
    const serverId = served.row.id;
    if (signal?.aborted || error instanceof McpPoolError) return error;
    if (sessionLost(error) && client !== undefined) {
      // The server forgot the session it issued: this client is done, the next use opens
      // another for the same conversation. The request is not sent again.
      client.expired = true;
      served.drop(client);
      return new McpPoolError(
        "session-expired",
        `server "${serverId}" no longer knows this conversation's session; the next call opens a new one`,
        { serverId },
        { cause: error },
      );
    }
    return upstreamError(error, {
      serverId,
      what: `call to "${name}"`,
      toolCall: true,
      timeoutMs,
      cutOff: () => lostError(serverId, name),
    });
  }
}

function principalOfKey(key: string | undefined): string | undefined {
  return key === undefined ? undefined : identityOfKey(key).principal;
}

function lostError(serverId: string, name: string): McpPoolError {
  return new McpPoolError(
    "connection-lost",
    `server "${serverId}" closed this conversation's connection during "${name}"; the next call opens a new one`,
    { serverId },
  );
}

function staleTools(serverId: string): McpPoolError {
  return new McpPoolError(
    "stale-tools",
    `the tools of server "${serverId}" this call was bound to are no longer served; list them again`,
    { serverId },
  );
}

function bindingChanged(serverId: string): McpPoolError {
  return new McpPoolError(
    "binding-changed",
    `the names the tools of server "${serverId}" were listed under have changed; list them again`,
    { serverId },
  );
}
