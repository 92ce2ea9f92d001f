/**
 * A `tools/call`'s params on the wire: what a caller may say beyond the tool and its
 * arguments, each passed to the pool's call as it is (methods.ts checks their kinds).
 */
import type { CallToolResult } from "./shapes.js";
import type { ProgressToken } from "./mcp-shapes.js";
import type { ConversationIdentity } from "./conversation-shapes.js";
import type { HostProfile } from "./host-profile.js";
import type { Caller } from "./caller.js";

export interface CallParams {
  /** The qualified tool name. */
  name: string;
  arguments?: Record<string, unknown>;
  servers?: readonly string[];
  /** Overrides the row's and the pool's call timeout, ms. */
  timeoutMs?: number;
  /** Answer with the CallToolResult instead of its text. */
  raw?: boolean;
  /** Overrides the row's and the pool's result cap; 0 = no cap. */
  maxResultChars?: number;
  /** Coerce the arguments against the tool's schema; overrides the row and the pool. */
  coerce?: boolean;
  /** false: ask the server even when the result cache holds an answer. */
  cache?: boolean;
  /** Call a tool the row hides. */
  hidden?: boolean;
  /**
   * The server's own name for a tool it did not list, on a call scoped to one server
   * (`servers` of one id), sent by a caller that found no listed tool answering to `name`:
   * the call goes to that server as this name and the server answers it, as it would a host
   * of its own. Refused as an unknown tool: a name the row hides, and any name on a pinned
   * row (only the approved tools run there).
   */
  unlisted?: string;
  /** The call's progress is pushed to this connection as `progress` carrying this token. */
  progressToken?: ProgressToken;
  /** This call answers the elicitations its server sends while it is in flight (`elicit`). */
  elicit?: boolean;
  /** This call answers the sampling requests its server sends while it is in flight (`sample`). */
  sample?: boolean;
  /**
   * This call answers the `roots/list` its server asks inside the call (`roots`): a modern
   * server's input request, for a host whose roots are asked per call.
   */
  roots?: boolean;
  /** The conversation, for a `session: "conversation"` row. */
  identity?: ConversationIdentity;
  /** The calling host's capabilities and roots: the child that serves the call. */
  profile?: HostProfile;
  /** Server id → binding from `conversation/tools`: refused before sending if stale. */
  bindings?: Record<string, string>;
  /**
   * The host request's `_meta`, forwarded to the server as the call's own (trace context
   * such as `traceparent`, an extension's keys). `progressToken` and `mcpool/` keys are the
   * pool's and are never forwarded.
   */
  meta?: Record<string, unknown>;
  /**
   * The calling agent's own client info and log level, which a modern server reads in the
   * request's envelope instead of the pool's; a legacy server never sees them.
   */
  caller?: Caller;
  /**
   * A task-augmented call (MCP 2025-11-25 tasks: `{ ttl? }`): the server's CreateTaskResult
   * is the answer (raw), and its task is this connection's `taskOwner`'s. Needs `raw`.
   */
  task?: Record<string, unknown>;
  /** Which host of this connection owns the task (any string the connection chooses). */
  taskOwner?: string;
  /**
   * The caller takes no task (a 2026-07-28 host: its era has no task-augmented call), so a
   * tool whose 2025-11-25 `execution.taskSupport` is `"required"` runs as a task the pool
   * makes, follows and cancels for it, and the call is answered with the tool's result, as
   * a 2026-07-28 server answers a client that declares no tasks. Ignored with `task`.
   */
  awaitTask?: boolean;
}

/**
 * The `tools/call` params that are plain values, passed on as they are by both sides (the
 * client's call options, the daemon's to the pool), in the order a call's params list them.
 */
export const CALL_VALUE_PARAMS = [
  "servers",
  "timeoutMs",
  "raw",
  "maxResultChars",
  "coerce",
  "cache",
  "hidden",
  "unlisted",
  "identity",
  "awaitTask",
] as const satisfies readonly (keyof CallParams)[];

export type CallResult = { text: string } | { result: CallToolResult };
