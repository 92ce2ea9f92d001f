/**
 * mcpool-client: PoolClient, the thin client of the mcpool daemon, and (re-exported, so one
 * import serves an agent) the wire contract of mcpool-protocol. Depends on mcpool-protocol
 * and Node built-ins only, never on the MCP SDK.
 */
export * from "mcpool-protocol";
export { connect } from "./client.js";
export {
  DEFAULT_AUTO_START_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  type CallOptions,
  type ConnectOptions,
  type EventListener,
  type EventOptions,
  type NotificationListener,
  type PoolClient,
  type DescribeOptions,
  type RunHooksOptions,
} from "./pool-client.js";
export type { NotificationAbout } from "./pool-client.js";
export { defaultSocketPath, ownSocketPath } from "./paths.js";
export type {
  ConversationLeaseHandle,
  ConversationsClient,
  IdentifiedClient,
  ToolCaller,
} from "./pool-client.js";
export type {
  AskingOptions,
  ElicitHandler,
  ElicitHandlerContext,
  PassthroughOptions,
  ProgressListener,
  RootsHandler,
  SampleHandler,
  SampleHandlerContext,
} from "./routing.js";
export type { TaskMethod, TaskOptions, TaskRequests } from "./tasks.js";
export type { ProfileRequests } from "./profiles.js";
export type { Credentials } from "./pool-client.js";
