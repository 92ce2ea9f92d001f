/**
 * A bridge's legacy host sessions: one low-level SDK v1 `Server` per host connection, its
 * handlers answering from the bridge's tools, its catalog and its resources-and-prompts
 * router; the transports are the caller's (stdio in the CLI, Streamable HTTP in http.ts).
 *
 * Each listing and call names the session's profile (host-profile.ts: its declared
 * sampling, elicitation and roots, the roots asked of the host), so a pooled server is
 * served to it by a child that declared what the host declared.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  RootsListChangedNotificationSchema,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  SetLevelRequestSchema,
  type Implementation,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { ConversationIdentity, PoolClient } from "mcpool-client";

import { toMcpError } from "../core/errors.js";
import {
  connectionIdentity,
  endConversation,
  identityFor,
  type BridgeIdentityOptions,
} from "../core/conversation.js";
import type { ResourcesPromptsRouter } from "../core/resources-prompts.js";
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
    if (session.tasks !== undefined) {
      answerTasks(server, session.tasks, client, taskServers);
    }
    server.onclose = () => {
      endConversation(client, identity);
      // The session ended: its live tasks end with it, as direct.
      if (session.tasks !== undefined && session.tasks.size > 0) {
        client.tasks.release(session.tasks.owner).catch(() => undefined);
      }
      sessions.delete(session);
      router.closeSession(session).catch(() => undefined);
    };
    server.onerror = (error) => log(`mcpool bridge: ${error.message}`);
    this.#answerTools(server, session, identity);
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

  #answerTools(server: Server, session: Session, identity: ConversationIdentity): void {
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
      }
    });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const { name, arguments: args } = request.params;
      if (catalog !== undefined && isMetaTool(name)) {
        return catalog
          .answer(session, name, args, extra, identityFor(identity, extra._meta))
          .catch((error: unknown) => {
            throw toMcpError(error);
          });
      }
      return tools.call(session, name, args, extra, request.params.task);
    });
  }
}
