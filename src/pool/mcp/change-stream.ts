/**
 * The change stream of a modern connection (2026-07-28 basic/patterns/subscriptions): no
 * change notification comes unsolicited, so a client that wants to hear of a changed list
 * or an updated resource opens one long-lived `subscriptions/listen` request naming what it
 * wants, and the server's notifications come on it until it is cancelled
 * (`notifications/cancelled` on stdio) or the connection ends. The filter asks for each
 * list the server says changes (its `listChanged` capabilities) and for the resources the
 * pool subscribed to; a new subscription opens a new stream before the old one is
 * cancelled, so no change falls between them.
 */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";

/** The `notifications` filter of a `subscriptions/listen` request. */
export interface ListenFilter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

/** The first message on a stream, which says what the server agreed to send: nothing to hand on. */
export const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** What a server with `capabilities` can tell of, with updates of `uris`; undefined when nothing. */
export function listenFilter(
  capabilities: ServerCapabilities | undefined,
  uris: ReadonlySet<string>,
): ListenFilter | undefined {
  const filter: ListenFilter = {
    ...(capabilities?.tools?.listChanged ? { toolsListChanged: true as const } : {}),
    ...(capabilities?.prompts?.listChanged ? { promptsListChanged: true as const } : {}),
    ...(capabilities?.resources?.listChanged ? { resourcesListChanged: true as const } : {}),
    ...(uris.size > 0 ? { resourceSubscriptions: [...uris].sort() } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

export interface ChangeStreamInit {
  /** Sends `subscriptions/listen` with `filter`, with no timeout; aborting `signal` cancels it. */
  listen(filter: ListenFilter, signal: AbortSignal): Promise<unknown>;
  /** What the server said it can do, once connected. */
  capabilities(): ServerCapabilities | undefined;
  /** A stream ended with an error other than its own cancel or the connection's close. */
  failed(error: unknown): void;
}

export class ChangeStream {
  readonly #init: ChangeStreamInit;
  readonly #uris = new Set<string>();
  /** The open stream's cancel, if one is open. */
  #open: AbortController | undefined;
  #stopped = false;

  constructor(init: ChangeStreamInit) {
    this.#init = init;
  }

  /** Opens (or reopens with what is asked now) the stream; cancels it when nothing is. */
  start(): void {
    if (this.#stopped) return;
    const before = this.#open;
    const filter = listenFilter(this.#init.capabilities(), this.#uris);
    this.#open = undefined;
    if (filter !== undefined) {
      const controller = new AbortController();
      this.#open = controller;
      this.#init.listen(filter, controller.signal).then(
        () => this.#ended(controller),
        (error: unknown) => {
          this.#ended(controller);
          if (!controller.signal.aborted && !this.#stopped) this.#init.failed(error);
        },
      );
    }
    before?.abort(new Error("replaced by a stream with a new filter"));
  }

  /** `resources/subscribe` in the modern era: `uri` joins the stream's filter. */
  subscribe(uri: string): void {
    if (this.#uris.has(uri)) return;
    this.#uris.add(uri);
    this.start();
  }

  unsubscribe(uri: string): void {
    if (!this.#uris.delete(uri)) return;
    this.start();
  }

  /** The connection is closing: the stream goes with it, and none opens again. */
  stop(): void {
    this.#stopped = true;
    this.#open?.abort(new Error("the connection is closing"));
    this.#open = undefined;
  }

  #ended(controller: AbortController): void {
    if (this.#open === controller) this.#open = undefined;
  }
}
