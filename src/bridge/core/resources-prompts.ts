/**
 * Resources, prompts and completion for the host, routed to the pooled servers in scope
 * through the client's per-server passthrough.
 *
 * One server in scope (`--server`): every request goes to it as the host sent it, pages and
 * cursors included. Pool scope: each list is the whole of every in-scope server's list (one
 * page, cursors drained here), named per naming.ts, and the tables that route a later read,
 * get, subscribe or completion are rebuilt from it; a name or URI the tables do not know is
 * looked up again once, by listing again, before it is refused. In pool scope only servers
 * whose capabilities are known to offer the feature are asked, so a lazy server that has not
 * started yet is not woken to list its prompts; `--server` always asks its server.
 */
import {
  ErrorCode,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import {
  defined,
  type AskingOptions,
  type CompletionReference,
  type HostProfile,
  type LoggingLevel,
  type PoolClient,
  type ServerNotification,
  type ServerState,
} from "mcpool-client";

import { RESOURCE_NOT_FOUND, Refusal, toMcpError } from "./errors.js";
import {
  SERVER_META_KEY,
  TemplateRoutes,
  scopedName,
  type PromptRoute,
  type Scope,
} from "./naming.js";
import { ResourceSubscriptions } from "./resource-subscriptions.js";
import type { Subscriber } from "./session.js";

export type { Subscriber };

// A server that pages forever (a cursor that never ends) must not hang a list: a hundred
// pages is far past any real server's resource list.
const MAX_PAGES = 100;

type Capability = "resources" | "prompts" | "completions" | "logging";

export interface PassthroughContext {
  client: PoolClient;
  scope: Scope;
  log(line: string): void;
}

/** One page of a per-server list, as the client returns it. */
type Page = { nextCursor?: string | undefined } & object;

/** A page's options: its cursor, and the host's profile (where its calls go). */
function paged(
  cursor: string | undefined,
  profile: HostProfile | undefined,
): { cursor?: string; profile?: HostProfile } {
  return defined({ cursor, profile });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function itemsOf(page: Page, key: string): Record<string, unknown>[] {
  const items = (page as Record<string, unknown>)[key];
  return Array.isArray(items) ? items.filter(isRecord) : [];
}

async function drain(
  list: (cursor?: string) => Promise<Page>,
  key: string,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await list(cursor);
    out.push(...itemsOf(result, key));
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return out;
}

/** What a merged list says of its scope: private when a server said its page is. */
interface PrivateHint {
  cacheScope?: "private";
}

/** An item of one server's list, renamed for pool scope and marked with its server. */
function labelled(item: Record<string, unknown>, state: ServerState, fallbackName: string) {
  const meta = isRecord(item._meta) ? item._meta : {};
  return {
    ...item,
    name: scopedName(state.slug, typeof item.name === "string" ? item.name : fallbackName, false),
    _meta: { ...meta, [SERVER_META_KEY]: state.id },
  };
}

export class ResourcesPromptsRouter {
  readonly #ctx: PassthroughContext;
  #uris = new Map<string, string>();
  #templates = new TemplateRoutes();
  #prompts = new Map<string, PromptRoute>();
  /** The sessions' resource subscriptions (resource-subscriptions.ts). */
  readonly #subscriptions: ResourceSubscriptions;
  readonly #warned = new Set<string>();

  constructor(ctx: PassthroughContext) {
    this.#ctx = ctx;
    this.#subscriptions = new ResourceSubscriptions({
      client: ctx.client,
      route: (uri) => this.#resourceServer(uri),
      ask: (work) => this.#ask(work),
    });
  }

  /** Forgets a closed session's subscriptions, unsubscribing upstream what nobody else holds. */
  closeSession(session: Subscriber): Promise<void> {
    return this.#subscriptions.closeSession(session);
  }

  /**
   * A pooled server's `notifications/resources/updated`, to the sessions subscribed to it
   * (to the one whose host `taskOwner` names, when one does).
   */
  deliverUpdated(
    serverId: string,
    notification: ServerNotification,
    about: { taskOwner?: string; subscription?: string },
  ): void {
    this.#subscriptions.deliverUpdated(serverId, notification, about.taskOwner, about.subscription);
  }

  /**
   * Sets the pooled server's log level, where one server is in scope and offers logging: on
   * the connection the calls of a host of `profile` go to (none: the row's own).
   */
  async setLoggingLevel(level: LoggingLevel, profile?: HostProfile): Promise<void> {
    const single = this.#ctx.scope.single;
    if (single === undefined) return;
    const servers = await this.#servers("logging");
    // A modern server reads each host's own level in its requests' envelopes:
    // setting it for the connection would set it for every other host's requests.
    if (servers.length === 0 || servers.every((state) => state.era === "modern")) return;
    await this.#ctx.client.setLoggingLevel(single, level, profile ? { profile } : {});
  }

  // ── Resources ──────────────────────────────────────────────────────────────────────

  async listResources(
    cursor: string | undefined,
    profile?: HostProfile,
  ): Promise<ListResourcesResult> {
    const { single } = this.#ctx.scope;
    if (single !== undefined) {
      if ((await this.#servers("resources")).length === 0) return { resources: [] };
      const page = await this.#ask(() =>
        this.#ctx.client.listResources(single, paged(cursor, profile)),
      );
      return page as ListResourcesResult;
    }
    const { lists, hint } = await this.#drainEach("resources", (id, c) =>
      this.#ctx.client.listResources(id, paged(c, profile)),
    );
    const uris = new Map<string, string>();
    const resources: Record<string, unknown>[] = [];
    for (const [state, items] of lists) {
      for (const item of items) {
        if (typeof item.uri !== "string") continue;
        const owner = uris.get(item.uri);
        if (owner !== undefined) {
          this.#warn(
            `resource:${item.uri}`,
            `mcpool bridge: servers "${owner}" and "${state.id}" both list ${item.uri}; "${owner}" keeps it`,
          );
          continue;
        }
        uris.set(item.uri, state.id);
        resources.push(labelled(item, state, item.uri));
      }
    }
    this.#uris = uris;
    return { resources, ...hint } as ListResourcesResult;
  }

  async listResourceTemplates(
    cursor: string | undefined,
    profile?: HostProfile,
  ): Promise<ListResourceTemplatesResult> {
    const { single } = this.#ctx.scope;
    if (single !== undefined) {
      if ((await this.#servers("resources")).length === 0) return { resourceTemplates: [] };
      const page = await this.#ask(() =>
        this.#ctx.client.listResourceTemplates(single, paged(cursor, profile)),
      );
      return page as ListResourceTemplatesResult;
    }
    const { lists, hint } = await this.#drainEach("resourceTemplates", (id, c) =>
      this.#ctx.client.listResourceTemplates(id, paged(c, profile)),
    );
    const templates = new TemplateRoutes();
    const resourceTemplates: Record<string, unknown>[] = [];
    for (const [state, items] of lists) {
      for (const item of items) {
        if (typeof item.uriTemplate !== "string") continue;
        if (!templates.add(state.id, item.uriTemplate)) continue;
        resourceTemplates.push(labelled(item, state, item.uriTemplate));
      }
    }
    this.#templates = templates;
    return { resourceTemplates, ...hint } as ListResourceTemplatesResult;
  }

  /** `asking`: who answers what a modern server asks inside the read (a modern host). */
  async readResource(uri: string, asking?: AskingOptions): Promise<ReadResourceResult> {
    const serverId = await this.#resourceServer(uri);
    const result = await this.#ask(() =>
      this.#ctx.client.readResource(serverId, uri, asking ?? {}),
    );
    return result as ReadResourceResult;
  }

  /** `profile`: the session's host's: held where its requests go (its child, if any). */
  subscribe(session: Subscriber, uri: string, profile?: HostProfile): Promise<void> {
    return this.#subscriptions.subscribe(session, uri, profile);
  }

  unsubscribe(session: Subscriber, uri: string): Promise<void> {
    return this.#subscriptions.unsubscribe(session, uri);
  }

  // ── Prompts ────────────────────────────────────────────────────────────────────────

  async listPrompts(cursor: string | undefined, profile?: HostProfile): Promise<ListPromptsResult> {
    const { single } = this.#ctx.scope;
    if (single !== undefined) {
      if ((await this.#servers("prompts")).length === 0) return { prompts: [] };
      const page = await this.#ask(() =>
        this.#ctx.client.listPrompts(single, paged(cursor, profile)),
      );
      return page as ListPromptsResult;
    }
    const { lists, hint } = await this.#drainEach("prompts", (id, c) =>
      this.#ctx.client.listPrompts(id, paged(c, profile)),
    );
    const routes = new Map<string, PromptRoute>();
    const prompts: Record<string, unknown>[] = [];
    for (const [state, items] of lists) {
      for (const item of items) {
        if (typeof item.name !== "string") continue;
        const named = labelled(item, state, item.name);
        if (routes.has(named.name)) continue;
        routes.set(named.name, { serverId: state.id, name: item.name });
        prompts.push(named);
      }
    }
    this.#prompts = routes;
    return { prompts, ...hint } as ListPromptsResult;
  }

  async getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    asking?: AskingOptions,
  ): Promise<GetPromptResult> {
    const route = await this.#promptRoute(name);
    const result = await this.#ask(() =>
      this.#ctx.client.getPrompt(route.serverId, route.name, args, asking ?? {}),
    );
    return result as GetPromptResult;
  }

  // ── Completion ─────────────────────────────────────────────────────────────────────

  /** Completes where the host's calls go: its profile's child, when it has one. */
  async complete(
    params: CompleteRequest["params"],
    profile?: HostProfile,
  ): Promise<CompleteResult> {
    const { ref, argument, context } = params;
    let serverId: string;
    let forwarded: CompletionReference;
    if (ref.type === "ref/prompt") {
      const route = await this.#promptRoute(ref.name);
      serverId = route.serverId;
      forwarded = { ...ref, name: route.name };
    } else {
      serverId =
        this.#ctx.scope.single ??
        this.#templates.exact(ref.uri) ??
        (await this.#resourceServer(ref.uri));
      forwarded = { ...ref };
    }
    const request = { ref: forwarded, argument, ...(context !== undefined ? { context } : {}) };
    const result = await this.#ask(() =>
      this.#ctx.client.complete(serverId, request, profile === undefined ? {} : { profile }),
    );
    return result as CompleteResult;
  }

  // ── Routing ────────────────────────────────────────────────────────────────────────

  async #resourceServer(uri: string): Promise<string> {
    const single = this.#ctx.scope.single;
    if (single !== undefined) return single;
    const known = this.#uris.get(uri) ?? this.#templates.match(uri);
    if (known !== undefined) return known;
    await Promise.all([this.listResources(undefined), this.listResourceTemplates(undefined)]);
    const found = this.#uris.get(uri) ?? this.#templates.match(uri);
    if (found !== undefined) return found;
    throw new Refusal(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
  }

  async #promptRoute(name: string): Promise<PromptRoute> {
    const single = this.#ctx.scope.single;
    if (single !== undefined) return { serverId: single, name };
    const known = this.#prompts.get(name);
    if (known !== undefined) return known;
    await this.listPrompts(undefined);
    const found = this.#prompts.get(name);
    if (found !== undefined) return found;
    throw new Refusal(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
  }

  /** In-scope servers worth asking for `capability` (module comment). */
  async #servers(capability: Capability): Promise<ServerState[]> {
    const { scope } = this.#ctx;
    const states = await this.#ask(() => this.#ctx.client.state());
    return states.filter((state) => {
      if (!scope.includes(state.id) || state.status === "disabled") return false;
      if (state.capabilities === undefined) return scope.single !== undefined;
      return state.capabilities[capability] !== undefined;
    });
  }

  /** Each in-scope server's whole list; a server that fails is left out and reported once. */
  async #drainEach(
    key: string,
    list: (serverId: string, cursor?: string) => Promise<Page>,
  ): Promise<{ lists: [ServerState, Record<string, unknown>[]][]; hint: PrivateHint }> {
    const capability = key === "prompts" ? "prompts" : "resources";
    const servers = await this.#servers(capability);
    // A page a server says is its caller's own makes the merged list so too (SEP-2549).
    const hint: PrivateHint = {};
    const seen = (page: Page): Page => {
      if ((page as { cacheScope?: unknown }).cacheScope === "private") hint.cacheScope = "private";
      return page;
    };
    const settled = await Promise.allSettled(
      servers.map((state) => drain((cursor) => list(state.id, cursor).then(seen), key)),
    );
    const out: [ServerState, Record<string, unknown>[]][] = [];
    settled.forEach((result, i) => {
      const state = servers[i] as ServerState;
      if (result.status === "fulfilled") out.push([state, result.value]);
      else {
        this.#warn(
          `${key}:${state.id}`,
          `mcpool bridge: ${key} of "${state.id}" left out: ${(result.reason as Error)?.message ?? result.reason}`,
        );
      }
    });
    return { lists: out, hint };
  }

  async #ask<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toMcpError(error);
    }
  }

  #warn(key: string, line: string): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#ctx.log(line);
  }
}
