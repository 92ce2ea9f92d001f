/**
 * What one call() may say beyond its tool and arguments: where it may go, how long it may
 * take, what it returns, and who answers what its server asks while it runs.
 */
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";
import { defined, type Caller, type ConversationIdentity, type HostProfile } from "mcpool-protocol";
import type { CallElicitHandler, CallProgress, CallSampleHandler } from "../server/routing.js";
import type { CallSignal } from "../core/types.js";
import type { RequestContext } from "../server/caller-router.js";
import { profileCapabilities } from "../server/profile-entry.js";
import type { RequestOptions } from "../mcp/protocol.js";
import type { TaskOwner } from "./tasks.js";

/** Answers a server's `roots/list` with the caller's roots (`{ roots: [...] }`). */
export type CallRootsHandler = (
  params: Record<string, unknown>,
  context: RequestContext,
) => Promise<{ roots: unknown[] }>;

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
  /**
   * The server's own name for a tool it did not list, on a call scoped to one server, sent by
   * a caller that found no listed tool answering to it: the call goes to that server as this
   * name (the server answers it, as it would a host of its own). Refused: a name the row
   * hides, and any name on a pinned row (only the approved tools run there).
   */
  unlisted?: string;
  /** Coerce the arguments against the tool's schema; overrides the row and the pool. Default true. */
  coerce?: boolean;
  /** false: ask the server even when the result cache holds an answer, and keep the new one. */
  cache?: boolean;
  /** Told of each progress notification the server sends for this call; never extends the timeout. */
  onProgress?: (progress: CallProgress) => void;
  /**
   * Answers the server's elicitation/create while this call is in flight on it. Takes
   * effect only in a pool given `onElicit`, which is what declares the capability.
   */
  onElicit?: CallElicitHandler;
  /**
   * Answers the server's sampling/createMessage while this call is in flight on it.
   * Takes effect only in a pool given `onSample`, which is what declares the capability.
   */
  onSample?: CallSampleHandler;
  /**
   * Answers a modern server's `roots/list` input request during this call: the
   * calling host's roots, for a host that is asked for them per call (a modern host).
   */
  onRoots?: CallRootsHandler;
  /** The conversation a call to a `session: "conversation"` row is for; others ignore it. */
  identity?: ConversationIdentity;
  /**
   * The calling host's capabilities and roots: the call goes to the row's child for
   * that profile, and what the host cannot answer is refused as the host itself would.
   * Absent: the pool's own child.
   */
  profile?: HostProfile;
  /** Server id → a binding from a conversation listing: the call is checked against it. */
  bindings?: Readonly<Record<string, string>>;
  /**
   * The host request's `_meta`, sent as the upstream request's own (trace context such as
   * `traceparent`); `progressToken` and the `mcpool/` keys are the pool's and are dropped.
   */
  meta?: Readonly<Record<string, unknown>>;
  /**
   * The calling agent's own client info and log level: a modern server reads
   * them in the request's envelope. Absent (and no profile): the pool's client info and
   * the connection's level. Ignored by a legacy server, which read the pool's at initialize.
   */
  caller?: Caller;
  /**
   * A task-augmented call (MCP 2025-11-25 tasks): sent to the server with this `task`, and
   * answered with the server's CreateTaskResult, its task kept as `taskOwner`'s (tasks.ts).
   */
  task?: Readonly<Record<string, unknown>>;
  /** Who owns the task a task-augmented call creates, and where its status notifications go. */
  taskOwner?: TaskOwner;
  /**
   * The caller takes no task (a 2026-07-28 host): a tool a 2025-11-25 connection says
   * requires one is run as a task the pool makes and follows, and answered with the tool's
   * result (mcp/task-call.ts). Ignored with `task`.
   */
  awaitTask?: boolean;
}

/** The `_meta` a call forwards upstream: the caller's, without the keys the pool owns. */
function forwardedMeta(
  meta: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  if (meta === undefined) return undefined;
  const kept = Object.entries(meta).filter(
    ([key]) => key !== "progressToken" && !key.startsWith("mcpool/"),
  );
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** The upstream tools/call's params: the server's name for the tool, and the caller's `_meta`. */
export function upstreamParams(
  name: string,
  args: Record<string, unknown>,
  meta: CallOptions["meta"],
  task?: CallOptions["task"],
): {
  name: string;
  arguments: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  task?: Record<string, unknown>;
} {
  const params: ReturnType<typeof upstreamParams> = { name, arguments: args };
  // Set when there is one, in this order, as before: not two object spreads a call.
  const forwarded = forwardedMeta(meta);
  if (forwarded) params._meta = forwarded;
  if (task !== undefined) params.task = { ...task };
  return params;
}

/**
 * Who a modern server is told the call is for: the calling host's capabilities
 * (its profile's, and roots when it is asked for them per call), its client info
 * and its log level. A call that names neither profile nor caller is the pool's own.
 */
export function upstreamCaller(
  opts: Pick<CallOptions, "profile" | "caller" | "onRoots">,
): Pick<RequestOptions, "caller"> {
  const { profile, caller } = opts;
  if (profile === undefined && caller === undefined) return {};
  const declared = profile ? profileCapabilities(profile) : undefined;
  const capabilities =
    declared && opts.onRoots && declared.roots === undefined
      ? { ...declared, roots: {} }
      : declared;
  // The host's roots say when they change: the server is told what it would be direct.
  if (capabilities?.roots !== undefined && caller?.rootsListChanged === true) {
    capabilities.roots = { listChanged: true };
  }
  return {
    caller: defined({
      capabilities,
      clientInfo: caller?.clientInfo as Implementation | undefined,
      logLevel: caller?.logLevel,
    }),
  };
}
