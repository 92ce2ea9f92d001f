/**
 * McpPool's options: every knob of the pool, with its unit and default. Kept apart from
 * the class so the contract reads in one place.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Environment } from "../config/placeholders.js";
import type { HttpServerConfig, McpServerConfig } from "../config/rows.js";
import type { ChildEnvPolicy } from "./transport/child-env.js";
import type { ConversationPoolOptions } from "./conversations/registry.js";
import type { TokenStore } from "./auth/oauth.js";
import type { PinStore } from "./catalog/pinning.js";
import type { ResultCacheOptions } from "./calls/result-cache.js";
import type { ElicitationMode, PoolElicitHandler, PoolSampleHandler } from "./server/routing.js";
import type { ToolsCacheStore } from "./catalog/tools-cache.js";
import type {
  ChildListener,
  CreateTransport,
  FetchLike,
  HandedChildren,
} from "./transport/transport.js";
import type { PoolLog } from "./core/types.js";
import type { Collector } from "./core/collect.js";

/** How long a server that failed is left alone before a call or reconcile dials it again. */
export const DEFAULT_CRASH_BACKOFF_MS = 5000;
/**
 * tools() logs once when a set it hands out is estimated above this many tokens: 10% of a
 * 200,000-token window. Measured (bench/tools-tokens.mjs): the echo server and the three
 * reference servers together are about 5,000 tokens, eight servers of their size 10,000; the
 * old 3,000 warned for the four small servers a new user starts with.
 */
export const DEFAULT_TOOLS_TOKEN_WARNING = 20_000;

export interface McpPoolOptions {
  /** Where sync() with no argument reads its rows. Without it, sync() needs rows. */
  load?: () => readonly McpServerConfig[] | Promise<readonly McpServerConfig[]>;
  /**
   * What log lines call the place the rows come from: a removed row logs `stopped: removed
   * from <rowsFrom>`. Default `the configuration`; the daemon names its file (`mcp.json`).
   */
  rowsFrom?: string;
  /** clientInfo.name of the MCP handshake: the whole of what a server learns about us. */
  clientName: string;
  /** clientInfo.version. Default: this package's version. */
  clientVersion?: string;
  /** Where the pool logs. Both halves optional; `{}` is silence. Default: errors to stderr. */
  log?: PoolLog;
  /**
   * Connect budget in ms: the whole wait for a starting server, its handshake (`initialize`,
   * or `server/discover`) and every tools/list page, a caller's wait included. Default
   * DEFAULT_CONNECT_TIMEOUT_MS.
   */
  connectTimeoutMs?: number;
  /** Per-call timeout in ms. Default: the SDK's 60 s. Progress does not extend it. */
  callTimeoutMs?: number;
  /** Probe budget in ms. Default: `connectTimeoutMs`. */
  probeTimeoutMs?: number;
  /** First backoff after a failure, ms, doubling per failure in a row (capped). Default 5000. */
  crashBackoffMs?: number;
  /**
   * ms a server gets to answer a `ping` after one of its calls timed out; no answer and it
   * is taken for hung, shown `unresponsive` and replaced. Default 5000.
   */
  pingTimeoutMs?: number;
  /** Cap on the characters call() returns; 0 or unset is no cap. */
  maxResultChars?: number;
  /** Cap on each description tools() hands out, `[Label] ` prefix included; unset is no cap. */
  maxDescriptionChars?: number;
  /** Estimated tokens above which tools() logs a warning once per larger set; 0 silences. Default 20000. */
  toolsTokenWarning?: number;
  /** Builds the transport for a row; tests and custom transports plug in here. */
  createTransport?: CreateTransport;
  /**
   * fetch used by http rows, always under origin pinning. Default: a keepAliveFetch()
   * (30 s idle) of the pool's own, closed with the pool.
   */
  fetch?: FetchLike;
  /** Where `${VAR}` placeholders and inherited child variables are read. Default: process.env. */
  env?: Environment;
  /** Environment policy for stdio children. Default `inherit`. */
  childEnv?: ChildEnvPolicy;
  /**
   * Variables every stdio child gets whatever its policy and row say (the daemon's mark of
   * its descendants, `MCPOOL_DAEMON`). Default: none.
   */
  childMark?: Readonly<Record<string, string>>;
  /** Children a reconcile starts at once. Default 8. */
  maxConcurrentStarts?: number;
  /**
   * Children per row for hosts with other capabilities or roots than the pool's (one per
   * project, per capability set); past it the least recently used idle one ends. Default 8.
   */
  maxChildrenPerServer?: number;
  /** Debounce of syncSoon(), ms. Default 100. */
  syncDebounceMs?: number;
  /** Told when a stdio child starts and when it and its process group are gone (pid records). */
  onChild?: ChildListener;
  /**
   * Children a previous daemon handed over (src/daemon/handover): the first dial of each
   * one's row speaks to it instead of spawning a new one.
   */
  handed?: HandedChildren;
  /**
   * V8's collector, run while a stdio child's oversize line is dropped (core/collect.ts). The
   * daemon gives its own; a pool without one leaves collection to V8.
   */
  collector?: Collector;
  /** Register rows without dialling; the first use starts a server. Rows may override. Default false. */
  lazy?: boolean;
  /** Close a server after this many ms without a use; rows may override, 0 never. Default: never. */
  idleTimeoutMs?: number;
  /** false: never list tools (a proxy that passes tools/list through). Default true. */
  indexTools?: boolean;
  /** Where last-known tool lists outlive the process, so a lazy pool has a catalog at once. */
  toolsCache?: ToolsCacheStore;
  /**
   * A lazy row the tools cache knows nothing of (for its connection) is learned once: started,
   * listed (the list goes to the tools cache), and stopped, a few at a time after the eager
   * rows have started, so agents can find its tools without anything calling it first.
   * Default false; the daemon sets it.
   */
  learnLazyTools?: boolean;
  /**
   * Where http rows' OAuth tokens and client registrations are kept, keyed by server url
   * (oauth.ts). Read by a non-interactive provider: stored tokens, refreshed through the SDK,
   * `auth-required` when only a person could help. Default: this process's memory.
   */
  tokenStore?: TokenStore;
  /**
   * Builds the OAuthClientProvider of an http row (given as dialled, placeholders filled)
   * instead of the stored, non-interactive one; undefined leaves the row without OAuth. A
   * provider that redirects makes the connect or call fail with `auth-required`.
   */
  authProvider?: (row: HttpServerConfig) => OAuthClientProvider | undefined;
  /** Coerce call arguments against each tool's input schema; rows and calls may override. Default true. */
  coerceArguments?: boolean;
  /** Answer repeated read-only calls from memory; off unless given. Defaults 30 s, 256 entries. */
  resultCache?: ResultCacheOptions;
  /**
   * Where the list each pin was approved for is kept, so a mismatch can say what
   * changed and approve() can record a new one. Without it the difference is unknown;
   * withholding works the same.
   */
  pins?: PinStore;
  /**
   * Answers a server's elicitation/create that no call in flight on it takes with its own
   * CallOptions.onElicit. Setting it is what declares the elicitation capability on
   * every connection; without it the pool declares none and servers do not ask. A handler
   * that throws is logged and answered `cancel`. The asking call stays on its clock.
   */
  onElicit?: PoolElicitHandler;
  /**
   * Elicitation modes declared with `onElicit`. Default `["form"]`; add `"url"` when the host can
   * open a link.
   */
  elicitationModes?: readonly ElicitationMode[];
  /**
   * Answers a server's sampling/createMessage that no call in flight on it takes with its
   * own CallOptions.onSample. Setting it is what declares the sampling capability on
   * every connection; without it the pool declares none. A handler that throws answers the
   * server with a JSON-RPC error (its McpError, else -32603).
   */
  onSample?: PoolSampleHandler;
  /** Per-conversation rows: share names, terminate and ending bounds, clock. */
  conversations?: ConversationPoolOptions;
}

/** How long a starting server may take to answer before its callers are told, ms: 15 s. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
