/**
 * The bridge to a 2026-07-28 ("modern") host: one SDK v2
 * low-level `Server` per serving unit (a stdio or MCP-socket connection, or one HTTP
 * request), built on the same bridge core as the legacy sessions (legacy/bridge-server.ts). The SDK
 * answers `server/discover`, reads each request's `_meta` envelope, stamps `resultType` and
 * the cache hints, and serves `subscriptions/listen`; this file answers the methods.
 *
 * A pooled server's `elicitation/create`, `sampling/createMessage` or `roots/list` during a
 * modern host's call, `prompts/get` or `resources/read` cannot be sent to the host: the
 * request is parked (the server keeps waiting on its questions, host-requests.ts) and the host
 * gets `input_required` with the questions — every question of the server's round that
 * this host answers, together — and a `requestState` sealed with this process's key (HMAC,
 * createRequestStateCodec). The host's retry with `inputResponses` and that state answers
 * the parked questions; the request then completes, or asks again (a state that fails
 * verification: the SDK's -32602 before any handler runs; one whose request ended: rounds.ts).
 */
import {
  createMcpHandler,
  Server,
  type CacheHint,
  type McpHttpHandler,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import {
  type AskingOptions,
  type CallOptions,
  type ConversationIdentity,
  type HostProfile,
  type NotificationAbout,
} from "mcpool-client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { identityFor } from "../core/conversation.js";
import { clientCapabilities, metaOf, ModernRoots } from "../core/host-profile.js";
import { ParkedCall } from "../core/host-requests.js";
import type { BridgeCore } from "./bridge-core.js";
import { calledThrough } from "../catalog/modern-catalog.js";
import { Rounds, withRoots, type StatePayload } from "./rounds.js";
import { callFailure, toMcpError, unknownTool } from "../core/errors.js";
import { asProtocolError, notFoundAsModern } from "./protocol-errors.js";
import type { Subscriber } from "../core/resources-prompts.js";
import {
  callerOf,
  ListenSubscriptions,
  tellListsChanged,
  watchListens,
  type ListKind,
} from "../core/session.js";
import { ModernNotices, type ServingUnit } from "./notices.js";

/**
 * How long a modern host may keep a listing, ms. The pool knows when a list changes and
 * says so on `subscriptions/listen` at once; the bound is for a host that does not listen.
 */
export const LIST_TTL_MS = 60_000;
type ListHint = Awaited<ReturnType<BridgeCore["toolsHint"]>>;

/**
 * A v2 Server whose answer to `server/discover` (the SDK's own, whichever entry installs
 * it) waits for `connecting`: what a host's connect should find started.
 */
class ConnectingServer extends Server {
  connecting: ((ctx: ServerContext) => Promise<void>) | undefined;

  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server["_wrapHandler"]>[1],
  ): ReturnType<Server["_wrapHandler"]> {
    if (method !== "server/discover") return super._wrapHandler(method, handler);
    return super._wrapHandler(method, async (request, ctx) => {
      await this.connecting?.(ctx);
      return handler(request, ctx);
    });
  }
}

/** The modern side of one bridge: a factory of v2 Servers, and the calls parked between rounds. */
export class ModernBridge {
  readonly #core: BridgeCore;
  /** The requests parked between rounds, and the key of their states. */
  readonly #rounds = new Rounds();
  /** What the units and requests in flight hear unasked (list changes, log lines). */
  readonly #notices = new ModernNotices();

  constructor(core: BridgeCore) {
    this.#core = core;
  }

  /** A v2 Server for one connection or request; `identity` is its conversation. */
  createServer(identity: ConversationIdentity, track: boolean): Server {
    const core = this.#core;
    // The host's roots, per serving unit: a connection's (stdio, MCP socket) for its life;
    // on the stateless HTTP face one request's, so each call there asks again.
    const roots = new ModernRoots();
    // A connection listed before its roots were known, by a profile without them: once they
    // are, each list it may have is said changed, so it lists again with them.
    if (track) {
      const { resources, prompts } = core.capabilities;
      const kinds = ["tools", ...(resources ? ["resources"] : []), ...(prompts ? ["prompts"] : [])];
      roots.onLearnt = () => tellListsChanged(server, kinds as ListKind[]);
    }
    // `--catalog`: this unit's list and found tools, as a legacy session has its own.
    const catalog = core.catalog?.unit();
    const listHint: CacheHint = {
      ttlMs: LIST_TTL_MS,
      cacheScope: core.sharedLists ? "public" : "private",
    };
    const server = this.#newServer(listHint);
    // The profile its requests named last: what the pool's hosts of a notice are told apart by.
    const unit: ServingUnit = { server, last: undefined };
    const naming = (profile: HostProfile): HostProfile => (unit.last = profile);
    if (track) this.#notices.track(unit);
    server.onerror = (error) => core.log(`mcpool bridge: ${error.message}`);
    const guarded =
      <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await run(...args);
        } catch (error) {
          throw asProtocolError(error);
        }
      };

    // A host connects before it lists, and gives its connect longer (Claude Code waits 30 s
    // for a server to start, 5 s for its first list): the children its listing runs on (a
    // profile's or a project's, started for it alone) start in its connect, as its servers
    // start direct when it connects, and the listing that follows finds them up.
    server.connecting = async (ctx) => {
      const named = identityFor(identity, metaOf(ctx));
      const profile = naming(roots.listing(clientCapabilities(ctx)));
      await core.listTools(named, profile).catch(() => undefined);
    };
    server.setRequestHandler(
      "tools/list",
      guarded(async (_request, ctx) => {
        const named = identityFor(identity, metaOf(ctx));
        const profile = naming(roots.listing(clientCapabilities(ctx)));
        const [tools, given] = await Promise.all([
          catalog !== undefined ? catalog.list(named, profile) : core.listTools(named, profile),
          core.sharedLists ? core.toolsHint() : Promise.resolve<ListHint>({}),
        ]);
        // The hint a pooled server gave its list holds for the list it is part of: one
        // server's entry gives the host that server's own, as direct.
        const hint =
          given.ttlMs !== undefined
            ? { ttlMs: given.ttlMs, cacheScope: given.cacheScope ?? listHint.cacheScope }
            : given.cacheScope === "private"
              ? { ttlMs: LIST_TTL_MS, cacheScope: "private" as const }
              : {};
        return { tools: tools as never, ...hint };
      }),
    );
    server.setRequestHandler("tools/call", (request, ctx) => {
      const meta = core.catalog;
      const { name, arguments: args } = request.params;
      // call_tool is a call of the tool it names, with its rounds (input_required) as any call.
      const inner = meta !== undefined && name === meta.callTool ? calledThrough(args) : undefined;
      const answered =
        catalog !== undefined && meta?.isMetaTool(name) === true && inner === undefined
          ? catalog.answer(
              name,
              args,
              identityFor(identity, metaOf(ctx)),
              naming(roots.listing(clientCapabilities(ctx))),
            )
          : this.#call(identity, roots, inner ?? request.params, ctx, unit);
      return answered.catch((error: unknown) => {
        throw asProtocolError(error);
      });
    });
    const router = core.router;
    // Every request goes where the host's calls go: the connection its profile picks.
    const profileOf = (ctx: ServerContext): HostProfile =>
      naming(roots.listing(clientCapabilities(ctx)));
    if (core.capabilities.resources !== undefined) {
      server.setRequestHandler(
        "resources/list",
        guarded(
          async (request, ctx) =>
            (await router.listResources(request.params?.cursor, profileOf(ctx))) as never,
        ),
      );
      server.setRequestHandler(
        "resources/templates/list",
        guarded(
          async (request, ctx) =>
            (await router.listResourceTemplates(request.params?.cursor, profileOf(ctx))) as never,
        ),
      );
      server.setRequestHandler("resources/read", async (request, ctx) => {
        try {
          return (await this.#asked(ctx, unit, roots, identity, (asking) =>
            router.readResource(request.params.uri, asking),
          )) as never;
        } catch (error) {
          throw notFoundAsModern(asProtocolError(error), request.params.uri);
        }
      });
    }
    if (core.capabilities.prompts !== undefined) {
      server.setRequestHandler(
        "prompts/list",
        guarded(
          async (request, ctx) =>
            (await router.listPrompts(request.params?.cursor, profileOf(ctx))) as never,
        ),
      );
      server.setRequestHandler(
        "prompts/get",
        guarded(
          async (request, ctx) =>
            (await this.#asked(ctx, unit, roots, identity, (asking) =>
              router.getPrompt(request.params.name, request.params.arguments, asking),
            )) as never,
        ),
      );
    }
    if (core.capabilities.completions !== undefined) {
      server.setRequestHandler(
        "completion/complete",
        guarded(
          async (request, ctx) =>
            (await router.complete(request.params as never, profileOf(ctx))) as never,
        ),
      );
    }
    return server;
  }

  /** A v2 Server declaring the bridge's capabilities to a modern host, its lists hinted `listHint`. */
  #newServer(listHint: CacheHint): ConnectingServer {
    const core = this.#core;
    const capabilities = { ...core.capabilities } as Record<string, unknown>;
    // Resource subscriptions of a modern host ride subscriptions/listen, not resources/subscribe.
    if (core.capabilities.resources !== undefined) {
      const { subscribe: _legacy, ...resources } = core.capabilities.resources;
      capabilities.resources = {
        ...resources,
        ...(core.resourceSubscriptions ? { subscribe: true } : {}),
      };
    }
    return new ConnectingServer(core.serverInfo, {
      capabilities: capabilities as never,
      ...(core.instructions !== undefined ? { instructions: core.instructions } : {}),
      cacheHints: {
        "tools/list": listHint,
        "prompts/list": listHint,
        "resources/list": listHint,
        "resources/templates/list": listHint,
        "server/discover": listHint,
      },
      requestState: { verify: (state, ctx) => this.#rounds.verify(state, ctx) },
    });
  }

  /** Serves one stdio-shaped connection whose host opened in the modern era (era-switch.ts). */
  serveConnection(
    transport: Transport,
    identity: ConversationIdentity,
  ): { close(): Promise<void> } {
    let server: Server | undefined;
    // The URIs its listen streams name, held upstream for this connection; what the pool
    // says of them goes to the connection's server, whose entry puts each on the streams
    // that named it.
    const listens = this.listens({
      subscriptions: new Map(),
      server: { sendResourceUpdated: async (params) => server?.sendResourceUpdated(params) },
    });
    const served = serveStdio(() => (server = this.createServer(identity, true)), {
      legacy: "reject",
      transport:
        listens === undefined ? transport : (watchListens(transport as never, listens) as never),
      onerror: (error) => this.#core.log(`mcpool bridge: ${error.message}`),
    });
    return {
      close: async () => {
        await served.close();
        await listens?.close();
      },
    };
  }

  /**
   * The Streamable HTTP face for modern requests (http.ts routes them here): one v2 Server
   * per request, every request of the HTTP bridge in one conversation, the requestState key
   * shared by all of them (one process serves every round).
   */
  httpHandler(identity: ConversationIdentity = this.#core.newIdentity()): McpHttpHandler {
    const handler = createMcpHandler(() => this.createServer(identity, false), {
      legacy: "reject",
      onerror: (error) => this.#core.log(`mcpool bridge: ${error.message}`),
    });
    this.#notices.addHandler(handler);
    return handler;
  }

  /**
   * What holds the URIs a modern host's listen streams name (ListenSubscriptions), told
   * through `subscriber`; undefined when no server in scope takes subscriptions.
   */
  listens(subscriber: Subscriber): ListenSubscriptions | undefined {
    const core = this.#core;
    if (!core.resourceSubscriptions) return undefined;
    return new ListenSubscriptions(core.router, subscriber, core.log);
  }

  /** Lists changed; `about`: a server's own notice, to the connections whose host it names. */
  listChanged(kinds: readonly ListKind[], about?: NotificationAbout): void {
    this.#notices.listChanged(kinds, about);
  }

  /** A pooled server's log line, to the requests in flight on it whose host `about` names. */
  deliverLog(
    serverId: string,
    message: { method: string; params: { level: unknown } },
    about: NotificationAbout,
  ): void {
    this.#notices.deliverLog(serverId, message, about);
  }

  /** Ends every parked call (the bridge closes). */
  close(): void {
    this.#rounds.close();
    this.#notices.close();
  }

  async #call(
    identity: ConversationIdentity,
    roots: ModernRoots,
    params: { name: string; arguments?: Record<string, unknown> | undefined },
    ctx: ServerContext,
    unit: ServingUnit,
  ): Promise<CallToolResult> {
    const core = this.#core;
    const state = ctx.mcpReq.requestState<StatePayload>();
    if (state !== undefined && "call" in state) return this.#resumed(ctx, unit, state);
    const qualified = await core.qualify(params.name).catch((error: unknown) => {
      throw toMcpError(error);
    });
    // A name the server never listed, on a one-server entry: the server answers it, as direct.
    if (qualified === undefined && core.scope.single === undefined) {
      throw unknownTool(params.name);
    }
    const sent = qualified ?? params.name;
    const meta = metaOf(ctx);
    const called = identityFor(identity, meta);
    const profile = await withRoots(this.#core, this.#rounds, roots, sent, called, ctx);
    if (!("profile" in profile)) return profile.ask as CallToolResult;
    unit.last = profile.profile;
    const parked = new ParkedCall();
    parked.serverId = core.scope.single ?? core.serverOf(sent);
    parked.profile = profile.profile;
    const options: CallOptions & { raw: true } = { raw: true, signal: parked.abort.signal };
    if (qualified === undefined) options.unlisted = params.name;
    if (core.scope.servers !== undefined) options.servers = core.scope.servers;
    options.identity = called;
    if (meta !== undefined) options.meta = meta;
    // What the host declared in this request's envelope, with its roots when learnt: the
    // pool serves it from a child that declared the same, and names it, its clientInfo and
    // its level to a modern server.
    options.profile = profile.profile;
    options.caller = callerOf(ctx);
    // The era has no task-augmented call: a 2025-11-25 tool that requires a task runs as
    // one the pool makes, and the host is answered its result, as a modern server would.
    options.awaitTask = true;
    Object.assign(options, parked.askers(clientCapabilities(ctx)));
    const token = meta?.progressToken;
    if (token !== undefined) {
      options.onProgress = (progress) => {
        ctx.mcpReq
          .notify({
            method: "notifications/progress",
            params: { ...progress, progressToken: token as string },
          })
          .catch(() => undefined);
      };
    }
    return this.#parkedRounds(ctx, unit, parked, () =>
      core.upstream
        .call(sent, params.arguments, options)
        .then((result) => parked.push({ kind: "done", result }))
        .catch((error: unknown) => {
          try {
            parked.push({ kind: "done", result: callFailure(error, params.name) });
          } catch (thrown) {
            parked.push({ kind: "failed", error: thrown });
          }
        }),
    );
  }

  /** A host's retry of a parked request with its answers: in flight as the request was. */
  async #resumed<R>(
    ctx: ServerContext,
    unit: ServingUnit,
    state: Extract<StatePayload, { call: string }>,
  ): Promise<R> {
    const parked = this.#rounds.get(state.call);
    const on = { serverId: parked?.serverId, profile: parked?.profile };
    return (await this.#notices.inFlight(ctx, unit, on, () =>
      this.#rounds.resume(state, ctx),
    )) as R;
  }

  /**
   * Starts `run`, whose steps `parked` takes, and answers with its first step: its result,
   * or the round of questions the host is asked. The host's giving up before a question was
   * asked is the request's end.
   */
  async #parkedRounds<R>(
    ctx: ServerContext,
    unit: ServingUnit,
    parked: ParkedCall,
    run: () => void,
  ): Promise<R> {
    const onAbort = (): void => parked.abort.abort();
    ctx.mcpReq.signal.addEventListener("abort", onAbort, { once: true });
    run();
    try {
      return (await this.#notices.inFlight(ctx, unit, parked, () =>
        this.#rounds.round(parked, ctx),
      )) as R;
    } finally {
      ctx.mcpReq.signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * A passthrough request of a modern host (`prompts/get`, `resources/read`) whose server
   * may ask inside it: its roots asked first as a call's are (rounds.ts withRoots), then parked
   * between rounds as a call is, its questions the host's.
   */
  async #asked<R>(
    ctx: ServerContext,
    unit: ServingUnit,
    roots: ModernRoots,
    identity: ConversationIdentity,
    run: (asking: AskingOptions) => Promise<R>,
  ): Promise<R> {
    const state = ctx.mcpReq.requestState<StatePayload>();
    if (state !== undefined && "call" in state) return this.#resumed(ctx, unit, state);
    const named = identityFor(identity, metaOf(ctx));
    const profile = await withRoots(this.#core, this.#rounds, roots, undefined, named, ctx);
    if (!("profile" in profile)) return profile.ask as R;
    unit.last = profile.profile;
    const parked = new ParkedCall();
    parked.serverId = this.#core.scope.single;
    parked.profile = profile.profile;
    const asking: AskingOptions = {
      profile: profile.profile,
      signal: parked.abort.signal,
      caller: callerOf(ctx),
      ...parked.askers(clientCapabilities(ctx)),
    };
    return this.#parkedRounds(ctx, unit, parked, () =>
      run(asking).then(
        (result) => parked.push({ kind: "done", result }),
        (error: unknown) => parked.push({ kind: "failed", error }),
      ),
    );
  }
}
