export { McpPool, type McpPoolOptions, type CatalogServer } from "./pool.js";
export {
  McpPoolError,
  httpStatusFor,
  POOL_ERROR_CODES,
  isPoolErrorCode,
  type PoolErrorCode,
  type PoolErrorDetail,
} from "./core/errors.js";
export { probe, type ProbeOptions, type ProbeIdentity } from "./server/probe.js";
export { listAllTools } from "./mcp/list-tools.js";
export { toolsFingerprint } from "./core/fingerprint.js";
export { describeChanges, diffTools, type PinnedList, type PinStore } from "./catalog/pinning.js";
export { resultText } from "./calls/results.js";
export { truncateText } from "./core/truncate.js";
export { qualifiedName } from "./catalog/naming.js";
export { MINIMAL_CHILD_ENV, type ChildEnvPolicy } from "./transport/child-env.js";
export {
  createDefaultTransport,
  type CreateTransport,
  type TransportContext,
  type FetchLike,
} from "./transport/transport.js";
export {
  keepAliveFetch,
  originPinnedFetch,
  RedirectRefusedError,
  DEFAULT_KEEP_ALIVE_MS,
  MAX_REDIRECTS,
  type KeepAliveFetch,
  type OriginPinnedOptions,
} from "./transport/fetch.js";
export { sessionLost } from "./server/session.js";
export { REDACTED } from "./core/secrets.js";
export type * from "./core/types.js";
export type { CallOptions } from "./calls/options.js";
export { connectionHash, type CachedTools, type ToolsCacheStore } from "./catalog/tools-cache.js";
export {
  PoolMonitor,
  MEMORY_CHECK_MS,
  type MonitoredPool,
  type PoolMonitorOptions,
} from "./watch/monitor.js";
export { UsageCounter, type UsageData, type UsageStore } from "./watch/usage.js";
export { coerceArguments, argumentProblems } from "./calls/coercion.js";
export {
  rankTools,
  tokenize,
  stem,
  DEFAULT_SEARCH_LIMIT,
  type RankableTool,
  type RankedTool,
} from "./catalog/search.js";
export {
  DEFAULT_RESULT_CACHE_MAX_ENTRIES,
  DEFAULT_RESULT_CACHE_TTL_MS,
  type ResultCacheOptions,
} from "./calls/result-cache.js";
export { runHooks, type RunHooksOptions, type HookHost } from "./calls/hooks.js";
export {
  elicitationCapability,
  type CallElicitHandler,
  type CallProgress,
  type ElicitationMode,
  type ElicitContext,
  type ElicitParams,
  type ElicitResult,
  type PoolElicitHandler,
  type CallSampleHandler,
  type CreateMessageResult,
  type PoolSampleHandler,
  type SampleContext,
  type SampleParams,
} from "./server/routing.js";
export {
  offers,
  PASSTHROUGH_METHODS,
  type PassthroughArgs,
  type PassthroughMethod,
  type PassthroughOptions,
  type PassthroughParams,
  type PassthroughResult,
  type HandedSubscription,
  type ResourceListener,
} from "./calls/server-passthrough.js";
export { subscriptionPlace } from "./calls/subscriptions.js";
export {
  AuthRequiredError,
  credentialsKey,
  isAuthRequired,
  memoryTokenStore,
  storedAuthProvider,
  type StoredCredentials,
  type StoredProviderOptions,
  type TokenStore,
} from "./auth/oauth.js";
export * from "../config/hooks.js";
export {
  ConversationRegistry,
  DEFAULT_END_TIMEOUT_MS,
  DEFAULT_TERMINATE_TIMEOUT_MS,
  type ConversationLease,
  type ConversationPoolOptions,
} from "./conversations/registry.js";
export {
  DEFAULT_CONVERSATION_IDLE_MS,
  DEFAULT_MAX_CLIENTS,
  DEFAULT_MAX_ENDING,
  DEFAULT_MAX_OPERATIONS,
} from "./conversations/settings.js";
export {
  isResolved,
  SESSION_END_OUTCOMES,
  type SessionEndOutcome,
} from "./transport/session-end.js";
export type * from "./conversations/types.js";
export {
  McpClient,
  type McpClientOptions,
  type RequestOptions,
  type Progress,
  type ResultSchema,
} from "./mcp/client.js";
export { McpError, ErrorCode, isMcpError } from "./core/mcp-error.js";
