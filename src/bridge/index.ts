/**
 * `mcpool bridge` as a library: an MCP server in front of the daemon, for any MCP host.
 * It reaches the pool only through mcpool-client; test/unit/import-graph
 * holds it to that.
 */
export {
  BridgeScopeError,
  createBridge,
  type Bridge,
  type BridgeOptions,
} from "./legacy/bridge-server.js";
export {
  bearerMatches,
  BoundedEventStore,
  EVENTS_KEPT,
  listenHttp,
  loopbackRequest,
  MAX_BODY_BYTES,
  MAX_SESSIONS,
  MCP_PATH,
  RETRY_MS,
  type HttpBridge,
  type HttpBridgeOptions,
} from "./fronts/http.js";
export { SERVER_META_KEY, scopedName, scopeOf, toolNames, type Scope } from "./core/naming.js";
export { answersApart } from "./fronts/mcp-sockets.js";
export {
  CATALOG_LOADED,
  CATALOG_TOKENS,
  META_TOOLS,
  type CatalogMode,
  type CatalogOptions,
} from "./catalog/on-demand.js";
