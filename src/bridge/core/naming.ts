/**
 * The names the bridge offers a host, and the tables that route them back.
 *
 * - Pool scope (no `--server`): tools under their qualified names, `<slug>__<tool>` (the
 *   pool's own); prompts as `<slug>__<prompt>`; resources under their own URIs (a URI is an
 *   address the server's own content refers to, so it is never rewritten), each listed with
 *   `_meta["mcpool/server"]` naming its server and its `name` prefixed `<slug>__`.
 * - One server (`--server ID`): that server's own tool, prompt and resource names, untouched,
 *   so a host config entry for the server can be swapped for the bridge without the model
 *   noticing.
 *
 * Every lookup goes through a table built when the list was made, by whole string, never
 * by splitting a name on `__` (the split of a shortened name is a tool its server never had).
 */
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { ServerState } from "mcpool-client";

/** The `_meta` key that says which pooled server a listed resource or prompt came from. */
export const SERVER_META_KEY = "mcpool/server";

/** The name a host sees for one server's prompt (or resource name) in this scope. */
export function scopedName(slug: string, name: string, single: boolean): string {
  return single ? name : `${slug}__${name}`;
}

/** Host tool names ↔ the pool's qualified names. */
export interface ToolNames {
  /** Qualified → what the host is offered. */
  readonly toHost: ReadonlyMap<string, string>;
  /** What the host calls → qualified. */
  readonly toPool: ReadonlyMap<string, string>;
}

/**
 * In one-server scope, each tool of `serverId` under its own name (from state()'s `name` and
 * `qualified`, the pool's own pairing); in pool scope, qualified names both ways.
 */
export function toolNames(states: readonly ServerState[], single: string | undefined): ToolNames {
  const toHost = new Map<string, string>();
  const toPool = new Map<string, string>();
  for (const state of states) {
    if (single !== undefined && state.id !== single) continue;
    for (const tool of state.tools) {
      if (tool.hidden || tool.clashed) continue;
      const host = single !== undefined ? tool.name : tool.qualified;
      // Two own names cannot collide within one server; first wins all the same.
      if (toPool.has(host)) continue;
      toHost.set(tool.qualified, host);
      toPool.set(host, tool.qualified);
    }
  }
  return { toHost, toPool };
}

/** Where a host's prompt name goes: the server and the server's own prompt name. */
export interface PromptRoute {
  serverId: string;
  name: string;
}

/**
 * The URI templates of the servers in scope, for routing a read of a URI no list named
 * (one a template expands to) and a completion of a template's argument.
 */
export class TemplateRoutes {
  readonly #templates: { serverId: string; template: UriTemplate; source: string }[] = [];

  /** Records a template; one that does not parse, or that an earlier server has, is left out (false). */
  add(serverId: string, uriTemplate: string): boolean {
    if (this.#templates.some((t) => t.source === uriTemplate)) return false;
    try {
      this.#templates.push({
        serverId,
        template: new UriTemplate(uriTemplate),
        source: uriTemplate,
      });
      return true;
    } catch {
      return false;
    }
  }

  /** The first server (in list order) one of whose templates matches `uri`. */
  match(uri: string): string | undefined {
    for (const { serverId, template } of this.#templates) {
      try {
        if (template.match(uri) !== null) return serverId;
      } catch {
        // A URI the matcher refuses (too long, say) matches nothing.
      }
    }
    return undefined;
  }

  /** The server whose template is exactly `uriTemplate`. */
  exact(uriTemplate: string): string | undefined {
    return this.#templates.find((t) => t.source === uriTemplate)?.serverId;
  }
}

/** Which pooled servers the bridge fronts, and under which names. */
export interface Scope {
  /** `--server ID`: the one server, served under its own names. */
  readonly single: string | undefined;
  /** What is sent to the daemon as `servers`: undefined = every server. */
  readonly servers: readonly string[] | undefined;
  includes(serverId: string): boolean;
}

export function scopeOf(options: { server?: string; servers?: readonly string[] }): Scope {
  const single = options.server;
  const servers = single !== undefined ? [single] : options.servers;
  const set = servers === undefined ? undefined : new Set(servers);
  return {
    single,
    servers,
    includes: (serverId) => set === undefined || set.has(serverId),
  };
}
