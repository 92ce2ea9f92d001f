/**
 * Tools on demand (on-demand.ts) as a 2026-07-28 host meets them through the modern side
 * (modern/bridge.ts): each serving unit — a connection, or one request of the stateless
 * HTTP face — is a catalog session of its own, listing the meta tools, the first tools and
 * what its searches found; call_tool is a call of the tool it names, with its rounds.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ConversationIdentity, HostProfile } from "mcpool-client";
import type { Extra, Session } from "../core/session.js";
import { isMetaTool, META_TOOLS, type Catalog } from "./on-demand.js";

/** The catalog of one serving unit (a connection, or one HTTP request). */
export interface ModernCatalogUnit {
  list(identity: ConversationIdentity, profile: HostProfile): Promise<Tool[]>;
  /** search_tools or describe_tool's answer. */
  answer(
    name: string,
    args: Record<string, unknown> | undefined,
    identity: ConversationIdentity,
    profile: HostProfile,
  ): Promise<CallToolResult>;
}

export interface ModernCatalog {
  /** A new serving unit's catalog: its own found tools. */
  unit(): ModernCatalogUnit;
  /** The meta tool's name that calls another tool (call_tool). */
  readonly callTool: string;
  isMetaTool(name: string): boolean;
}

/**
 * The tool call_tool's arguments name, with its arguments, or undefined when they name none
 * (the catalog's answer then says what call_tool needs).
 */
export function calledThrough(
  args: Record<string, unknown> | undefined,
): { name: string; arguments?: Record<string, unknown> } | undefined {
  const name = args?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const inner = args?.arguments;
  return typeof inner === "object" && inner !== null && !Array.isArray(inner)
    ? { name, arguments: inner as Record<string, unknown> }
    : { name };
}

/**
 * The catalog as the modern side meets it: each serving unit a session of its own, whose
 * found tools it lists; its search's list_changed is not sent (a modern host learns of a
 * changed list through its listen stream, and is told to use call_tool until it lists).
 */
export function modernCatalog(catalog: Catalog): ModernCatalog {
  return {
    callTool: META_TOOLS.call,
    isMetaTool,
    unit() {
      // One session per unit, so `auto`'s first tools hold for its life; the profile is the
      // latest request's (a connection's host declares the same on each).
      let profile: HostProfile | undefined;
      const session = {
        found: catalog.foundTools(),
        profile: { get: () => Promise.resolve(profile) },
      } as unknown as Session;
      const quiet = { sendNotification: () => Promise.resolve() } as unknown as Extra;
      return {
        list: (identity, latest) => {
          profile = latest;
          return catalog.list(session, identity);
        },
        answer: (name, args, identity, latest) => {
          profile = latest;
          return catalog.answer(session, name, args, quiet, identity);
        },
      };
    },
  };
}
