/**
 * The pool's public shapes: what state(), tools(), call(), probe() and onEvent() hand out.
 * The plain-data ones are the wire's (mcpool-protocol declares them once, and the daemon
 * sends them unchanged); only what never crosses the socket is declared here.
 */
import type { ConversationIdentity } from "./conversation-types.js";
import type { CallElicitHandler, CallProgress, CallSampleHandler } from "./routing.js";

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
 * lighter one per request of its own (src/daemon/peer-requests.ts), because Node 20 builds
 * each AbortSignal with ObjectSetPrototypeOf: 3.3 µs a call, with its listener 5 (issue 16).
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface CallOptions {
  /** Server ids this call may reach; absent = all, empty = none. */
  servers?: readonly string[];
  /** Aborting cancels the call upstream and rejects it with the signal's reason. */
  signal?: CallSignal;
  /** Overrides the row's and the pool's call timeout, ms. */
  timeoutMs?: number;
  /** Return the server's CallToolResult instead of a string. */
  raw?: boolean;
  /** Overrides the row's and the pool's result cap; 0 = no cap. */
  maxResultChars?: number;
  /** Call a tool the row hides (hooks do). */
  hidden?: boolean;
  /** Coerce the arguments against the tool's schema; overrides the row and the pool. Default true. */
  coerce?: boolean;
  /** false: ask the server even when the result cache holds an answer, and keep the new one. */
  cache?: boolean;
  /** Told of each progress notification the server sends for this call (C14); never extends the timeout. */
  onProgress?: (progress: CallProgress) => void;
  /**
   * Answers the server's elicitation/create while this call is in flight on it (C14). Takes
   * effect only in a pool given `onElicit`, which is what declares the capability.
   */
  onElicit?: CallElicitHandler;
  /**
   * Answers the server's sampling/createMessage while this call is in flight on it (C14).
   * Takes effect only in a pool given `onSample`, which is what declares the capability.
   */
  onSample?: CallSampleHandler;
  /** The conversation a call to a `session: "conversation"` row is for (B9); others ignore it. */
  identity?: ConversationIdentity;
  /** Server id → a binding from a conversation listing: the call is checked against it (B9). */
  bindings?: Readonly<Record<string, string>>;
}

/** Where the pool writes what a person reading a log wants. Both halves optional. */
export interface PoolLog {
  info?: (message: string) => void;
  error?: (message: string) => void;
}
