/**
 * Whether a server's capabilities offer a passthrough surface, and the `not-offered` refusal
 * when they do not: checked before anything is sent (server-passthrough.ts).
 */
import { McpPoolError } from "../core/errors.js";
import type { PassthroughMethod } from "./server-passthrough.js";

export type Surface = PassthroughMethod | "resources/subscribe" | "resources/unsubscribe";

/** The server capability a surface needs, as a path into ServerCapabilities; ping needs none. */
const NEEDS: Record<Surface, readonly string[]> = {
  "resources/list": ["resources"],
  "resources/templates/list": ["resources"],
  "resources/read": ["resources"],
  "resources/subscribe": ["resources", "subscribe"],
  "resources/unsubscribe": ["resources", "subscribe"],
  "prompts/list": ["prompts"],
  "prompts/get": ["prompts"],
  "completion/complete": ["completions"],
  "logging/setLevel": ["logging"],
  ping: [],
};

/** Whether `capabilities` (as the server sent them) offer `surface`. */
export function offers(
  surface: Surface,
  capabilities: Record<string, unknown> | undefined,
): boolean {
  let at: unknown = capabilities ?? {};
  for (const key of NEEDS[surface]) {
    if (typeof at !== "object" || at === null) return false;
    at = (at as Record<string, unknown>)[key];
    if (at === undefined || at === false) return false;
  }
  return true;
}

export function assertOffered(
  serverId: string,
  surface: Surface,
  capabilities: Record<string, unknown> | undefined,
): void {
  if (offers(surface, capabilities)) return;
  const needs = NEEDS[surface].join(".");
  const has = Object.keys(capabilities ?? {}).join(", ") || "none";
  throw new McpPoolError(
    "not-offered",
    `server "${serverId}" does not offer ${surface}: its capabilities lack ${needs} (it declares ${has})`,
    { serverId, method: surface, capability: needs },
  );
}
