export { McpPool, type McpPoolOptions, type CatalogServer } from "./pool.js";
export {
  McpPoolError,
  httpStatusFor,
  POOL_ERROR_CODES,
  isPoolErrorCode,
  type PoolErrorCode,
  type PoolErrorDetail,
} from "./errors.js";
export { probe, type ProbeOptions, type ProbeIdentity } from "./probe.js";
export { listAllTools } from "./list-tools.js";
export { toolsFingerprint } from "./fingerprint.js";
export { describeChanges, diffTools, type PinnedList, type PinStore } from "./pinning.js";
export { resultText } from "./results.js";
export { truncateText } from "./truncate.js";
export { qualifiedName } from "./naming.js";
export { MINIMAL_CHILD_ENV, type ChildEnvPolicy } from "./child-env.js";
export {
  createDefaultTransport,
  type CreateTransport,
  type TransportContext,
  type FetchLike,
} from "./transport.js";
export {
  keepAliveFetch,
  originPinnedFetch,
  RedirectRefusedError,
  DEFAULT_KEEP_ALIVE_MS,
  MAX_REDIRECTS,
  type KeepAliveFetch,
  type OriginPinnedOptions,
} from "./fetch.js";
export { sessionLost } from "./session.js";
export { REDACTED } from "./secrets.js";
export type * from "./types.js";
export type { CallOptions } from "./call-options.js";
export { connectionHash, type CachedTools, type ToolsCacheStore } from "./tools-cache.js";
export {
  PoolMonitor,
  MEMORY_CHECK_MS,
  type MonitoredPool,
  type PoolMonitorOptions,
} from "./monitor.js";
export { UsageCounter, type UsageData, type UsageStore } from "./usage.js";
export { coerceArguments, argumentProblems } from "./coercion.js";
export {
  rankTools,
  tokenize,
  stem,
  DEFAULT_SEARCH_LIMIT,
  type RankableTool,
  type RankedTool,
} from "./search.js";
export {
  DEFAULT_RESULT_CACHE_MAX_ENTRIES,
  DEFAULT_RESULT_CACHE_TTL_MS,
  type ResultCacheOptions,
} from "./result-cache.js";
export { runHooks, type RunHooksOptions, type HookHost } from "./run-hooks.js";
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
} from "./routing.js";
export {
  offers,
  PASSTHROUGH_METHODS,
  type PassthroughArgs,
  type PassthroughMethod,
  type PassthroughOptions,
  type PassthroughParams,
  type PassthroughResult,
  type ResourceListener,
} from "./passthrough.js";
export {
  AuthRequiredError,
  credentialsKey,
  isAuthRequired,
  memoryTokenStore,
  storedAuthProvider,
  type StoredCredentials,
  type StoredProviderOptions,
  type TokenStore,
} from "./oauth.js";
export * from "../config/hooks.js";
export {
  ConversationRegistry,
  DEFAULT_END_TIMEOUT_MS,
  DEFAULT_TERMINATE_TIMEOUT_MS,
  type ConversationLease,
  type ConversationPoolOptions,
} from "./conversations.js";
export {
  DEFAULT_CONVERSATION_IDLE_MS,
  DEFAULT_MAX_CLIENTS,
  DEFAULT_MAX_ENDING,
  DEFAULT_MAX_OPERATIONS,
} from "./conversation-settings.js";
export { isResolved, SESSION_END_OUTCOMES, type SessionEndOutcome } from "./session-end.js";
export type * from "./conversation-types.js";
export {
  McpClient,
  type McpClientOptions,
  type RequestOptions,
  type Progress,
  type ResultSchema,
} from "./mcp-client.js";
export { McpError, ErrorCode, isMcpError } from "./mcp-error.js";
