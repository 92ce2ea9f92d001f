/**
 * Per-conversation servers from an agent (SPEC B9): `client.conversations` (leases,
 * terminate, listings, counts) and `client.withIdentity(identity)`, a handle that names the
 * conversation on every call and listing so the caller does not have to. Verify the caller
 * at your door before you name an identity: the daemon takes it at its word.
 */
import type { CallOptions, PoolClient } from "./client.js";
import {
  type CallToolResult,
  type ConversationIdentity,
  type ConversationSelector,
  type ConversationServerStats,
  type ConversationTools,
  defined,
  type MethodName,
  type ParamsOf,
  type ResultOf,
  type TerminateResult,
  type ToolDefinition,
} from "mcpool-protocol";

/** A hold on one conversation's client; the daemon lets go when this connection closes. */
export interface ConversationLeaseHandle extends AsyncDisposable {
  readonly leaseId: string;
  readonly serverId: string;
  readonly keyHash: string;
  /** Lets the client go; idempotent. */
  release(): Promise<void>;
}

export interface ConversationsClient {
  /**
   * Holds `identity`'s client on `serverId` — opening it if needed — until released, so it
   * is never evicted, swept or ended mid-turn. Refused at once (`pool-full`) when full.
   */
  acquire(
    serverId: string,
    identity: ConversationIdentity,
    options?: { signal?: AbortSignal },
  ): Promise<ConversationLeaseHandle>;
  /** The conversation's tools with a binding per row; refused rows are named, not thrown. */
  tools(
    identity: ConversationIdentity,
    options?: { servers?: readonly string[]; names?: readonly string[] },
  ): Promise<ConversationTools>;
  /** Ends remote sessions and reports each outcome (`resolved` only for the three good ones). */
  terminate(
    selector: ConversationSelector,
    options?: { servers?: readonly string[]; timeoutMs?: number },
  ): Promise<readonly TerminateResult[]>;
  /** Counts only, per conversation row. */
  stats(servers?: readonly string[]): Promise<readonly ConversationServerStats[]>;
  /** Every listing of the tenant (and the principal's own) is listed again before use. */
  permissionsChanged(selector?: { tenant?: string; principal?: string }): Promise<void>;
  /** Every listing of the rows (all when absent) is listed again before use. */
  toolsChanged(servers?: readonly string[]): Promise<void>;
}

/** A PoolClient's calls and listings for one conversation. */
export interface IdentifiedClient {
  readonly identity: Readonly<ConversationIdentity>;
  /** The shared tools and this conversation's, as the model is offered them. */
  tools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Promise<readonly ToolDefinition[]>;
  /** This conversation's tools with their bindings; later calls present them. */
  listTools(options?: {
    names?: readonly string[];
    servers?: readonly string[];
  }): Promise<ConversationTools>;
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions & { raw?: false },
  ): Promise<string>;
  call(
    name: string,
    args: Record<string, unknown> | undefined,
    options: CallOptions & { raw: true },
  ): Promise<CallToolResult>;
  acquire(serverId: string, options?: { signal?: AbortSignal }): Promise<ConversationLeaseHandle>;
  /** Ends this conversation's remote sessions. */
  terminate(options?: {
    servers?: readonly string[];
    timeoutMs?: number;
  }): Promise<readonly TerminateResult[]>;
}

export type Run = <M extends MethodName>(
  method: M,
  params: ParamsOf<M>,
  signal?: AbortSignal,
) => Promise<ResultOf<M>>;

export function conversationsClient(run: Run): ConversationsClient {
  return {
    async acquire(serverId, identity, options = {}) {
      const { leaseId, keyHash } = await run(
        "conversation/acquire",
        { serverId, identity },
        options.signal,
      );
      let released: Promise<void> | undefined;
      const release = (): Promise<void> =>
        (released ??= run("conversation/release", { leaseId }).then(() => undefined));
      return { leaseId, serverId, keyHash, release, [Symbol.asyncDispose]: release };
    },
    tools: (identity, options = {}) => run("conversation/tools", defined({ identity, ...options })),
    terminate: (selector, options = {}) =>
      run("conversation/terminate", defined({ ...selector, ...options })),
    stats: (servers) => run("conversation/stats", defined({ servers })),
    async permissionsChanged(selector = {}) {
      await run("conversation/permissions-changed", defined({ ...selector }));
    },
    async toolsChanged(servers) {
      await run("conversation/tools-changed", defined({ servers }));
    },
  };
}

/** The handle `client.withIdentity(identity)` returns. */
export function identified(
  client: Pick<PoolClient, "tools" | "call" | "conversations">,
  identity: ConversationIdentity,
): IdentifiedClient {
  const fixed = Object.freeze({ ...identity });
  /** The bindings of the last listTools(): a call presents them, so a stale tool is refused. */
  let bindings: Record<string, string> | undefined;
  const call = (
    name: string,
    args?: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<string | CallToolResult> =>
    client.call(name, args, {
      ...options,
      identity: fixed,
      ...(options.bindings === undefined && bindings !== undefined ? { bindings } : {}),
    } as CallOptions & { raw: true });
  return {
    identity: fixed,
    tools: (options = {}) => client.tools({ ...options, identity: fixed }),
    async listTools(options = {}) {
      const listed = await client.conversations.tools(fixed, options);
      bindings = { ...bindings, ...listed.bindings };
      return listed;
    },
    call: call as IdentifiedClient["call"],
    acquire: (serverId, options) => client.conversations.acquire(serverId, fixed, options),
    terminate: (options = {}) =>
      client.conversations.terminate(
        defined({
          tenant: fixed.tenant,
          principal: fixed.principal,
          conversationId: fixed.conversationId,
        }),
        options,
      ),
  };
}
