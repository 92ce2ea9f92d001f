/**
 * Leases on conversation clients (docs/configuration.md, "Per-conversation servers"). The entry the pool
 * registers for a conversation row is the registry's shell's (RowEntry, conversations/registry.ts).
 */
import type { ConversationClient } from "./client.js";

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
