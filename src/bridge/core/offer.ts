/**
 * What a bridge offers the host it serves, from what the pooled servers in its scope said
 * of themselves: the capabilities of its initialize answer (the servers' extensions among
 * them), its serverInfo and its instructions. A one-server bridge whose server has connected
 * presents that server as it is: its own serverInfo, and only the capabilities it has
 * (`tasks` among them: its task-augmented calls and `tasks/*` are relayed, but not in
 * catalog mode, whose host calls the pool's own tools). A bridge over several servers, or
 * over one that never said what it offers, is mcpool, offering what can work and refusing on
 * use; `tasks` where a server in scope offers them (each part any of them offers), relayed
 * to the server whose task it is (tasks.ts).
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { PoolClient, ServerState } from "mcpool-client";
import type { Scope } from "./naming.js";

/** Capabilities of a lone server not passed on in catalog mode: its host calls the pool's tools. */
const NOT_IN_CATALOG = new Set(["tasks"]);

/**
 * Which capabilities to declare: a lone known server's own (tools with `listChanged` where
 * `listsChange`, for a catalog whose list grows); otherwise tools and logging always, the
 * rest where they can work.
 */
export function capabilitiesFor(
  scope: Scope,
  states: readonly ServerState[],
  listsChange = false,
): ServerCapabilities {
  const servers = inScope(scope, states);
  const single = scope.single !== undefined ? servers[0] : undefined;
  if (single?.capabilities !== undefined) {
    const own = Object.fromEntries(
      Object.entries(structuredClone(single.capabilities)).filter(
        ([key]) => !listsChange || !NOT_IN_CATALOG.has(key),
      ),
    ) as ServerCapabilities;
    if (own.tools === undefined || listsChange) own.tools = { ...own.tools, listChanged: true };
    return own;
  }
  const capabilities: ServerCapabilities = { tools: { listChanged: true }, logging: {} };
  // A server that never connected has not said what it offers: offer it all, refuse on use.
  const offers = (name: string): boolean =>
    single?.capabilities === undefined || single.capabilities[name] !== undefined;
  if (offers("resources")) capabilities.resources = { subscribe: true, listChanged: true };
  if (offers("prompts")) capabilities.prompts = { listChanged: true };
  if (offers("completions")) capabilities.completions = {};
  // Tasks, where a server in scope offers them: each part that one of them offers.
  if (!listsChange) {
    const tasks = servers.map((s) => s.capabilities?.tasks).filter(isObject);
    if (tasks.length > 0) capabilities.tasks = tasks.reduce(merged, {});
  }
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
 * The servers a bridge relays tasks of: those in scope that offer `tasks`, in scope order;
 * none in catalog mode (`listsChange`), whose host calls the pool's own tools.
 */
export function taskServers(
  scope: Scope,
  states: readonly ServerState[],
  listsChange = false,
): string[] {
  if (listsChange) return [];
  return inScope(scope, states)
    .filter((s) => isObject(s.capabilities?.tasks))
    .map((s) => s.id);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** `a` with what `b` adds to it, object by object (`a`'s leaves kept). */
function merged(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(a);
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    if (isObject(mine) && isObject(value)) out[key] = merged(mine, value);
    else if (!(key in out)) out[key] = structuredClone(value);
  }
  return out;
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

/**
 * Whether the servers behind a bridge were found to speak only the legacy era (each one's era
 * verdict, learnt once and kept with its tools; knownStates wakes a lone server not yet
 * known): direct, a dual-era host's `server/discover` fails on such a server and it falls
 * back to `initialize`, so through the bridge it must too. A bridge over several servers (or
 * the whole pool) is so when every server it serves is: its host then gets the era it would
 * get of each of them direct. One that serves a server not known to be legacy, or none at
 * all, serves each era's host.
 */
export function speaksOnlyLegacy(scope: Scope, states: readonly ServerState[]): boolean {
  const served = inScope(scope, states).filter(
    (s) => scope.single !== undefined || s.status !== "disabled",
  );
  return served.length > 0 && served.every((s) => s.era === "legacy");
}

/** The serverInfo a host is given: a lone connected server's own, else `fallback` (mcpool's). */
export function serverInfoFor(
  scope: Scope,
  states: readonly ServerState[],
  fallback: { name: string; version: string },
): { name: string; version: string; [key: string]: unknown } {
  const own = scope.single !== undefined ? inScope(scope, states)[0]?.serverInfo : undefined;
  return own !== undefined ? structuredClone(own) : fallback;
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

/**
 * The reserved `_meta` keys of the 2026-07-28 per-request envelope (basic/index, `_meta`):
 * one era's metadata, which a host of the other era never meets.
 */
const MODERN_ENVELOPE = [
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientInfo",
  "io.modelcontextprotocol/clientCapabilities",
  "io.modelcontextprotocol/logLevel",
  "io.modelcontextprotocol/serverInfo",
];

/**
 * A modern server's result as a legacy host is given it: without the envelope's keys in its
 * `_meta` (and without a `_meta` they alone made up).
 */
export function forLegacyHost<T extends { _meta?: Record<string, unknown> | undefined }>(
  result: T,
): T {
  const meta = result._meta;
  if (meta === undefined || !MODERN_ENVELOPE.some((key) => key in meta)) return result;
  const kept = Object.fromEntries(
    Object.entries(meta).filter(([key]) => !MODERN_ENVELOPE.includes(key)),
  );
  const { _meta: _envelope, ...rest } = result;
  return (Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest) as T;
}

/** The fields of a 2026-07-28 result that 2025-11-25 has not (its cache hint, its kind). */
const MODERN_RESULT_FIELDS = ["ttlMs", "cacheScope", "resultType"];

/**
 * A listing, read or prompt a modern server answered, as a legacy host is given it: without
 * the 2026-07-28 result fields and without the envelope's keys in its `_meta`.
 */
export function legacyResult<T extends { _meta?: Record<string, unknown> | undefined }>(
  result: T,
): T {
  const stripped = forLegacyHost(result) as Record<string, unknown>;
  if (!MODERN_RESULT_FIELDS.some((field) => field in stripped)) return stripped as T;
  return Object.fromEntries(
    Object.entries(stripped).filter(([key]) => !MODERN_RESULT_FIELDS.includes(key)),
  ) as T;
}

/**
 * The pool's servers, with a lone server (`--server`) that has not yet said who it is and
 * what it offers woken first, so its host meets the server's own serverInfo and capabilities
 * (a server that cannot start is served as mcpool, refusing on use, and said in the log).
 * A lone server whose 2025-11-25 hosts are served by a child in that era, and whose face
 * there is not known yet, has such a child dialled (a listing for a legacy host that
 * declares nothing): its handshake tells the face, kept from then on with the tools cache.
 */
export async function knownStates(
  upstream: PoolClient,
  single: string | undefined,
  log: (line: string) => void,
): Promise<readonly ServerState[]> {
  let states = await upstream.state();
  let lone = states.find((s) => s.id === single);
  if (lone === undefined || lone.status === "disabled") return states;
  const said = (error: Error): void => log(`mcpool bridge: ${error.message}`);
  if (lone.capabilities === undefined) {
    await upstream.ping(lone.id).catch(said);
    states = await upstream.state();
    lone = states.find((s) => s.id === single);
  }
  if (lone?.legacyFace?.known !== false) return states;
  await upstream.tools({ servers: [lone.id], profile: { era: "legacy" } }).catch(said);
  return upstream.state();
}

/**
 * The servers as a 2025-11-25 host of the bridge meets them: one whose legacy hosts are
 * served by a child in that era (its row on `auto`, held in 2026-07-28) declares what that
 * child's handshake told — its serverInfo, capabilities and instructions there — as it
 * does to such a host direct, not what the row's 2026-07-28 connection was told.
 */
export function legacyFaced(states: readonly ServerState[]): ServerState[] {
  return states.map((state) => {
    const face = state.legacyFace;
    if (face?.known !== true) return state;
    const { serverInfo: _info, capabilities: _caps, instructions: _text, ...rest } = state;
    const { known: _known, ...told } = structuredClone(face);
    return { ...rest, ...told };
  });
}
