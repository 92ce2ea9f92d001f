/**
 * Leases on conversation clients (SPEC B9, seed 003 "Leases"), and the entry the pool
 * registers for a conversation row, which refuses to be dialled as shared.
 */
import { isConversationRow } from "../config/conversation.js";
import type { ConversationClient } from "./conversation-client.js";
import { McpPoolError } from "./errors.js";
import type { Connection } from "./connection.js";
import { ServerEntry } from "./server-entry.js";

/** A hold on one conversation's client across a turn: it is not evicted, swept or ended. */
export interface ConversationLease extends AsyncDisposable {
  readonly serverId: string;
  readonly keyHash: string;
  /** False once released, or revoked (the row went away, the pool closed). */
  readonly held: boolean;
  /** Lets the client go; idempotent. */
  release(): void;
}

export class Lease implements ConversationLease {
  readonly serverId: string;
  readonly keyHash: string;
  readonly client: ConversationClient;
  held = true;
  readonly #onRelease: (lease: Lease) => void;

  constructor(serverId: string, client: ConversationClient, onRelease: (lease: Lease) => void) {
    this.serverId = serverId;
    this.keyHash = client.keyHash;
    this.client = client;
    this.#onRelease = onRelease;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.#onRelease(this);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.release();
  }
}

/**
 * The entry the pool registers for every row. A conversation row's is never dialled as
 * shared: whatever asks for its connection without an identity (resources, prompts, pins,
 * a reconnect, a reconcile) is refused `no-identity`, and nothing is opened.
 */
export class RowEntry extends ServerEntry {
  override ensure(options?: { ignoreBackoff?: boolean }): Promise<Connection> {
    if (!isConversationRow(this.row)) return super.ensure(options);
    return Promise.reject(
      new McpPoolError(
        "no-identity",
        `server "${this.id}" keeps a client per conversation: only calls and listings that name an identity reach it`,
        { serverId: this.id },
      ),
    );
  }
}
