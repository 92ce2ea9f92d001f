/**
 * What a bridge offers the host it serves, from what the pooled servers in its scope said
 * of themselves: the capabilities of its initialize answer (the servers' extensions among
 * them) and its instructions.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ServerState } from "mcpool-client";
import type { Scope } from "./naming.js";

/** Which capabilities to declare: tools and logging always, the rest where they can work. */
export function capabilitiesFor(scope: Scope, states: readonly ServerState[]): ServerCapabilities {
  const capabilities: ServerCapabilities = { tools: { listChanged: true }, logging: {} };
  const servers = inScope(scope, states);
  const single = scope.single !== undefined ? servers[0] : undefined;
  // A server that never connected has not said what it offers: offer it all, refuse on use.
  const offers = (name: string): boolean =>
    single?.capabilities === undefined || single.capabilities[name] !== undefined;
  if (offers("resources")) capabilities.resources = { subscribe: true, listChanged: true };
  if (offers("prompts")) capabilities.prompts = { listChanged: true };
  if (offers("completions")) capabilities.completions = {};
  // Extensions (MCP Apps' `io.modelcontextprotocol/ui`, …) are the servers' to offer: the one
  // server's, or every server's in scope, the first to name one giving its settings.
  const extensions: Record<string, object> = {};
  for (const state of servers) {
    const offered = state.capabilities?.extensions;
    if (offered === null || typeof offered !== "object") continue;
    for (const [name, settings] of Object.entries(offered)) {
      if (!(name in extensions) && settings !== null && typeof settings === "object") {
        extensions[name] = settings as object;
      }
    }
  }
  if (Object.keys(extensions).length > 0) capabilities.extensions = extensions;
  return capabilities;
}

/**
 * Whether a modern host's listen may name resource URIs: a server in scope takes
 * subscriptions (a lone server that never connected is offered, as in capabilitiesFor).
 */
export function subscribesResources(scope: Scope, states: readonly ServerState[]): boolean {
  const servers = inScope(scope, states);
  if (scope.single !== undefined && servers[0]?.capabilities === undefined) return true;
  return servers.some((state) => {
    const resources = state.capabilities?.resources as { subscribe?: unknown } | undefined;
    return resources?.subscribe === true;
  });
}

/** The servers a bridge's scope covers: the one, the listed, or all. */
function inScope(scope: Scope, states: readonly ServerState[]): ServerState[] {
  if (scope.single !== undefined) return states.filter((s) => s.id === scope.single);
  return states.filter((s) => scope.servers === undefined || scope.servers.includes(s.id));
}

/**
 * The instructions a host is given: the one server's as it wrote them; for several, each
 * server's under a heading naming it and its tools' prefix, so a host can tell whose is whose.
 */
export function instructionsFor(scope: Scope, states: readonly ServerState[]): string | undefined {
  const given = inScope(scope, states).filter((s) => s.instructions?.trim());
  if (scope.single !== undefined) return given[0]?.instructions;
  if (given.length === 0) return undefined;
  return given
    .map((s) => `## ${s.id} (tools ${s.slug ?? s.id}__*)\n\n${s.instructions!.trim()}`)
    .join("\n\n");
}
