/**
 * An http session's GET stream: where a Streamable HTTP server sends what it sends unasked
 * (tools/list_changed, resources/updated, log messages). The SDK's transport opens it after
 * the handshake and opens it again when it ends; a server refuses a second one with 409 while
 * it still holds the first. Across a hand-over (src/daemon/handover/README.md) the old daemon
 * closes its stream before the new daemon opens its own: that order is what lets the new
 * one in, so it is a step of the hand-over, never a wait.
 *
 * This wraps the transport's fetch. A GET while the stream is held, or while one is already
 * open (but a resumption, which names its `Last-Event-ID`), is answered here with 405 — the
 * answer of a server that offers no stream, which the SDK takes quietly — so the SDK's own
 * reopening after a close never reaches the server.
 */
import type { FetchLike } from "./transport.js";

/** The live stream: what ends it from this side. */
interface OpenStream {
  end(): Promise<void>;
}

export class ListenStream {
  #open: OpenStream | undefined;
  #held = false;

  /** Whether a GET stream is open now. */
  get open(): boolean {
    return this.#open !== undefined;
  }

  /** `fetch` with its GET streams watched (see above); other methods pass as they are. */
  wrap(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      if ((init?.method ?? "GET").toUpperCase() !== "GET") return fetch(url, init);
      if (this.#held) return new Response(null, { status: 405 });
      // A GET naming the last event it saw resumes a stream the server closed early (a
      // call's answer stream, as the server's `retry` asks): it is that stream, never a
      // second listening one, and it goes to the server as it is.
      if (new Headers(init?.headers).has("last-event-id")) return fetch(url, init);
      if (this.#open !== undefined) return new Response(null, { status: 405 });
      const response = await fetch(url, init);
      if (!response.ok || response.body === null) return response;
      return this.#watched(response, response.body);
    };
  }

  /**
   * Ends the open stream, if any, and opens none until resume(): the connection to the
   * server is cut before this resolves. True if a stream was open.
   */
  async hold(): Promise<boolean> {
    this.#held = true;
    const open = this.#open;
    this.#open = undefined;
    await open?.end();
    return open !== undefined;
  }

  /** Streams may open again. */
  resume(): void {
    this.#held = false;
  }

  /** The response with a body this class can end: it ends as a server's close would. */
  #watched(response: Response, body: ReadableStream<Uint8Array>): Response {
    const reader = body.getReader();
    let ended = false;
    let control: ReadableStreamDefaultController<Uint8Array> | undefined;
    const open: OpenStream = {
      end: async () => {
        if (ended) return;
        ended = true;
        control?.close();
        await reader.cancel().catch(() => undefined);
      },
    };
    const gone = (): void => {
      if (this.#open === open) this.#open = undefined;
    };
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        control = controller;
      },
      pull: async (controller) => {
        const read = await reader.read().catch((error: unknown) => ({ error }));
        if (ended) return;
        if ("error" in read) {
          ended = true;
          gone();
          return controller.error(read.error);
        }
        if (read.done) {
          ended = true;
          gone();
          return controller.close();
        }
        controller.enqueue(read.value);
      },
      cancel: async (reason) => {
        ended = true;
        gone();
        await reader.cancel(reason).catch(() => undefined);
      },
    });
    this.#open = open;
    const out = new Response(stream, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    Object.defineProperty(out, "url", { value: response.url });
    return out;
  }
}
