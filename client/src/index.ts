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
  type CallParams,
  type CallResult,
  type CatalogParams,
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
  type ServerIdParams,
  type ServerNotificationParams,
  type StateParams,
  type SubscribeParams,
  type ToolsParams,
} from "./protocol.js";
export type * from "./shapes.js";
