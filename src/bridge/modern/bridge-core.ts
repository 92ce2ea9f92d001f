/**
 * What the modern side needs of the bridge, which the legacy room's bridge server builds: a
 * file of types alone, so the bridge names it without loading the SDK v2 (modern/bridge.ts
 * does, and loads only when a modern host arrives).
 */
import type { ConversationIdentity, HostProfile, PoolClient } from "mcpool-client";
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";

import type { Scope } from "../core/naming.js";
import type { ModernCatalog } from "../catalog/modern-catalog.js";
import type { ResourcesPromptsRouter } from "../core/resources-prompts.js";

/** What the modern side needs of the bridge (legacy/bridge-server.ts builds it). */
export interface BridgeCore {
  upstream: PoolClient;
  scope: Scope;
  capabilities: ServerCapabilities;
  /**
   * The servers in scope speak only the legacy era, as last found: a host's
   * `server/discover` is answered as such a server answers it direct, so the host falls back
   * to `initialize`.
   */
  readonly legacyOnly: boolean;
  /** Whether a server in scope takes resource subscriptions (a host's listen may name URIs). */
  resourceSubscriptions: boolean;
  instructions: string | undefined;
  /** The lone server's own serverInfo (offer.ts), or mcpool's. */
  serverInfo: { name: string; version: string };
  /** Every definition in scope for a host of `profile`, as a legacy session lists them. */
  listTools(identity: ConversationIdentity, profile: HostProfile): Promise<Tool[]>;
  /**
   * `--catalog` (catalog/on-demand.ts), as a modern host meets it: a list of the meta tools,
   * the first tools and what this serving unit's searches found, and the answers of
   * search_tools and describe_tool. call_tool is a call of the tool it names.
   */
  catalog?: ModernCatalog;
  /** The qualified name a host's tool name stands for. */
  qualify(name: string): Promise<string | undefined>;
  /** The pooled server a qualified name was listed from, when the bridge knows it. */
  serverOf(qualified: string): string | undefined;
  router: ResourcesPromptsRouter;
  /** A new conversation, for one host connection (conversation.ts connectionIdentity). */
  newIdentity(): ConversationIdentity;
  /** Whether every host of this bridge sees the same lists (no catalog, no per-host set). */
  sharedLists: boolean;
  /**
   * The cache hint (SEP-2549) the servers in scope gave their tool lists, as far as it
   * holds for the bridge's list: one server's entry, that server's own `ttlMs` and
   * `cacheScope` as it gave them; else `private` when a server says its list is its
   * caller's own. Empty when no server said anything that holds.
   */
  toolsHint(): Promise<{ ttlMs?: number; cacheScope?: "public" | "private" }>;
  log(line: string): void;
}
