/**
 * A bridge's legacy host sessions: one low-level SDK v1 `Server` per host connection, its
 * handlers answering from the bridge's tools, its catalog and its resources-and-prompts
 * router; the transports are the caller's (stdio in the CLI, Streamable HTTP in http.ts).
 *
 * Each listing and call names the session's profile (host-profile.ts: its declared
 * sampling, elicitation and roots, the roots asked of the host), so a pooled server is
 * served to it by a child that declared what the host declared.
 */
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  RootsListChangedNotificationSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type ClientCapabilities,
  type Implementation,
  type InitializeRequest,
  type InitializeResult,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { hostProfile, type ConversationIdentity, type PoolClient } from "mcpool-client";

import { toMcpError } from "../core/errors.js";
import {
  connectionIdentity,
  endConversation,
  identityFor,
  type BridgeIdentityOptions,
} from "../core/conversation.js";
import type { ResourcesPromptsRouter } from "../core/resources-prompts.js";
import type { Scope } from "../core/naming.js";
import type { HostName, Session, Sessions } from "../core/session.js";
import { SessionProfile } from "../core/host-profile.js";
import { answerTasks, SessionTasks } from "../core/tasks.js";
import { installPassthrough } from "../core/legacy-passthrough.js";
import { isMetaTool, type Catalog } from "../catalog/on-demand.js";
import type { BridgeTools } from "./tools.js";
import type { PoolTraffic } from "./pool-traffic.js";

const LIST_CHANGED = [
  "notifications/tools/list_changed",
  "notifications/resources/list_changed",
  "notifications/prompts/list_changed",
];

export interface LegacySessionsOptions {
  client: PoolClient;
  serverInfo: { name: string; version: string };
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  /** Whose conversations the host connections are (conversation.ts). */
  identity: BridgeIdentityOptions | undefined;
  /** The sessions open now, which the tools and the pool's traffic read too. */
  sessions: Sessions;
  tools: BridgeTools;
  /** Tools on demand, when the bridge lists the catalog instead of every definition. */
  catalog: Catalog | undefined;
  router: ResourcesPromptsRouter;
  traffic: PoolTraffic;
  /** The servers in scope whose tasks are relayed (those that offer them; none in catalog mode). */
  taskServers: readonly string[];
  /** The servers the bridge serves: what is opened ahead for a host is opened on them alone. */
  scope: Scope;
  log: (line: string) => void;
}

export class LegacySessions {
  readonly #o: LegacySessionsOptions;

  constructor(options: LegacySessionsOptions) {
    this.#o = options;
  }

  /** Host sessions open now. */
  get size(): number {
    return this.#o.sessions.size;
  }

  /** A new SDK Server for one host connection (named `host`, if it is); connect it to a transport. */
  create(host: HostName = {}): Server {
    const { client, capabilities, instructions, sessions, catalog, router, log } = this.#o;
    const server = new Server(this.#o.serverInfo as Implementation, {
      capabilities,
      ...(instructions !== undefined ? { instructions } : {}),
      debouncedNotificationMethods: LIST_CHANGED,
    });
    const identity = connectionIdentity(this.#o.identity ?? {});
    const taskServers = this.#o.taskServers;
    const tasks = capabilities.tasks !== undefined && taskServers.length > 0;
    const session: Session = {
      server,
      level: undefined,
      subscriptions: new Map(),
      identity,
      ...(catalog !== undefined ? { found: catalog.foundTools() } : {}),
      profile: new SessionProfile(server, log),
      ...(tasks ? { tasks: new SessionTasks(host.name, client) } : {}),
      ...(host.name !== undefined ? { hostName: host.name } : {}),
    };
    sessions.add(session);
    const ahead = new HeadStart(client, this.#o.scope.servers);
    answerInitializeAfter(server, (declared) => ahead.open(declared));
    if (session.tasks !== undefined) {
      answerTasks(server, session.tasks, client, taskServers);
    }
    server.onclose = () => {
      ahead.release();
      endConversation(client, identity);
      // The session ended: its live tasks end with it, as direct.
      if (session.tasks !== undefined && session.tasks.size > 0) {
        client.tasks.release(session.tasks.owner).catch(() => undefined);
      }
      sessions.delete(session);
      router.closeSession(session).catch(() => undefined);
    };
    server.onerror = (error) => log(`mcpool bridge: ${error.message}`);
    this.#answerTools(server, session, identity, ahead);
    // New roots may be another project's child: asked again, listed again.
    server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      session.profile.changed();
      await server.sendToolListChanged().catch(() => undefined);
    });
    // A lone server without logging: the host is told "Method not found", as it is direct.
    if (capabilities.logging !== undefined) {
      server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
        const level = LoggingLevelSchema.parse(request.params.level);
        session.level = level;
        await this.#o.traffic.setLevel(level, await session.profile.get(extra.requestId));
        return {};
      });
    }
    installPassthrough(router, server, session, capabilities);
    return server;
  }

  /** Closes every session's server. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#o.sessions].map((session) => session.server.close()));
  }

  #answerTools(
    server: Server,
    session: Session,
    identity: ConversationIdentity,
    ahead: HeadStart,
  ): void {
    const { catalog, tools } = this.#o;
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      try {
        // Every definition, or (catalog) the meta tools and this session's set.
        const named = identityFor(identity, request.params?._meta);
        if (catalog === undefined) {
          return { tools: await tools.list(session, named, undefined, extra.requestId) };
        }
        await session.profile.get(extra.requestId);
        return { tools: await catalog.list(session, named) };
      } catch (error) {
        throw toMcpError(error);
      } finally {
        ahead.release();
      }
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const { name, arguments: args } = request.params;
      const answered =
        catalog !== undefined && isMetaTool(name)
          ? catalog
              .answer(session, name, args, extra, identityFor(identity, extra._meta))
              .catch((error: unknown) => {
                throw toMcpError(error);
              })
          : tools.call(session, name, args, extra, request.params.task);
      return answered.finally(() => ahead.release());
    });
  }
}

/**
 * A 2025-11-25 host that declares roots can be asked for them only once its `initialize` is
 * answered, and its project's children are made once they are known: so its `initialize` is
 * answered once the daemon has opened ahead what those children will be dialled on
 * (src/pool/prepared-children.ts), whose start then falls in the host's connect, as its
 * servers' would direct, not in its first listing (Claude Code gives a server 30 s to
 * connect, its `mcp list` 5 s to list). Let go of after the session's first listing or call,
 * its children made by then, or as it closes.
 */
class HeadStart {
  readonly #client: PoolClient;
  readonly #servers: readonly string[] | undefined;
  #holder: string | undefined;
  #released = false;

  constructor(client: PoolClient, servers: readonly string[] | undefined) {
    this.#client = client;
    this.#servers = servers;
  }

  /** At the host's `initialize`: resolves once what it needs is open, or could not be. */
  async open(declared: ClientCapabilities | undefined): Promise<void> {
    if (declared?.roots === undefined || this.#holder !== undefined) return;
    const holder = randomUUID();
    this.#holder = holder;
    const profile = { ...hostProfile(declared, []), era: "legacy" as const };
    await this.#client.profiles.prepare(profile, holder, this.#servers).catch(() => undefined);
  }

  release(): void {
    if (this.#holder === undefined || this.#released) return;
    this.#released = true;
    void this.#client.profiles.release(this.#holder).catch(() => undefined);
  }
}

/** The SDK's own answer to `initialize` (private in its types). */
interface Initializing {
  _oninitialize(request: InitializeRequest): Promise<InitializeResult>;
}

/**
 * `server` answers `initialize` as the SDK does — the host's capabilities and version
 * recorded, the protocol version chosen — once `before` (given what the host declared) settled.
 */
function answerInitializeAfter(
  server: Server,
  before: (declared: ClientCapabilities | undefined) => Promise<void>,
): void {
  const answer = (server as unknown as Initializing)._oninitialize.bind(server);
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const result = await answer(request);
    await before(request.params.capabilities);
    return result;
  });
}
