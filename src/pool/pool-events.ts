/**
 * The pool's listener lists: what the pool does (PoolEvent), what servers send
 * (notifications), and which servers it holds (their ids, in configuration order, said when
 * a reconcile changed them). A listener that throws is logged and never fails what it
 * listened to.
 */
import type { PoolEvent, PoolLog, ServerNotification } from "./types.js";

export class PoolEvents {
  readonly #events = new Set<(event: PoolEvent) => void>();
  readonly #notifications = new Set<(serverId: string, n: ServerNotification) => void>();
  readonly #servers = new Set<(ids: readonly string[]) => void>();
  /** The ids last said to #servers, joined: a reconcile that kept them says nothing. */
  #serverKey: string | undefined;
  readonly #log: PoolLog;

  constructor(log: PoolLog) {
    this.#log = log;
  }

  /**
   * Whether anyone listens to events: a call builds its event only then. Listening to the
   * set of servers (onServersChanged) is not listening to calls.
   */
  get listened(): boolean {
    return this.#events.size > 0;
  }

  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.#events.add(listener);
    return () => this.#events.delete(listener);
  }

  onNotification(listener: (serverId: string, n: ServerNotification) => void): () => void {
    this.#notifications.add(listener);
    return () => this.#notifications.delete(listener);
  }

  onServersChanged(listener: (ids: readonly string[]) => void): () => void {
    this.#servers.add(listener);
    return () => this.#servers.delete(listener);
  }

  /** The servers are `ids` now: told to the listeners when that is news. */
  serversChanged(ids: readonly string[]): void {
    const key = ids.join("\0");
    if (key === this.#serverKey) return;
    this.#serverKey = key;
    for (const listener of this.#servers) this.#guard("a servers listener", () => listener(ids));
  }

  emit(event: PoolEvent): void {
    for (const listener of this.#events) this.#guard("an event listener", () => listener(event));
  }

  notify(serverId: string, notification: ServerNotification): void {
    for (const listener of this.#notifications) {
      this.#guard("a notification listener", () => listener(serverId, notification));
    }
  }

  #guard(what: string, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#log.error?.(`mcpool: ${what} threw: ${(error as Error).message}`);
    }
  }
}
