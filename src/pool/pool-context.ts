/**
 * The wiring between the pool and its entries: the client capabilities the pool declares
 * and the EntryContext every ServerEntry is built with — transports, budgets, the
 * OAuth hooks, and where an entry says what happened. Built once per pool.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

import { VERSION } from "../version.js";
import type { EntryContext } from "./server/context.js";
import type { KeepAliveFetch } from "./transport/fetch.js";
import { JunkLog } from "./server/junk-log.js";
import { withOAuth } from "./auth/oauth-client.js";
import type { PoolAuth } from "./auth/pool-auth.js";
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_CRASH_BACKOFF_MS,
  type McpPoolOptions,
} from "./pool-options.js";
import { createDefaultTransport } from "./transport/transport.js";
import type { PoolLog } from "./core/types.js";

/** What the pool answers an entry with, besides its options. */
export type EntryHooks = Pick<
  EntryContext,
  "emit" | "notify" | "changed" | "schedule" | "listed" | "elicit" | "sample" | "held" | "revives"
>;

export function entryContext(
  options: McpPoolOptions,
  parts: {
    log: PoolLog;
    auth: PoolAuth;
    /** The default fetch of http rows when the pool was given none. */
    ownFetch: KeepAliveFetch | undefined;
    onUnsetVariable(serverId: string, name: string): void;
    /** What the pool's clients declare: elicitation and sampling when it answers them. */
    capabilities: ClientCapabilities;
  },
  hooks: EntryHooks,
): EntryContext {
  const { log, auth } = parts;
  const junk = new JunkLog({ log: (message, about) => log.info?.(message, about) });
  const fetch = options.fetch ?? parts.ownFetch;
  return {
    clientInfo: { name: options.clientName, version: options.clientVersion ?? VERSION },
    capabilities: parts.capabilities,
    oauthSecrets: (serverId) => auth.secrets(serverId),
    authRequired: (serverId, cause) => auth.refusal(serverId, cause),
    // An http row's transport is handed an OAuth provider: the OAuth code loads first.
    createTransport: withOAuth(options.createTransport ?? createDefaultTransport),
    spareProbe: options.createTransport === undefined,
    transportContext: {
      childEnv: options.childEnv ?? "inherit",
      ...(options.childMark ? { childMark: options.childMark } : {}),
      ...(fetch ? { fetch } : {}),
      ...(options.env ? { env: options.env } : {}),
      onUnsetVariable: parts.onUnsetVariable,
      ...(options.onChild ? { onChild: options.onChild } : {}),
      ...(options.handed ? { handed: options.handed } : {}),
      ...(options.collector ? { collector: options.collector } : {}),
      authProvider: (row) => auth.provider(row, true),
      onAuthChallenge: (serverId, challenge) => auth.challenged(serverId, challenge),
      onJunk: (serverId, line, redact) => junk.line(serverId, line, redact),
    },
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    callTimeoutMs: options.callTimeoutMs,
    crashBackoffMs: options.crashBackoffMs ?? DEFAULT_CRASH_BACKOFF_MS,
    log,
    idleTimeoutMs: options.idleTimeoutMs,
    indexTools: options.indexTools !== false,
    ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
    ...hooks,
  };
}
