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
  get connecting(): boolean {
    return this._connecting !== undefined;
  }
}
