/**
 * The pool's two listener lists: what the pool does (PoolEvent) and what servers send
 * (notifications). A listener that throws is logged and never fails what it listened to.
 */
import type { PoolEvent, PoolLog, ServerNotification } from "./types.js";

export class PoolEvents {
  readonly #events = new Set<(event: PoolEvent) => void>();
  readonly #notifications = new Set<(serverId: string, n: ServerNotification) => void>();
  readonly #log: PoolLog;

  constructor(log: PoolLog) {
    this.#log = log;
  }

  /** Whether anyone listens to events: a call builds its event only then. */
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

  emit(event: PoolEvent): void {
    for (const listener of this.#events) {
      try {
        listener(event);
      } catch (error) {
        this.#log.error?.(`mcpool: an event listener threw: ${(error as Error).message}`);
      }
    }
  }

  notify(serverId: string, notification: ServerNotification): void {
    for (const listener of this.#notifications) {
      try {
        listener(serverId, notification);
      } catch (error) {
        this.#log.error?.(`mcpool: a notification listener threw: ${(error as Error).message}`);
      }
    }
  }
}
