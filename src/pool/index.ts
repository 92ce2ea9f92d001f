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
export { resultText, truncateText } from "./results.js";
export { qualifiedName } from "./naming.js";
export { MINIMAL_CHILD_ENV, type ChildEnvPolicy } from "./child-env.js";
export {
  createDefaultTransport,
  type CreateTransport,
  type TransportContext,
  type FetchLike,
} from "./transport.js";
export type * from "./types.js";
export { connectionHash, type CachedTools, type ToolsCacheStore } from "./tools-cache.js";
