/**
 * The wire's per-conversation methods, one small handler each, and `tools/list`
 * with an `identity`. A lease belongs to the connection that took it: `conversation/release`
 * from another connection does not find it, and a connection that closes releases every
 * lease it held. Identities go from the wire to the pool and nowhere else: not into logs,
 * not into what the daemon pushes.
 */
import { randomUUID } from "node:crypto";
import {
  defined,
  type CONVERSATION_METHODS,
  type ConversationIdentity,
  isHostProfile,
  type HostProfile,
} from "mcpool-protocol";

import type { ConversationLease } from "../../pool/conversations/registry.js";
import type {
  ConversationServerStats,
  ConversationTools,
  TerminateResult,
} from "../../pool/conversations/types.js";
import type { ConversationSelector } from "../../pool/core/identity.js";
import { McpPoolError } from "../../pool/core/errors.js";
import type { CallSignal, ToolDefinition, ToolDescription } from "../../pool/core/types.js";
import type { HandlerTable, RequestContext } from "../socket/server.js";

type Awaitable<T> = T | PromiseLike<T>;

/** Exactly what the handlers use of the pool's conversation registry. */
export interface ConversationsLike {
  acquire(
    serverId: string,
    identity: unknown,
    options: { signal?: CallSignal },
  ): Promise<ConversationLease>;
  tools(
    identity: unknown,
    options: { servers?: readonly string[]; names?: readonly string[] },
  ): Promise<ConversationTools>;
  terminate(
    selector: ConversationSelector,
    options: { servers?: readonly string[]; timeoutMs?: number },
  ): Promise<TerminateResult[]>;
  stats(servers?: readonly string[]): ConversationServerStats[];
  permissionsChanged(selector: { tenant?: string; principal?: string }): void;
  toolsChanged(servers?: readonly string[]): void;
  describe(
    qualified: string,
    scope: ReadonlySet<string> | undefined,
    options: { identity: ConversationIdentity; hidden?: boolean },
  ): Promise<ToolDescription | undefined>;
}

/** What the handlers use of the pool: its shared tools, and the registry when it has one. */
export interface ConversationPool {
  tools(options: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Awaitable<readonly ToolDefinition[]>;
  /** Lists again what a server's cache hint says ran out, before tools(). */
  fresh?(servers?: readonly string[]): Promise<void>;
  /** tools() as a host with `profile` would list them direct. */
  hostTools(
    profile: HostProfile,
    options: { names?: readonly string[]; servers?: readonly string[] },
  ): Promise<readonly ToolDefinition[]>;
  readonly conversations?: ConversationsLike;
}

/** The per-conversation methods are the protocol's CONVERSATION_METHODS, named once there. */
export type ConversationHandlers = Pick<
  HandlerTable,
  keyof typeof CONVERSATION_METHODS | "tools/list"
>;

export function createConversationHandlers(pool: ConversationPool): ConversationHandlers {
  /** Per connection id, per lease id: the leases it holds, released when it closes. */
  const held = new Map<number, Map<string, ConversationLease>>();

  const registry = (): ConversationsLike => {
    if (pool.conversations === undefined) {
      throw new McpPoolError("unknown-server", "this daemon serves no per-conversation rows");
    }
    return pool.conversations;
  };

  const leasesOf = (ctx: RequestContext): Map<string, ConversationLease> => {
    const { id, signal } = ctx.connection;
    let leases = held.get(id);
    if (leases === undefined) {
      const created = new Map<string, ConversationLease>();
      leases = created;
      held.set(id, created);
      signal.addEventListener(
        "abort",
        () => {
          held.delete(id);
          for (const lease of created.values()) lease.release();
        },
        { once: true },
      );
    }
    return leases;
  };

  return {
    "tools/list": async (params) => {
      const options = defined({ names: params.names, servers: params.servers });
      const profile = checkedProfile(params.profile);
      if (!profile) await pool.fresh?.(options.servers);
      const shared = profile ? await pool.hostTools(profile, options) : await pool.tools(options);
      if (params.identity === undefined || pool.conversations === undefined) return shared;
      const own = await pool.conversations.tools(params.identity, options);
      return [...shared, ...own.tools];
    },

    "conversation/acquire": async (params, ctx) => {
      const lease = await registry().acquire(
        params.serverId,
        params.identity as ConversationIdentity,
        {
          signal: ctx.signal,
        },
      );
      if (ctx.connection.signal.aborted) {
        lease.release();
        throw new McpPoolError("closed", "the connection closed while the lease was taken");
      }
      const leaseId = randomUUID();
      leasesOf(ctx).set(leaseId, lease);
      return { leaseId, serverId: lease.serverId, keyHash: lease.keyHash };
    },

    "conversation/release": (params, ctx) => {
      const leases = held.get(ctx.connection.id);
      const lease = leases?.get(params.leaseId);
      leases?.delete(params.leaseId);
      lease?.release();
      return {};
    },

    "conversation/terminate": (params) => {
      const { servers, timeoutMs, tenant, principal, conversationId } = params;
      return registry().terminate(
        defined({ tenant, principal, conversationId }),
        defined({ servers, timeoutMs }),
      );
    },

    "conversation/tools": (params) =>
      registry().tools(params.identity, defined({ servers: params.servers, names: params.names })),

    "conversation/stats": (params) => pool.conversations?.stats(params.servers) ?? [],

    "conversation/permissions-changed": (params) => {
      registry().permissionsChanged(
        defined({ tenant: params.tenant, principal: params.principal }),
      );
      return {};
    },

    "conversation/tools-changed": (params) => {
      registry().toolsChanged(params.servers);
      return {};
    },
  };
}

/** A wire `profile`, checked: refused `invalid-arguments` when it is not one. */
export function checkedProfile(value: unknown): HostProfile | undefined {
  if (value === undefined) return undefined;
  if (isHostProfile(value)) return value;
  throw new McpPoolError(
    "invalid-arguments",
    `"profile" must be { sampling?: boolean, elicitation?: ("form"|"url")[], extensions?: { [name]: object } (at most 4096 characters as JSON), roots?: { uri, name? }[] }`,
  );
}
