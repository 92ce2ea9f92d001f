/**
 * The pool's public shapes: what state(), tools(), call(), probe() and onEvent() hand out.
 * Plain data only, so the daemon can send every one of them over its socket unchanged.
 */
import type { McpServerConfig } from "../config/rows.js";
import type {
  ConversationEvent,
  ConversationIdentity,
  ConversationStats,
} from "./conversation-types.js";
import type { PoolErrorCode } from "./errors.js";
import type { CallElicitHandler, CallProgress, CallSampleHandler } from "./routing.js";

/**
 * `pin-mismatch`: the live tools differ from the row's `pin` and are withheld (C18).
 * `auth-required`: the server wants an OAuth sign-in nobody has done (`mcpool login ID`).
 */
export type ServerStatus =
  | "ready"
  | "connecting"
  | "idle"
  | "disabled"
  | "error"
  | "crash-loop"
  | "pin-mismatch"
  | "auth-required"
  /** A call timed out and a ping went unanswered: the server is being replaced (F3). */
  | "unresponsive";

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool as state() reports it: both of its names. */
export interface ToolState {
  /** The server's own name for the tool. */
  name: string;
  /** `<slug>__<name>`: what the model is offered and what call() takes. */
  qualified: string;
  description?: string;
  title?: string;
  annotations?: ToolAnnotations;
  /** Left out of tools() and catalog() by the row's `hiddenTools`. */
  hidden: boolean;
  /** Left out everywhere because another server holds the name (C2). */
  clashed?: boolean;
  /** Estimated tokens its definition costs to send, while the index holds it. */
  tokens?: number;
}

/** What describe() says of one tool: what an OpenAI definition has no room for (C7). */
export interface ToolDescription {
  /** The qualified name. */
  name: string;
  serverId: string;
  /** The server's own name for the tool. */
  toolName: string;
  title?: string;
  description?: string;
  /** The server's claims, as it sent them; untrusted. */
  annotations?: ToolAnnotations;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** The tool's `_meta`. */
  meta?: Record<string, unknown>;
  tokens: number;
  /** The row hides it; only described when asked with `hidden: true`. */
  hidden?: boolean;
}

export interface ServerState {
  id: string;
  slug: string;
  label: string;
  /** A copy of the row; `env` and `headers` only with `state({ secrets: true })`. */
  config: McpServerConfig;
  status: ServerStatus;
  /** Why the server is at `error` / `crash-loop`, including the stderr tail. */
  error?: string;
  /** For `error` and `crash-loop`: epoch ms before which nothing is dialled. */
  retryAt?: number;
  /** The child's pid, while a stdio connection is up. */
  pid?: number;
  /** Epoch ms the current connection was made. */
  startedAt?: number;
  /** Calls in flight on the current connection, when there are any. */
  inflight?: number;
  instructions?: string;
  capabilities?: Record<string, unknown>;
  toolsFingerprint?: string;
  /** At `pin-mismatch`: how the list differs from the approved one, when that one is known. */
  pinDiff?: PinDiff;
  /** The list is the last one known, not a live one. */
  stale?: boolean;
  tools: ToolState[];
  /** A `session: "conversation"` row's clients, endings and operations: counts only (B9). */
  conversations?: ConversationStats;
  /** At `auth-required`: what `mcpool login` should ask for (SPEC E5). */
  signIn?: SignInRequest;
  /** With `state({ resources: true })`: CPU, memory and recent calls (G3). */
  resources?: ServerResources;
}

/** What the server's last refusal asked for, and how many sign-ins have not met it. */
export interface SignInRequest {
  /** The scope to request: the challenge's, together with what was granted before. */
  scope?: string;
  /** The protected-resource metadata the challenge pointed at (RFC 9728). */
  resourceMetadataUrl?: string;
  /** A 403 `insufficient_scope`: signed in, but without enough scope (step-up). */
  insufficientScope?: boolean;
  /** Sign-ins handed over that the server answered with this same challenge. */
  attempts: number;
  /** The bound was reached: only `mcpool login --force` asks again. */
  exhausted?: boolean;
}

/** What storeCredentials() and forgetCredentials() leave a server at, after the redial. */
export interface ServerAuthState {
  id: string;
  status: ServerStatus;
  /** Why the dial failed, when it did; never a token. */
  error?: string;
}

/** An OpenAI-shaped function definition, as tools() hands it out (frozen). */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

export interface CallOptions {
  /** Server ids this call may reach; absent = all, empty = none. */
  servers?: readonly string[];
  signal?: AbortSignal;
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

/** How a live tool list differs from the one its pin was approved for, by tool name (C18). */
export interface PinDiff {
  added: string[];
  removed: string[];
  /** Same name, different tool: title, description, a schema or an annotation. */
  changed: string[];
}

/** A tool as a pin covers it: the fields toolsFingerprint hashes. */
export interface PinnedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

/** One changed tool, with a short line per thing that changed (`destructiveHint: false → true`). */
export interface ToolChange {
  name: string;
  changes: string[];
}

/** What a person approving a server's tools is shown (C18): its pin against its live list. */
export interface PinInfo {
  serverId: string;
  /** The fingerprint the row pins, if it pins one. */
  pin?: string;
  /** The live list's fingerprint. */
  fingerprint: string;
  /** The live list. */
  tools: PinnedTool[];
  /** The pin does not match: the server's tools are withheld. */
  withheld: boolean;
  /** The list the pin was approved for, when the pool's pin store holds it. */
  approved?: PinnedTool[];
  /** How the live list differs from `approved`, when that is known. */
  diff?: PinDiff;
  /** What changed in each of `diff.changed`. */
  changes?: ToolChange[];
}

export interface ProbeResult {
  ok: boolean;
  error?: string;
  tools: { name: string; description?: string; title?: string; annotations?: ToolAnnotations }[];
  toolsFingerprint?: string;
  instructions?: string;
}

export type CloseReason =
  | "idle"
  | "stop"
  | "reconnect"
  | "removed"
  | "changed"
  | "redial"
  | "shutdown"
  | "crash"
  | "unresponsive";

export type PoolEvent =
  /** `recovered`: it came back after a crash, a hang or a failed dial (F1). */
  | { type: "connect"; serverId: string; ms: number; tools: number; recovered?: true }
  | { type: "connect-failed"; serverId: string; ms: number; error: string }
  /** The server needs a sign-in: no usable token and no way to get one without a person. */
  | { type: "auth-required"; serverId: string; error: string }
  /** A call timed out and the server did not answer a ping: it is replaced (F3). */
  | { type: "unresponsive"; serverId: string; error: string }
  /** A server that went down is being dialled again without waiting for a use (F1). */
  | { type: "restart"; serverId: string }
  | { type: "close"; serverId: string; reason: CloseReason; error?: string }
  | {
      type: "tools-changed";
      serverId: string;
      before?: string;
      after?: string;
      tools: number;
      added: string[];
      removed: string[];
    }
  | {
      type: "pin-mismatch";
      serverId: string;
      /** The row's pin. */
      expected: string;
      /** What the server's list hashes to now. */
      actual: string;
      /** Absent when the approved list is not known. */
      diff?: PinDiff;
    }
  | {
      type: "call";
      qualified: string;
      serverId?: string;
      toolName?: string;
      ms: number;
      ok: boolean;
      code?: PoolErrorCode;
      error?: string;
      chars?: number;
      truncated?: boolean;
      hidden?: boolean;
      raw?: boolean;
      cached?: boolean;
    }
  /** Its process group stayed over `maxMemoryMb`: it is replaced gracefully (G5). */
  | { type: "over-memory"; serverId: string; rssBytes: number; limitMb: number }
  | ConversationEvent;

/** A server notification, forwarded with the id of the server that sent it. */
export interface ServerNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** Where the pool writes what a person reading a log wants. Both halves optional. */
export interface PoolLog {
  info?: (message: string) => void;
  error?: (message: string) => void;
}

/**
 * What a server costs and how it is used right now (SPEC G3): sampled only when someone asks
 * (`state({ resources: true })`, `mcpool status`, `mcpool top`) or a memory limit is set.
 */
export interface ServerResources {
  /** CPU % of one core used by the child's process group since the last look (or since it started). */
  cpuPercent?: number;
  /** Resident memory of the child's whole process group, bytes. */
  rssBytes?: number;
  /** Live processes in the group. */
  processes?: number;
  callsLastMinute: number;
  errorsLastMinute: number;
  /** Calls per minute over the last ten minutes, oldest first. */
  callsPerMinute: number[];
  /** Latency over the last five minutes, ms; absent without calls. */
  p50Ms?: number;
  p99Ms?: number;
  /** The limit in force: the row's `maxMemoryMb`, else the pool's (G5). */
  maxMemoryMb?: number;
  /** Times this daemon replaced the server for staying over it. */
  overMemoryRestarts: number;
}

/** One tool's use over a window (SPEC G4), kept across daemon restarts. */
export interface ToolUsage {
  serverId: string;
  /** The server's own name for the tool. */
  tool: string;
  calls: number;
  errors: number;
  /** Mean latency over every recorded call, ms. */
  meanMs: number;
  /** Epoch ms. */
  lastCalledAt: number;
}

export interface UsageReport {
  /** Epoch ms the window starts (counted by whole UTC days); absent: since counting began. */
  since?: number;
  /** Only tools called in the window, most called first. */
  tools: ToolUsage[];
}
