/**
 * Per-conversation servers from an agent: `client.conversations` (leases,
 * terminate, listings, counts) and `client.withIdentity(identity)`, a handle that names the
 * conversation on every call and listing so the caller does not have to. Verify the caller
 * at your door before you name an identity: the daemon takes it at its word.
 */
import type {
  CallOptions,
  ConversationsClient,
  IdentifiedClient,
  PoolClient,
} from "./pool-client.js";
import {
  type CallToolResult,
  type ConversationIdentity,
  defined,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from "mcpool-protocol";

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
