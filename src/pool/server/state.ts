/**
 * What a ServerEntry is at a moment — its row, status, last error, backoff, live connection,
 * tool list — read by the pool through getters and changed only by the entry's own
 * transitions (server/entry.ts), which is why the fields are protected, not public.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { isEnabled, type McpServerConfig } from "../../config/rows.js";
import type { Connection } from "./connection.js";
import type { EraVerdict } from "../mcp/era.js";
import { ToolList } from "./tool-list.js";
import type { ServerStatus } from "../core/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpPoolError } from "../core/errors.js";
import { processOf } from "../mcp/transport.js";

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
  /** The era the server was last found to speak over this row's connection (SPEC H1). */
  protected _verdict: EraVerdict | undefined;
  /** A spare child probing beside the connection (spare-probe.ts): a close waits for it. */
  protected _probing: Promise<void> | undefined;
  /** The dial in progress: since when, and its serving transport once it exists. */
  protected _starting: { since: number; transport?: Transport } | undefined;
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
  /** The scope the server gave its list (SPEC H2): `private` lists are never shared. */
  get cacheScope(): "public" | "private" | undefined {
    return this._list.scope;
  }
  /** When the server said its list stops being fresh (Date.now() ms), if it said so. */
  get toolsExpireAt(): number | undefined {
    return this._list.expiresAt;
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

  /** The failure of a dial that ended at or after `since` (epoch ms), if the last one failed. */
  failureSince(since: number): McpPoolError | undefined {
    const last = this._lastFailure;
    if (last === undefined || last.at < since || this._connection !== undefined) return undefined;
    return last.error;
  }

  get connecting(): boolean {
    return this._connecting !== undefined;
  }
}
