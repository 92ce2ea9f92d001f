/**
 * Tools on demand: a bridge in catalog mode lists the rows'
 * `alwaysLoad` tools and three tools of the pool's own instead of every definition —
 * `search_tools` (the pool's search index, scoped as the bridge is), `describe_tool` (one
 * tool's whole definition) and `call_tool` (a name and its arguments, for hosts that never
 * refresh their list). What a search finds joins that session's list, least recently used
 * leaving first past `catalogLoaded`, and the session is sent `tools/list_changed`; other
 * sessions are not touched. In `auto` mode a session's first list also holds the tools this
 * user calls most (the usage counts `mcpool stats` shows) up to `catalogTokens`.
 *
 * Names go through the bridge's own tables (naming.ts): this file works in qualified names
 * and asks the bridge for what a host is shown.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ConversationIdentity, PoolClient, ToolDescription } from "mcpool-client";
import { FoundTools } from "../core/found-tools.js";
import type { Scope } from "../core/naming.js";
import type { Extra, Session } from "../core/session.js";

/** `--catalog`: the catalog alone; `--catalog=auto`: with the most-called tools first. */
export type CatalogMode = "on" | "auto";

/**
 * `catalogTokens` default: what `auto` may spend on most-called tools in a first list, in the
 * pool's token estimate (four characters a token over the OpenAI definition). Measured by
 * bench/catalog.mjs on the reference servers: 126 tokens a tool at the median, 194 at p90,
 * 254 at most, so 1,000 holds the 5–8 tools a user calls most — the common case with no
 * search — while the first list stays a small part of the full one (7 tools: 9.2 KB of 31 KB,
 * the MCP listing carrying titles, annotations and output schemas beyond the estimate).
 */
export const CATALOG_TOKENS = 1_000;

/**
 * `catalogLoaded` default: found tools one session keeps listed. A search answers up to
 * SEARCH_LIMIT_MAX, so this is a few searches' worth; past it the least recently found or
 * called leave, so a long session's list stays about the size of a handful of searches.
 */
export const CATALOG_LOADED = 24;

/** What search_tools answers when the model names no limit, and the most it may ask for. */
export const SEARCH_LIMIT = 5;
export const SEARCH_LIMIT_MAX = 10;

export { FoundTools };

/** The pool's own tools' names: no qualified name can be one (those hold `__`). */
export const META_TOOLS = {
  search: "search_tools",
  describe: "describe_tool",
  call: "call_tool",
} as const;

const META_NAMES: ReadonlySet<string> = new Set(Object.values(META_TOOLS));

export function isMetaTool(name: string): boolean {
  return META_NAMES.has(name);
}

/** The three tools, described for the model that reads them. */
export function metaTools(): Tool[] {
  return [
    {
      name: META_TOOLS.search,
      title: "Find tools",
      description:
        "Most tools are not in your tool list yet: search for them here before saying you cannot do something. " +
        'Describe the task in plain words ("read a file", "create a GitHub issue", "add two numbers"). ' +
        "Answers the best matching tools with their descriptions and input schemas; they are then added to " +
        "your tool list, so call them by name on your next turn (or through call_tool right away).",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: "What you want to do, in a few words." },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: SEARCH_LIMIT_MAX,
            description: `How many tools to return (default ${SEARCH_LIMIT}).`,
          },
        },
        required: ["query"],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: META_TOOLS.describe,
      title: "Describe a tool",
      description:
        "The whole definition of one tool by its exact name (as search_tools gave it): description, input " +
        "and output schema, annotations. Use it when a search result is not enough to call the tool right.",
      inputSchema: {
        type: "object",
        properties: { name: { type: "string", description: "The tool's exact name." } },
        required: ["name"],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: META_TOOLS.call,
      title: "Call a tool",
      description:
        "Calls a tool by its exact name with its arguments. Use it for a tool search_tools found that " +
        "is not in your tool list; a tool that is in your list can be called directly.",
      inputSchema: {
        type: "object",
        properties: {
          name: { type: "string", description: "The tool's exact name." },
          arguments: {
            type: "object",
            description: "The tool's arguments, as its input schema asks.",
            additionalProperties: true,
          },
        },
        required: ["name"],
      },
    },
  ];
}

export interface CatalogOptions {
  mode: CatalogMode;
  /** Token budget of `auto`'s most-called tools. Default CATALOG_TOKENS. */
  tokens?: number;
  /** Found tools kept per session. Default CATALOG_LOADED. */
  loaded?: number;
}

/** What the catalog needs of the bridge around it. */
export interface CatalogHost {
  client: PoolClient;
  scope: Scope;
  /** The host's name for a qualified one (the server's own name in `--server` scope). */
  hostName(qualified: string): string | undefined;
  /** The qualified name a host's name stands for, or undefined. */
  qualify(name: string): Promise<string | undefined>;
  /** The host's definitions of `qualified`, as tools/list gives them, in the pool's order. */
  definitions(
    session: Session,
    qualified: readonly string[],
    identity?: ConversationIdentity,
  ): Promise<Tool[]>;
  /** A tools/call by the host's name, exactly as the host calling it would. */
  call(
    session: Session,
    name: string,
    args: Record<string, unknown> | undefined,
    extra: Extra,
  ): Promise<CallToolResult>;
}

export interface Catalog {
  readonly mode: CatalogMode;
  /** A new session's found set. */
  foundTools(): FoundTools;
  /** A session's tools/list: the meta tools, then its first tools and what it found. */
  list(session: Session, identity: ConversationIdentity | undefined): Promise<Tool[]>;
  /** The answer of a meta tool. */
  answer(
    session: Session,
    name: string,
    args: Record<string, unknown> | undefined,
    extra: Extra,
    identity: ConversationIdentity | undefined,
  ): Promise<CallToolResult>;
}

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: value }],
  ...(isError ? { isError: true } : {}),
});

/** A search result for the model: just what it needs to call the tool. */
function found(tool: Tool): Record<string, unknown> {
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
  };
}

/** describe()'s answer in MCP's spelling, under the host's name. */
function described(name: string, about: ToolDescription): Record<string, unknown> {
  return {
    name,
    ...(about.title !== undefined ? { title: about.title } : {}),
    ...(about.description !== undefined ? { description: about.description } : {}),
    inputSchema: about.inputSchema,
    ...(about.outputSchema !== undefined ? { outputSchema: about.outputSchema } : {}),
    ...(about.annotations !== undefined ? { annotations: about.annotations } : {}),
    ...(about.meta !== undefined ? { _meta: about.meta } : {}),
    ...(about.icons !== undefined ? { icons: about.icons } : {}),
    ...(about.execution !== undefined ? { execution: about.execution } : {}),
  };
}

export function createCatalog(options: CatalogOptions, host: CatalogHost): Catalog {
  const { client, scope } = host;
  const budget = options.tokens ?? CATALOG_TOKENS;
  const scoped = scope.servers !== undefined ? { servers: scope.servers } : {};
  /** Per session, `auto`'s most-called tools, read once: a list must not shift under the host. */
  const usual = new WeakMap<Session, Promise<string[]>>();

  /** The tools this user calls most, most first, up to the token budget. */
  const mostCalled = async (): Promise<string[]> => {
    const [usage, states] = await Promise.all([client.usage(scoped), client.state()]);
    const tools = new Map<string, { qualified: string; tokens: number }>();
    for (const state of states) {
      if (!scope.includes(state.id)) continue;
      for (const tool of state.tools) {
        if (tool.hidden || tool.clashed) continue;
        tools.set(`${state.id}\0${tool.name}`, {
          qualified: tool.qualified,
          tokens: tool.tokens ?? 0,
        });
      }
    }
    const picked: string[] = [];
    let spent = 0;
    for (const use of usage.tools) {
      const tool = tools.get(`${use.serverId}\0${use.tool}`);
      if (tool === undefined || spent + tool.tokens > budget) continue;
      spent += tool.tokens;
      picked.push(tool.qualified);
    }
    return picked;
  };

  const search = async (
    session: Session,
    args: Record<string, unknown>,
    extra: Extra,
    identity: ConversationIdentity | undefined,
  ): Promise<CallToolResult> => {
    const query = typeof args.query === "string" ? args.query.trim() : "";
    if (query === "") return text("search_tools needs a `query`: what you want to do.", true);
    const asked = Number(args.limit ?? SEARCH_LIMIT);
    const limit = Number.isInteger(asked)
      ? Math.min(Math.max(asked, 1), SEARCH_LIMIT_MAX)
      : SEARCH_LIMIT;
    const servers = await client.search(query, { ...scoped, limit });
    // Servers come by their best tool, tools best first: the best of each server first, so
    // a limit cut across servers keeps every server's best match before anyone's second.
    const ranked: string[] = [];
    const lists = servers.map((s) => s.tools.map((t) => t.name));
    for (let rank = 0; ranked.length < limit && lists.some((l) => l.length > rank); rank++) {
      for (const list of lists) {
        const name = list[rank];
        if (name !== undefined && ranked.length < limit) ranked.push(name);
      }
    }
    const definitions = await host.definitions(session, ranked, identity);
    const byName = new Map(definitions.map((d) => [d.name, d]));
    const hits = ranked.flatMap((qualified) => {
      const tool = byName.get(host.hostName(qualified) ?? "");
      return tool !== undefined ? [{ qualified, tool }] : [];
    });
    const tools = hits.map((hit) => hit.tool);
    if (tools.length === 0) {
      return text(
        `No tool matches "${query}". Try other words: what the tool acts on ("file", "issue") or what it does ("read", "create").`,
      );
    }
    // What was found joins this session's list alone; the host is told to list again.
    if (session.found?.add(hits.map((hit) => hit.qualified)) === true) {
      // On the call's own stream: over HTTP it then arrives before the answer, on any host.
      extra.sendNotification({ method: "notifications/tools/list_changed" }).catch(() => undefined);
    }
    return {
      content: [
        {
          type: "text",
          text:
            `${tools.length} tool${tools.length === 1 ? "" : "s"} found, now in your tool list: call one by name, ` +
            `or through call_tool if your list has not refreshed.\n` +
            JSON.stringify(tools.map(found)),
        },
      ],
      structuredContent: { tools: tools.map(found) },
    };
  };

  const describe = async (args: Record<string, unknown>): Promise<CallToolResult> => {
    const name = typeof args.name === "string" ? args.name : "";
    const qualified = name === "" ? undefined : await host.qualify(name);
    const about =
      qualified !== undefined
        ? await client.describe(qualified, scoped).catch(() => undefined)
        : undefined;
    if (about === undefined) {
      return text(
        `No tool is named "${name}". search_tools finds tools by what they do, and gives their exact names.`,
        true,
      );
    }
    const definition = described(name, about);
    return {
      content: [{ type: "text", text: JSON.stringify(definition) }],
      structuredContent: definition,
    };
  };

  /** The qualified names of a session's list besides its found tools. */
  const firstNames = async (session: Session): Promise<string[]> => {
    const always = await client.alwaysLoaded(scope.servers);
    if (options.mode !== "auto") return [...always];
    let most = usual.get(session);
    if (most === undefined) {
      most = mostCalled();
      usual.set(session, most);
      most.catch(() => usual.delete(session));
    }
    return [...new Set([...always, ...(await most)])];
  };

  return {
    mode: options.mode,
    foundTools: () => new FoundTools(options.loaded ?? CATALOG_LOADED),
    async list(session, identity) {
      const first = await firstNames(session);
      const listed = [...new Set([...first, ...(session.found ?? [])])];
      return [...metaTools(), ...(await host.definitions(session, listed, identity))];
    },
    async answer(session, name, args, extra, identity) {
      const given = args ?? {};
      if (name === META_TOOLS.search) return search(session, given, extra, identity);
      if (name === META_TOOLS.describe) return describe(given);
      const target = typeof given.name === "string" ? given.name : "";
      if (target === "" || isMetaTool(target)) {
        return text("call_tool needs the `name` of a tool search_tools found.", true);
      }
      const inner = given.arguments;
      const callArgs =
        typeof inner === "object" && inner !== null && !Array.isArray(inner)
          ? (inner as Record<string, unknown>)
          : undefined;
      return host.call(session, target, callArgs, extra);
    },
  };
}
