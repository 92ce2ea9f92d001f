/**
 * A bridge's tools: the host's definitions in scope, the names they go by and the calls made
 * with them, for every session of the bridge, legacy or modern.
 *
 * - tools/list: the pool's definitions in scope (`parameters` as the inputSchema untouched;
 *   title, annotations, outputSchema and `_meta` from describe()); tools/call: `call(name,
 *   args, { raw: true })`, the CallToolResult returned as it came, isError included
 *   (errors.ts for refusals).
 * - Progress, cancellation and elicitation ride on the client's per-call routing: the host's
 *   progressToken gets that call's progress, the host's `notifications/cancelled` aborts the
 *   call (cancelled upstream by the daemon), and a pooled server's elicitation or sampling
 *   during the call goes to the host on the call's own stream when the host declared the
 *   capability (host-requests.ts).
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type {
  CallOptions,
  ConversationIdentity,
  HostProfile,
  PoolClient,
  ServerState,
} from "mcpool-client";

import { callFailure, toMcpError, unknownTool } from "../core/errors.js";
import { forLegacyHost } from "../core/offer.js";
import { identityFor } from "../core/conversation.js";
import { toolNames, type Scope, type ToolNames } from "../core/naming.js";
import { sessionCaller, type Extra, type Session, type Sessions } from "../core/session.js";
import { elicitFor, sampleFor } from "../core/host-requests.js";

/** Whose profile a listing names: a legacy session's, or a modern request's as it came. */
export type ProfileOf = Session | { profile: { get(): Promise<HostProfile> } };

export interface BridgeToolsOptions {
  client: PoolClient;
  scope: Scope;
  /** The pool's servers when the bridge was made: the first `--server` names. */
  states: readonly ServerState[];
  /** The bridge's legacy sessions, whose calls in flight route a server's traffic back. */
  sessions: Sessions;
  log: (line: string) => void;
}

export class BridgeTools {
  readonly #upstream: PoolClient;
  readonly #scope: Scope;
  readonly #sessions: Sessions;
  readonly #log: (line: string) => void;
  /** `--server` names, from the last state() seen; refreshed on each list and on a miss. */
  #names: ToolNames;
  /** Qualified name → server id, for routing a call's traffic back (pool scope). */
  #owners = new Map<string, string>();
  /**
   * `--server` names of tools only a profile's child lists (server-everything's
   * `get-roots-list` for a host with roots), learnt from describe(): host → qualified.
   */
  readonly #ownNames = new Map<string, string>();

  constructor(options: BridgeToolsOptions) {
    this.#upstream = options.client;
    this.#scope = options.scope;
    this.#sessions = options.sessions;
    this.#log = options.log;
    this.#names = toolNames(options.states, options.scope.single);
  }

  /** The name a host is shown for a qualified name (`--server`: the server's own). */
  hostName(qualified: string): string | undefined {
    return this.#scope.single !== undefined ? this.#names.toHost.get(qualified) : qualified;
  }

  /** The server a qualified name's calls go to, as far as the last listing knows. */
  serverOf(qualified: string): string | undefined {
    return this.#scope.single ?? this.#owners.get(qualified);
  }

  /**
   * The servers this bridge names (`--server`, `--servers`) that have never said what tools
   * they have — a lazy row with no cached list: a host's tools/list is their first use, so
   * they start for it as a call would start them. A whole-pool bridge wakes nothing.
   */
  async #wakeNamed(): Promise<void> {
    const named = this.#scope.servers;
    if (named === undefined) return;
    // Not ready and nothing listed: idle, or already connecting (the ping joins that dial),
    // or backing off (the ping is refused at once and said in the log).
    const asleep = (await this.#upstream.state()).filter(
      (s) =>
        named.includes(s.id) &&
        s.status !== "ready" &&
        s.status !== "disabled" &&
        s.tools.length === 0,
    );
    await Promise.all(
      asleep.map((s) =>
        this.#upstream
          .ping(s.id)
          .catch((error: Error) => this.#log(`mcpool bridge: ${error.message}`)),
      ),
    );
  }

  /** The host's definitions in scope; with `only`, of those qualified names alone (catalog). */
  async list(
    session: ProfileOf,
    identity?: ConversationIdentity,
    only?: readonly string[],
    requestId?: string | number,
  ): Promise<Tool[]> {
    if (only !== undefined && only.length === 0) return [];
    const scope = this.#scope;
    const profile = await session.profile.get(requestId);
    const scoped = {
      ...(scope.servers ? { servers: scope.servers } : {}),
      ...(only !== undefined ? { names: only } : {}),
      profile,
    };
    await this.#wakeNamed();
    // The definitions first: a listing waits for the daemon's first reconcile, and the
    // state read after it then knows every tool the definitions name.
    const definitions = await this.#upstream.tools(identity ? { ...scoped, identity } : scoped);
    // Only one server's own names need the state (qualified names are their own table);
    // in pool scope it would be every server's every tool, read for nothing (measured: a
    // search at 5,000 tools spent most of its 63 ms here).
    if (scope.single !== undefined) {
      this.#names = toolNames(await this.#upstream.state(), scope.single);
    }
    // What a definition has no room for (title, annotations, outputSchema, _meta, icons,
    // execution), per tool;
    // a tool that went away meanwhile is described as its definition alone.
    const described = await Promise.all(
      definitions.map((d) =>
        this.#upstream
          .describe(d.function.name, {
            ...(scope.servers ? { servers: scope.servers } : {}),
            ...(identity ? { identity } : {}),
            profile,
          })
          .catch(() => undefined),
      ),
    );
    // A catalog listing names a few tools: it adds to what routes, it does not replace it.
    const next = only !== undefined ? this.#owners : new Map<string, string>();
    const tools: Tool[] = [];
    definitions.forEach((definition, i) => {
      const qualified = definition.function.name;
      const about = described[i];
      const name =
        scope.single === undefined
          ? qualified
          : (this.#names.toHost.get(qualified) ??
            (about?.serverId === scope.single ? about.toolName : undefined));
      if (name === undefined) return;
      if (scope.single !== undefined && !this.#names.toPool.has(name)) {
        this.#ownNames.set(name, qualified);
      }
      if (about !== undefined) next.set(qualified, about.serverId);
      const tool: Tool = {
        name,
        description: about?.description ?? definition.function.description,
        inputSchema: definition.function.parameters as Tool["inputSchema"],
      };
      if (about?.title !== undefined) tool.title = about.title;
      if (about?.annotations !== undefined) tool.annotations = { ...about.annotations };
      if (about?.outputSchema !== undefined) {
        tool.outputSchema = about.outputSchema as Tool["outputSchema"];
      }
      if (about?.meta !== undefined) tool._meta = about.meta;
      if (about?.icons !== undefined) tool.icons = about.icons as Tool["icons"];
      if (about?.execution !== undefined) tool.execution = about.execution as Tool["execution"];
      tools.push(tool);
    });
    this.#owners = next;
    return tools;
  }

  /** The qualified name a host's tool name stands for, or undefined. */
  async qualify(name: string): Promise<string | undefined> {
    const single = this.#scope.single;
    if (single === undefined) return name;
    const known = this.#names.toPool.get(name) ?? this.#ownNames.get(name);
    if (known !== undefined) return known;
    // A daemon just (re)started may not know the server's tools yet: a listing waits for its
    // first reconcile, and the state read after it names them.
    await this.#upstream.tools({ servers: [single] });
    this.#names = toolNames(await this.#upstream.state(), single);
    return this.#names.toPool.get(name);
  }

  /**
   * The server a qualified name's calls go to when no listing said: the server in scope
   * whose tools the pool knows by that name, else the one the pool describes it of.
   */
  async #serverOfCall(qualified: string, profile?: HostProfile): Promise<string | undefined> {
    const scope = this.#scope;
    const known = (await this.#upstream.state()).find(
      (s) => scope.includes(s.id) && s.tools.some((t) => t.qualified === qualified),
    );
    if (known !== undefined) return known.id;
    const servers = scope.servers;
    const about = await this.#upstream
      .describe(qualified, { ...(servers ? { servers } : {}), ...(profile ? { profile } : {}) })
      .catch(() => undefined);
    return about?.serverId;
  }

  /** A legacy session's tools/call, answered with the server's result as it came. */
  async call(
    session: Session,
    name: string,
    args: Record<string, unknown> | undefined,
    extra: Extra,
    task?: Record<string, unknown>,
  ): Promise<CallToolResult> {
    let qualified: string | undefined;
    try {
      qualified = await this.qualify(name);
    } catch (error) {
      throw toMcpError(error);
    }
    const single = this.#scope.single;
    // A name the server never listed, on a one-server entry: the server answers it, as direct.
    if (qualified === undefined && single === undefined) throw unknownTool(name);
    if (qualified !== undefined) session.found?.touch(qualified);
    let serverId = this.serverOf(qualified ?? name);
    const options: CallOptions & { raw: true } = {
      raw: true,
      signal: extra.signal,
      profile: await session.profile.get(extra.requestId),
    };
    if (qualified === undefined) options.unlisted = name;
    if (this.#scope.servers !== undefined) options.servers = this.#scope.servers;
    // The host's own clientInfo and level, for a modern server's envelope.
    options.caller = sessionCaller(session);
    if (session.identity) options.identity = identityFor(session.identity, extra._meta);
    // The request's own `_meta` (trace context) goes on to the server, less the pool's keys.
    if (extra._meta !== undefined) options.meta = extra._meta;
    // A task-augmented call: the server's CreateTaskResult, its task the session's own.
    if (task !== undefined && session.tasks !== undefined) {
      options.task = task;
      options.taskOwner = session.tasks.owner;
      // Whose task it is names it to the host (a call before any listing: the pool says).
      serverId ??= await this.#serverOfCall(qualified ?? name, options.profile);
    }
    const elicit = elicitFor(session, extra);
    if (elicit !== undefined) options.onElicit = elicit;
    const sample = sampleFor(session, extra);
    if (sample !== undefined) options.onSample = sample;
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      options.onProgress = (progress) => {
        extra
          .sendNotification({
            method: "notifications/progress",
            params: { ...progress, progressToken: token },
          })
          .catch(() => undefined);
      };
    }
    const forget = this.#sessions.track({ session, serverId, extra });
    try {
      const result = (await this.#upstream.call(
        qualified ?? name,
        args,
        options,
      )) as CallToolResult;
      if (options.task !== undefined && serverId !== undefined && session.tasks !== undefined) {
        return forLegacyHost(await session.tasks.told(serverId, result));
      }
      return forLegacyHost(result);
    } catch (error) {
      if (extra.signal.aborted) throw error; // the host gave up: the SDK sends no answer
      // A task-augmented call is answered a task or an error, never a tool's result.
      if (options.task !== undefined) throw toMcpError(error);
      return callFailure(error, name);
    } finally {
      forget();
    }
  }
}
