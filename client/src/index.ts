/**
 * mcpool-client: the wire contract of the mcpool daemon and PoolClient, its thin client.
 * Depends on json-rpc-2.0 and Node built-ins only, never on the MCP SDK.
 */
export {
  connect,
  DEFAULT_AUTO_START_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  type CallOptions,
  type ConnectOptions,
  type EventListener,
  type NotificationListener,
  type PoolClient,
  type RunHooksOptions,
} from "./client.js";
export {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_FRAME_BYTES,
  encodeFrame,
  FrameDecoder,
  type Frame,
  type FrameDecoderOptions,
  type FrameError,
  type FrameErrorReason,
} from "./codec.js";
export {
  CLIENT_ERROR_CODES,
  fromWireError,
  isErrorCode,
  McpPoolError,
  POOL_ERROR_CODES,
  toWireError,
  wireCodeOf,
  type ClientErrorCode,
  type ErrorCode,
  type ErrorDetail,
  type PoolErrorCode,
  type WireError,
  type WireErrorData,
} from "./errors.js";
export { defaultSocketPath } from "./paths.js";
export {
  isMethodName,
  isNotificationName,
  METHODS,
  NOTIFICATIONS,
  PROTOCOL_VERSION,
  type ApproveParams,
  type AuthStoreParams,
  type CallParams,
  type CallResult,
  type CatalogParams,
  type DescribeParams,
  type Empty,
  type HelloParams,
  type HelloResult,
  type MethodName,
  type MethodSpec,
  type Methods,
  type NotificationName,
  type NotificationParamsOf,
  type Notifications,
  type NotificationSpec,
  type ParamsCheck,
  type ParamsOf,
  type ProbeParams,
  type ResultOf,
  type RunHooksParams,
  type SearchParams,
  type ServerIdParams,
  type ServerNotificationParams,
  type StateParams,
  type StatusParams,
  type UsageParams,
  type SubscribeParams,
  type ToolsParams,
} from "./protocol.js";
export type * from "./shapes.js";
export type * from "./conversation-shapes.js";
export {
  CONVERSATION_METHODS,
  type ConversationAcquireParams,
  type ConversationAcquireResult,
  type ConversationReleaseParams,
  type ConversationStatsParams,
  type ConversationTerminateParams,
  type ConversationToolsParams,
  type PermissionsChangedParams,
  type ToolsChangedParams,
} from "./conversation-protocol.js";
export type {
  ConversationLeaseHandle,
  ConversationsClient,
  IdentifiedClient,
} from "./conversations.js";
// Elicitation, progress, cancellation and passthrough (SPEC C14, C15).
export {
  CANCEL,
  DAEMON_REQUESTS,
  isDaemonRequestName,
  type CancelParams,
  type CompleteParams,
  type DaemonParamsOf,
  type DaemonRequestName,
  type DaemonRequests,
  type DaemonResultOf,
  type ElicitParams,
  type GetPromptParams,
  type ListPageParams,
  type ProgressParams,
  type ResourceUriParams,
  type SampleParams,
  type ServerScopedParams,
  type SetLevelParams,
} from "./protocol.js";
export type {
  ElicitHandler,
  ElicitHandlerContext,
  PassthroughOptions,
  ProgressListener,
  SampleHandler,
  SampleHandlerContext,
} from "./routing.js";
export type * from "./mcp-shapes.js";
