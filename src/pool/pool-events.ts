/**
 * What the pool says: its two listener lists — what the pool does (PoolEvent) and what
 * servers send (notifications) — and its warnings about unset placeholder variables. The
 * pool's own parts hear an event before any listener does (a cache to clear, subscriptions
 * to renew); a listener that throws is logged and never fails what it listened to.
 */
import type { PoolEvent, PoolLog, ServerNotification } from "./types.js";

export interface PoolEventsInit {
  log: PoolLog;
  /** What the pool's parts do about an event, before any listener hears of it. */
  react(event: PoolEvent): void;
  /** What the pool's parts do with a server's notification, before any listener hears of it. */
  deliver(serverId: string, notification: ServerNotification): void;
}

export class PoolEvents {
  readonly #init: PoolEventsInit;
  readonly #events = new Set<(event: PoolEvent) => void>();
  readonly #notifications = new Set<(serverId: string, n: ServerNotification) => void>();
  /** `<id>\0<VAR>` of unset placeholder variables already logged, so each is said once. */
  readonly #warnedUnset = new Set<string>();

  constructor(init: PoolEventsInit) {
    this.#init = init;
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
    this.#init.react(event);
    for (const listener of this.#events) {
      try {
        listener(event);
      } catch (error) {
        this.#init.log.error?.(`mcpool: an event listener threw: ${(error as Error).message}`);
      }
    }
  }

  notify(serverId: string, notification: ServerNotification): void {
    this.#init.deliver(serverId, notification);
    for (const listener of this.#notifications) {
      try {
        listener(serverId, notification);
      } catch (error) {
        this.#init.log.error?.(
          `mcpool: a notification listener threw: ${(error as Error).message}`,
        );
      }
    }
  }

  /** `${name}` in a row of `serverId` has no value and no default: said once per pair (A3). */
  unsetVariable(serverId: string, name: string): void {
    const key = `${serverId}\0${name}`;
    if (this.#warnedUnset.has(key)) return;
    this.#warnedUnset.add(key);
    this.#init.log.error?.(
      `mcpool: ${serverId}: \${${name}} is not set and has no default; it is passed to the server as written`,
    );
  }
}
