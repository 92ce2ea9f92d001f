/**
 * The fetches http rows are dialled with.
 *
 * `keepAliveFetch(idleMs)` keeps an idle connection for 30 s rather than Node's 4 s (an
 * agent thinks longer than that between two tool calls, and a new TLS handshake costs ten
 * times a kept connection), takes a server's `Keep-Alive: timeout=N` at its word, and gives
 * every request an abort signal of its own: the SDK hands one shared signal to every
 * request of a transport, and undici only lets go of its listener on a signal when the
 * request is garbage-collected, so two thousand quick calls on one signal pass its 1,500
 * limit and flood `MaxListenersExceededWarning`.
 *
 * `originPinnedFetch(url, headerNames, base)` follows redirects itself: a hop that leaves
 * the configured origin is sent without the configured headers and never with
 * `authorization`; a hop from https to plain http, or to a url the remote URL policy
 * refuses, is refused; hops are bounded.
 */
import type { Agent } from "undici";

/** undici is loaded with the first http request: a daemon with only stdio rows never pays for it. */
let undici: Promise<typeof import("undici")> | undefined;
const loadUndici = (): Promise<typeof import("undici")> => (undici ??= import("undici"));
import { isAllowedRemoteUrl } from "../../config/url-policy.js";
import type { FetchLike } from "./transport.js";

/** How long an idle connection is kept when the server gives no Keep-Alive hint, ms. */
export const DEFAULT_KEEP_ALIVE_MS = 30_000;

/**
 * Taken off a server's `Keep-Alive: timeout` hint: the time a request may spend reaching
 * the server, so we never send on a socket the server is closing at that moment.
 */
const KEEP_ALIVE_THRESHOLD_MS = 1_000;

/**
 * Ceiling on a server's Keep-Alive hint, ms. A hint is the server's word about its own
 * timer; past ten minutes a load balancer in between has closed the socket anyway.
 */
const KEEP_ALIVE_MAX_MS = 10 * 60_000;

/** Redirects followed for one request, as the SDK's own same-origin follower allows. */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Statuses whose response cannot carry a body (a Response built with one throws). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A fetch that owns its connections: `close()` drains them, `destroy()` cuts them. Both idempotent. */
export interface KeepAliveFetch extends FetchLike {
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A fetch on its own undici Agent that keeps an idle connection for `idleMs` (default
 * 30 000 ms; a server's `Keep-Alive: timeout=N` hint wins, less one second, up to ten
 * minutes). Each request runs on an abort signal of its own, tied to the caller's by one
 * listener per caller signal. Idle sockets never keep the process alive. Nothing is
 * allocated until the first request.
 */
export function keepAliveFetch(idleMs: number = DEFAULT_KEEP_ALIVE_MS): KeepAliveFetch {
  if (!Number.isFinite(idleMs) || idleMs <= 0) {
    throw new RangeError(`keepAliveFetch: idleMs must be a positive number of ms, got ${idleMs}`);
  }
  let agent: Agent | undefined;
  let ended = false;
  const links = new SignalLinks();

  const fetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    if (ended) throw new TypeError("keepAliveFetch: this fetch has been closed");
    const { Agent, fetch: undiciFetch } = await loadUndici();
    if (ended) throw new TypeError("keepAliveFetch: this fetch has been closed");
    agent ??= new Agent({
      keepAliveTimeout: idleMs,
      keepAliveMaxTimeout: Math.max(idleMs, KEEP_ALIVE_MAX_MS),
      keepAliveTimeoutThreshold: KEEP_ALIVE_THRESHOLD_MS,
    });
    const link = links.link(init.signal ?? undefined);
    try {
      const response = (await undiciFetch(input, {
        ...(init as object),
        ...(link ? { signal: link.signal } : {}),
        dispatcher: agent,
      })) as unknown as Response;
      // Always a global Response: undici's own class fails the SDK's `instanceof Response`,
      // and its OAuth error parsing then reads "[object Response]" instead of the body.
      return releasedWhenRead(response, link ? link.release : () => undefined);
    } catch (error) {
      link?.release();
      throw error;
    }
  };
  return Object.assign(fetch, {
    async close() {
      ended = true;
      await agent?.close().catch(() => undefined);
    },
    async destroy() {
      ended = true;
      await agent?.destroy().catch(() => undefined);
    },
  });
}

/**
 * Per-request signals tied to callers' signals: one `abort` listener per caller signal,
 * however many requests run on it, and a request's own signal forgotten once its response
 * has been read.
 */
class SignalLinks {
  readonly #byCaller = new WeakMap<AbortSignal, Set<AbortController>>();

  link(caller: AbortSignal | undefined): { signal: AbortSignal; release(): void } | undefined {
    if (caller === undefined) return undefined;
    const own = new AbortController();
    if (caller.aborted) {
      own.abort(caller.reason);
      return { signal: own.signal, release: () => undefined };
    }
    let live = this.#byCaller.get(caller);
    if (live === undefined) {
      const created = new Set<AbortController>();
      live = created;
      this.#byCaller.set(caller, created);
      caller.addEventListener(
        "abort",
        () => {
          for (const controller of created) controller.abort(caller.reason);
          created.clear();
        },
        { once: true },
      );
    }
    live.add(own);
    const set = live;
    return { signal: own.signal, release: () => set.delete(own) };
  }
}

/**
 * The response, its body wrapped so `release` runs once the body is read to the end,
 * cancelled or broken: until then an abort of the caller's signal must still reach it (a
 * long tool call streams its answer as server-sent events).
 */
function releasedWhenRead(response: Response, release: () => void): Response {
  const body = response.body;
  if (body === null || NULL_BODY_STATUSES.has(response.status)) {
    release();
    return response;
  }
  let released = false;
  const done = (): void => {
    if (released) return;
    released = true;
    release();
  };
  const reader = body.getReader();
  const tracked = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: finished, value } = await reader.read();
        if (finished) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason);
    },
  });
  return withBody(response, tracked, { sameBytes: true });
}

/**
 * `response` with another body: its headers, its status (or `status`, "OK" then), and the
 * `url` and `redirected` the SDK reads, which a built Response lacks. Its `content-length`
 * is kept only for the same bytes (`sameBytes`): a new body's length is its own.
 */
export function withBody(
  response: Response,
  body: string | Uint8Array | ReadableStream<Uint8Array>,
  options: { status?: number; sameBytes?: boolean } = {},
): Response {
  const status = options.status ?? response.status;
  const headers = new Headers(response.headers);
  if (options.sameBytes !== true) headers.delete("content-length");
  const out = new Response(body, {
    status,
    statusText: status === response.status ? response.statusText : "OK",
    headers,
  });
  Object.defineProperty(out, "url", { value: response.url });
  Object.defineProperty(out, "redirected", { value: response.redirected });
  return out;
}

/** Why a redirect was not followed. Messages name origins only, never a path or query. */
export class RedirectRefusedError extends Error {
  override readonly name = "RedirectRefusedError";
  constructor(
    message: string,
    readonly code: "redirect-downgrade" | "redirect-disallowed" | "too-many-redirects",
  ) {
    super(message);
  }
}

/** Headers never sent to another origin, whether or not a row configured them. */
const ALWAYS_PROTECTED = ["authorization", "proxy-authorization"];

export interface OriginPinnedOptions {
  /** Redirects followed for one request before it fails. Default 5. */
  maxRedirects?: number;
}

/**
 * Wraps `baseFetch` so that it follows redirects itself (`redirect: "manual"` on every
 * hop) and:
 * - sends `headerNames` and always `authorization` only to the origin of `configuredUrl`:
 *   a hop anywhere else goes without them;
 * - refuses a hop from https to plain http, and a hop to any url the remote URL policy
 *   refuses (http to a host that is not loopback, another scheme, userinfo);
 * - turns no request with a body into a GET: a 301/302/303 answer to a POST is handed
 *   back as it is, for the SDK to report;
 * - fails after `maxRedirects` hops.
 */
export function originPinnedFetch(
  configuredUrl: string | URL,
  headerNames: readonly string[],
  baseFetch: FetchLike,
  options: OriginPinnedOptions = {},
): FetchLike {
  const pinned = new URL(configuredUrl).origin;
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  const protectedNames = [...new Set([...headerNames, ...ALWAYS_PROTECTED])];
  return async (input, init = {}) => {
    let url = new URL(input);
    let method = (init.method ?? "GET").toUpperCase();
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop++) {
      const sent = new Headers(headers);
      // The first hop goes where the SDK addressed it. Configured headers ride on every
      // request it makes (its OAuth discovery and token requests included), so they stay
      // on the pinned origin; but an `authorization` it set for that address itself (the
      // client_secret_basic of a token request to an authorization server elsewhere) is
      // meant for it. A redirect hop off the origin carries none of them.
      const dropped = hop === 0 ? headerNames : protectedNames;
      if (url.origin !== pinned) for (const name of dropped) sent.delete(name);
      const response = await baseFetch(url, { ...init, method, headers: sent, redirect: "manual" });
      const location = REDIRECT_STATUSES.has(response.status)
        ? response.headers.get("location")
        : null;
      if (location === null) return response;
      let target: URL;
      try {
        target = new URL(location, url);
      } catch {
        return response;
      }
      const keepsMethod =
        response.status === 307 || response.status === 308 || method === "GET" || method === "HEAD";
      if (!keepsMethod) return response;
      const refusal = refuseHop(url, target, hop, maxRedirects);
      await response.body?.cancel().catch(() => undefined);
      if (refusal) throw refusal;
      url = target;
      if (response.status === 303) method = "GET";
    }
  };
}

function refuseHop(
  from: URL,
  to: URL,
  hop: number,
  maxRedirects: number,
): RedirectRefusedError | undefined {
  if (hop >= maxRedirects) {
    return new RedirectRefusedError(
      `refused to follow more than ${maxRedirects} redirects (last from ${from.origin})`,
      "too-many-redirects",
    );
  }
  if (from.protocol === "https:" && to.protocol !== "https:") {
    return new RedirectRefusedError(
      `refused a redirect from ${from.origin} to ${to.protocol}//${to.host}: a downgrade from https`,
      "redirect-downgrade",
    );
  }
  if (!isAllowedRemoteUrl(to) || to.username !== "" || to.password !== "") {
    return new RedirectRefusedError(
      `refused a redirect from ${from.origin} to ${to.protocol}//${to.host}: only https, or http to loopback, and no credentials in the url`,
      "redirect-disallowed",
    );
  }
  return undefined;
}

let shared: KeepAliveFetch | undefined;

/**
 * One keepAliveFetch() for transports built without a fetch of their own (the free
 * `probe()`, `createDefaultTransport` called directly), made on first use. Its idle
 * sockets are unref'd, so it never keeps a process alive.
 */
export function sharedKeepAliveFetch(): KeepAliveFetch {
  shared ??= keepAliveFetch();
  return shared;
}
