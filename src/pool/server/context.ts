/**
 * What every ServerEntry is handed by its owner (the pool, or a conversation row): how to
 * dial, the budgets, and where to say what happened. The entry calls these; it never
 * reaches into the pool.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../../config/rows.js";
import { authRequiredMessage, isAuthRequired } from "../auth/refusal.js";
import { secretValues } from "../core/secrets.js";

import type { CreateMessageResult, ElicitParams, ElicitResult, SampleParams } from "./routing.js";
import type { ServerEntry } from "./entry.js";
import type { Connection } from "./connection.js";
import type { OpenedAhead } from "./dial.js";
import type { CreateTransport, TransportContext } from "../transport/transport.js";
import type { PoolEvent, PoolLog, ServerNotification } from "../core/types.js";

/**
 * How long a server that let a call time out gets to answer a `ping` before it is
 * taken for hung and replaced. A slow tool does not stop a live server from answering one.
 */
export const DEFAULT_PING_TIMEOUT_MS = 5_000;

export interface EntryContext {
  clientInfo: { name: string; version: string };
  /** The OAuth tokens last handed to this server's connections, for redaction. */
  oauthSecrets?(serverId: string): readonly string[];
  /**
   * The sentence of an auth-required refusal when `cause` means the server wants a
   * sign-in, or, without a cause, for the refusal the server stands at; undefined when the
   * cause means something else. Default: isAuthRequired() and authRequiredMessage().
   */
  authRequired?(serverId: string, cause?: unknown): string | undefined;
  capabilities: ClientCapabilities;
  createTransport: CreateTransport;
  transportContext: TransportContext;
  /**
   * Whether a stdio row's era is found on a spare child (spare-probe.ts): the
   * pool's own children, not a consumer's createTransport, whose connects it cannot spare.
   */
  spareProbe?: boolean;
  /** Pool-wide connect budget, ms; the row's outranks it. Undefined: the SDK's 60 s per request. */
  connectTimeoutMs: number | undefined;
  /** Pool-wide call timeout, ms; used to bound how long a retiring connection may drain. */
  callTimeoutMs: number | undefined;
  crashBackoffMs: number;
  log: PoolLog;
  emit(event: PoolEvent): void;
  /**
   * The server sent `notification` on `connection`; `profileKey`: sent by a host profile's
   * child of the row (its context says which), none: by the row's own child.
   */
  notify(
    serverId: string,
    notification: ServerNotification,
    connection: Connection,
    profileKey?: string,
  ): void;
  /** The entry's tools or status moved: reindex. */
  changed(entry: ServerEntry): void;
  /** Pool-wide idle timeout, ms; the row's outranks it, and 0 or undefined never reaps. */
  idleTimeoutMs: number | undefined;
  /** false: connect without listing tools, for a consumer proxying the protocol. */
  indexTools: boolean;
  /** Runs work on the reconcile queue, so a reap never interleaves with a reconcile. */
  schedule(work: () => Promise<void>): Promise<void>;
  /** The server gave a list: the pool decides whether its tools cache needs it. */
  listed(entry: ServerEntry): void;
  /** Answers the server's elicitation/create; installed when `capabilities` declare it. */
  elicit?(serverId: string, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult>;
  /** Answers the server's sampling/createMessage; installed when `capabilities` declare it. */
  sample?(
    serverId: string,
    params: SampleParams,
    signal: AbortSignal,
  ): Promise<CreateMessageResult>;
  /**
   * The roots the connection answers `roots/list` with, when `capabilities` declare roots;
   * `asked` is told each time the server asks, before the answer is sent.
   */
  roots?: {
    list(): readonly { uri: string; name?: string }[];
    asked(connection: Connection): void;
  };
  /**
   * A connection of this row opened ahead of its use, taken once (a host profile's child
   * started while its host's roots were not known yet: src/pool/prepared-children.ts);
   * undefined, or one that resolves undefined: the dial opens its own.
   */
  openedAhead?(): Promise<OpenedAhead | undefined> | undefined;
  /**
   * Whether something other than a call holds the server's connection (resource
   * subscriptions; `key`: its child's for that profile): no idle reap.
   */
  held?(serverId: string, key?: string): boolean;
  /** ms a suspect server gets to answer a ping. Default {@link DEFAULT_PING_TIMEOUT_MS}. */
  pingTimeoutMs?: number;
  /**
   * Whether a server that went down comes back without waiting for a use: eager,
   * enabled rows of an open pool. Lazy rows come back on their next use.
   */
  revives?(entry: ServerEntry): boolean;
}

/**
 * The auth-required sentence for `cause` (undefined: it wants no sign-in), or, without one, for the
 * refusal the server stands at.
 */
export function authSentence(
  context: EntryContext,
  serverId: string,
  ...cause: [unknown?]
): string | undefined {
  if (context.authRequired) return context.authRequired(serverId, ...cause);
  if (cause.length > 0 && !isAuthRequired(cause[0])) return undefined;
  return authRequiredMessage(serverId);
}

/** The sentence of the auth-required refusal the server stands at. */
export function standingAuthMessage(context: EntryContext, serverId: string): string {
  return authSentence(context, serverId) ?? authRequiredMessage(serverId);
}

/** The row's secrets and the OAuth tokens its connections were given: a remote may quote them. */
export function entrySecrets(context: EntryContext, row: McpServerConfig): string[] {
  const env = context.transportContext.env ?? process.env;
  return [...(context.oauthSecrets?.(row.id) ?? []), ...secretValues(row, env)];
}
