/**
 * The pool's public shapes: what state(), tools(), call(), probe() and onEvent() hand out.
 * Plain data only, so the daemon can send every one of them over its socket unchanged.
 */
import type { McpServerConfig } from "../config/rows.js";
import type { PoolErrorCode } from "./errors.js";

export type ServerStatus = "ready" | "connecting" | "idle" | "disabled" | "error" | "crash-loop";

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
  /** The list is the last one known, not a live one. */
  stale?: boolean;
  tools: ToolState[];
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
}

export interface ProbeResult {
  ok: boolean;
  error?: string;
  tools: { name: string; description?: string; title?: string; annotations?: ToolAnnotations }[];
  toolsFingerprint?: string;
  instructions?: string;
}

export type CloseReason =
  "idle" | "stop" | "reconnect" | "removed" | "changed" | "redial" | "shutdown" | "crash";

export type PoolEvent =
  | { type: "connect"; serverId: string; ms: number; tools: number }
  | { type: "connect-failed"; serverId: string; ms: number; error: string }
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
    };

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
