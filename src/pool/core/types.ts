/**
 * The pool's public shapes: what state(), tools(), probe() and onEvent() hand out.
 * The plain-data ones are the wire's (mcpool-protocol declares them once, and the daemon
 * sends them unchanged); only what never crosses the socket is declared here.
 */
export type {
  CloseReason,
  PinDiff,
  PinInfo,
  PinnedTool,
  PoolEvent,
  ProbeResult,
  ServerResources,
  ServerAuthState,
  ServerNotification,
  ServerState,
  ServerStatus,
  SignInRequest,
  ToolAnnotations,
  ToolChange,
  ToolDefinition,
  ToolDescription,
  ToolState,
  ToolUsage,
  UsageReport,
} from "mcpool-protocol";

/**
 * What the pool reads of a caller's signal: an AbortSignal is one. The daemon passes a
 * lighter one per request of its own (src/daemon/socket/peer-requests.ts), because Node 20 builds
 * each AbortSignal with ObjectSetPrototypeOf: 3.3 µs a call, with its listener 5.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** What a log line is about, handed beside its text: the server, when it concerns one. */
export interface LogAbout {
  server: string;
}

/**
 * Where the pool writes what a person reading a log wants. Both halves optional. A line
 * about one server comes through serverLog() (core/server-log.ts): its text starts
 * `mcpool: <id>: ` and `about` names the server, for a log that keeps it apart.
 */
export interface PoolLog {
  info?: (message: string, about?: LogAbout) => void;
  error?: (message: string, about?: LogAbout) => void;
}
