/**
 * What a ServerEntry is at a moment — its row, status, last error, backoff, live connection,
 * tool list — read by the pool through getters and changed only by the entry's own
 * transitions, which is why the fields are protected, not public. The changes of state a
 * transition makes that touch nothing but these fields (a failure's backoff, what a close
 * leaves, a new row, a forgotten backoff) are here; what a transition does beyond them —
 * timers, events, the log, the child — is server/entry.ts.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import type { Connection } from "./connection.js";
import type { EraVerdict } from "../core/era.js";
import { ToolList } from "./tool-list.js";
import type { CloseReason, ServerStatus } from "../core/types.js";
import { BACKED_OFF, backoffMs, failureStatus } from "./backoff.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpPoolError } from "../core/errors.js";
import { processOf } from "../transport/transport.js";

/** Closes that end a server still starting rather than wait for its handshake. */
const ENDS_A_START: ReadonlySet<CloseReason> = new Set<CloseReason>([
  "stop",
  "removed",
  "shutdown",
]);

/** Whether a close for `reason` ends a start in progress (its handshake may never come). */
export function endsAStart(reason: CloseReason): boolean {
  return ENDS_A_START.has(reason);
}

export abstract class EntryState {
  protected _row: McpServerConfig;
  protected _status: ServerStatus;
  protected _error: string | undefined;
  protected _retryAt: number | undefined;
  protected _failures = 0;
  protected _connection: Connection | undefined;
  protected readonly _list = new ToolList();
  protected _removed = false;
  protected _stopped = false;
  protected _connecting: Promise<Connection> | undefined;
  /** The era the server was last found to speak over this row's connection. */
  protected _verdict: EraVerdict | undefined;
  /** A spare child probing beside the connection (spare-probe.ts): a close waits for it. */
  protected _probing: Promise<void> | undefined;
  /** The dial in progress: since when, and its serving transport once it exists. */
  /** The dial in progress: since when, its child once opened, and whether it was ended. */
  protected _starting: { since: number; transport?: Transport; ended?: boolean } | undefined;
  /** The last dial's failure, and when: a caller who waited through it is told it as it was. */
  protected _lastFailure: { error: McpPoolError; at: number } | undefined;

  constructor(row: McpServerConfig) {
    this._row = row;
    this._status = isEnabled(row) ? "idle" : "disabled";
  }

  get id(): string {
    return this._row.id;
  }
  get row(): McpServerConfig {
    return this._row;
  }
  get status(): ServerStatus {
    return this._status;
  }
  get error(): string | undefined {
    return this._error;
  }
  get retryAt(): number | undefined {
    return this._retryAt;
  }
  get failures(): number {
    return this._failures;
  }
  get connection(): Connection | undefined {
    return this._connection;
  }
  /** The last list the server gave; empty after a crash. */
  get tools(): Tool[] {
    return this._list.tools;
  }
  get fingerprint(): string | undefined {
    return this._list.fingerprint;
  }
  /** `tools` is a last-known list, not a live one. */
  get stale(): boolean {
    return this._list.stale;
  }
  /** The scope the server gave its list: `private` lists are never shared. */
  get cacheScope(): "public" | "private" | undefined {
    return this._list.scope;
  }
  /** When the server said its list stops being fresh (Date.now() ms), if it said so. */
  get toolsExpireAt(): number | undefined {
    return this._list.expiresAt;
  }
  /** The `ttlMs` the server gave its list, as it gave it (0 included), if it gave one. */
  get toolsTtlMs(): number | undefined {
    return this._list.ttlMs;
  }
  /** Removed from the configuration: never dialled again. */
  get removed(): boolean {
    return this._removed;
  }
  /** Stopped by a person: reconcile steps over it until a use or reconnect dials it. */
  get stopped(): boolean {
    return this._stopped;
  }
  get verdict(): EraVerdict | undefined {
    return this._verdict;
  }
  /** The era a store says the server speaks over this row's connection, for the next dial. */
  adoptVerdict(verdict: EraVerdict): void {
    this._verdict ??= verdict;
  }
  /** The era a spare child just found over this row's connection (conversations/era.ts). */
  learnVerdict(verdict: EraVerdict): void {
    this._verdict = verdict;
  }
  /** The pid of the child starting now (its handshake not answered yet), where there is one. */
  get startingPid(): number | undefined {
    const transport = this._starting?.transport;
    return transport === undefined ? undefined : processOf(transport)?.pid;
  }

  /** Since when (epoch ms) the server has been starting; undefined when it is not. */
  get startingSince(): number | undefined {
    return this._connecting === undefined ? undefined : this._starting?.since;
  }

  /**
   * Ends the child of a dial in progress, so the dial fails now rather than at its timeout. The
   * start is marked ended on purpose: its failure is no connect failure (no backoff, no log
   * line), and a child it opens later is closed as soon as it is opened.
   */
  async endStart(): Promise<void> {
    if (this._starting === undefined) return;
    this._starting.ended = true;
    await this._starting.transport?.close().catch(() => undefined);
  }

  /** The dial in progress opened its child; one ended while a spare child probed ends now. */
  protected _startOpened(transport: Transport): void {
    const starting = this._starting;
    if (starting === undefined) return;
    starting.transport = transport;
    if (starting.ended === true) void transport.close().catch(() => undefined);
  }

  /** The failure of a dial that ended at or after `since` (epoch ms), if the last one failed. */
  failureSince(since: number): McpPoolError | undefined {
    const last = this._lastFailure;
    if (last === undefined || last.at < since || this._connection !== undefined) return undefined;
    return last.error;
  }

  get connecting(): boolean {
    return this._connecting !== undefined;
  }

  /** New row with the same connection fields: take it without touching the child. */
  update(row: McpServerConfig): void {
    this._row = row;
    if (!isEnabled(row) && this._status !== "disabled" && !this._connection) {
      this._status = "disabled";
    }
    if (isEnabled(row) && this._status === "disabled") this._status = "idle";
  }

  /** Forget the backoff, so the next ensure() dials at once. */
  resetBackoff(): void {
    this._retryAt = undefined;
    this._failures = 0;
    if (BACKED_OFF.has(this._status)) this._status = "idle";
    this._error = undefined;
  }

  /**
   * A dial failed, or a server died soon after starting: one more failure in a row, and the
   * backoff it earns. A remote row whose address answered nothing is `unreachable`;
   * `crash-loop` is a child's.
   */
  protected _failed(
    message: string,
    now: number,
    firstBackoffMs: number,
    unreachable = false,
  ): void {
    this._failures += 1;
    this._status = unreachable ? "unreachable" : failureStatus(this._failures);
    this._error = message;
    this._retryAt = now + backoffMs(firstBackoffMs, this._failures);
    // The last-known list stays offered: a call finds out about the backoff itself.
    this._list.keepAsLastKnown();
  }

  /**
   * What a close leaves: `idle` and `stop` keep the list as last-known and forget the
   * failures; a redial or reconnect leaves everything for the dial that follows; the others
   * drop the list. True when the list stays offered.
   */
  protected _closedFor(reason: CloseReason): boolean {
    if (reason === "idle" || reason === "stop") {
      this._status = isEnabled(this._row) ? "idle" : "disabled";
      this._error = undefined;
      this._retryAt = undefined;
      this._failures = 0;
      this._list.keepAsLastKnown();
      return true;
    }
    if (reason === "redial" || reason === "reconnect") return true;
    this._status = isEnabled(this._row) && !this._removed ? "idle" : "disabled";
    this._list.forget();
    return false;
  }
}
