/**
 * A session through an entry of the whole pool read back as one server's: the pool names a
 * server's tools and prompts `<slug>__<name>` and presents itself (mcpool's serverInfo,
 * capabilities and instructions), the whole pool's own differences (docs/bridge.md).
 */
import type { Host } from "./host.js";
import type { ServerScript, Step } from "./session.js";

/** `script` in the names the whole pool gives the server's tools (`<slug>__<tool>`). */
export function named(script: ServerScript, slug: string): ServerScript {
  const own = (name: string): string => `${slug}__${name}`;
  const keys = <T>(table: Record<string, T> = {}): Record<string, T> =>
    Object.fromEntries(Object.entries(table).map(([k, v]) => [own(k), v]));
  return {
    fixed: keys(script.fixed),
    uncalled: keys(script.uncalled),
    order: (script.order ?? []).map(own),
    twice: (script.twice ?? []).map(own),
  };
}

/**
 * A session through the whole pool with its own names read back (`<slug>__` taken off), and
 * both sides' handshake cut to the era it was served and the tasks offered: the whole pool's
 * serverInfo, other capabilities and instructions are mcpool's.
 */
export function asWholePool(steps: readonly Step[], slug: string): Step[] {
  const own = JSON.parse(JSON.stringify(steps).replaceAll(`${slug}__`, "")) as Step[];
  return own.map((s) => {
    if (s.op !== "handshake") return s;
    const { era, capabilities } = s.result as { era: unknown; capabilities?: { tasks?: unknown } };
    return { op: s.op, result: { era, tasks: capabilities?.tasks } };
  });
}

/** The list keys whose items name their server: by `<slug>__`, or resources by `_meta`. */
const LISTS: Record<string, string> = {
  "tools/list": "tools",
  "prompts/list": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
};

/**
 * `host` of the whole pool seen as a host of the server `slug` alone: its lists hold only that
 * server's tools, prompts, resources and templates (the pool serves others beside it).
 */
export function oneServerOf(host: Host, slug: string): Host {
  const owned = (item: { name?: string; _meta?: Record<string, unknown> }): boolean =>
    item.name?.startsWith(`${slug}__`) === true || item._meta?.["mcpool/server"] === slug;
  return {
    ...host,
    request: async (method, params) => {
      const result = await host.request(method, params);
      const key = LISTS[method];
      if (key === undefined || result === null || typeof result !== "object") return result;
      const items = (result as Record<string, unknown>)[key] as Parameters<typeof owned>[0][];
      return { ...result, [key]: (items ?? []).filter(owned) };
    },
  };
}
