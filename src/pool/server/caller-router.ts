/**
 * Routes a server's request to the caller in flight, whatever the request is:
 * elicitation and sampling each use one router with its own policy (routing.ts). A request
 * names no call (see routing.ts on `relatedRequestId`), so the router picks by where it
 * came from: a route is a server, or one conversation's clients on a per-conversation
 * server, whose requests never reach another conversation's caller.
 *
 * Where a request goes: the callers in flight on its route, the most recent first — but one
 * already answering a request of the same kind is passed over while another is not,
 * because a tool awaiting its answer cannot ask a second time. Then the pool's own handler;
 * then the policy's `unanswered`. The policy decides what a handler's answer becomes, and
 * what a failing, withdrawn or ended-first one answers.
 */

/** Where a server's request comes from: a server, one conversation on it, or one host profile's child. */
export interface Route {
  serverId: string;
  /** The conversation key (identity.ts) of a per-conversation server's client. */
  conversation?: string | undefined;
  /** The profile key (mcpool-protocol's profileKey) of a shared row's per-profile child. */
  profile?: string | undefined;
}

export interface RequestContext {
  /** The server that asks. */
  serverId: string;
  /** Aborted when the answer is no longer wanted: the server withdrew the request, or the call ended. */
  signal: AbortSignal;
}

/** Answers the requests of one call (CallOptions.onElicit, onSample). */
export type CallerHandler<P, R> = (params: P, context: RequestContext) => R | Promise<R>;

/** Answers a request no call in flight took (McpPoolOptions.onElicit, onSample). */
export type FallbackHandler<P, R> = (
  serverId: string,
  params: P,
  context: RequestContext,
) => R | Promise<R>;

/** What one kind of request answers when no handler gives a usable answer; each may throw. */
export interface RoutePolicy<R> {
  /** Nobody to ask: no caller in flight, no pool handler. */
  unanswered(): R;
  /** The request was withdrawn, or the call that was asked ended, before an answer. */
  withdrawn(): R;
  /** A handler's answer, checked: what the server gets. */
  accept(answer: unknown, serverId: string): R;
  /** A handler threw. */
  failed(error: unknown, serverId: string): R;
}

interface Caller<P, R> {
  readonly handler: CallerHandler<P, R>;
  /** Aborted when the call ends: a request still being answered is withdrawn. */
  readonly ended: AbortController;
  /** Requests this caller is answering now. */
  asking: number;
}

const WITHDRAWN = Symbol("withdrawn");

export class CallerRouter<P, R> {
  /** Per route, the callers in flight with a handler, oldest first. */
  readonly #callers = new Map<string, Caller<P, R>[]>();
  readonly #fallback: FallbackHandler<P, R> | undefined;
  readonly #policy: RoutePolicy<R>;

  constructor(fallback: FallbackHandler<P, R> | undefined, policy: RoutePolicy<R>) {
    this.#fallback = fallback;
    this.#policy = policy;
  }

  /** A call with a handler is in flight on `route` until the returned function is called. */
  register(route: Route, handler: CallerHandler<P, R>): () => void {
    const key = keyOf(route);
    const caller: Caller<P, R> = { handler, ended: new AbortController(), asking: 0 };
    const list = this.#callers.get(key) ?? [];
    list.push(caller);
    this.#callers.set(key, list);
    return () => {
      const now = this.#callers.get(key);
      const at = now?.indexOf(caller) ?? -1;
      if (now && at !== -1) {
        now.splice(at, 1);
        if (now.length === 0) this.#callers.delete(key);
      }
      caller.ended.abort(new Error("the call that was asked has ended"));
    };
  }

  /** The answer to one request that came in on `route`, as the policy says it. */
  async route(route: Route, params: P, signal: AbortSignal): Promise<R> {
    const { serverId } = route;
    const callers = this.#callers.get(keyOf(route)) ?? [];
    const caller = callers.findLast((c) => c.asking === 0) ?? callers.at(-1);
    if (caller) {
      caller.asking += 1;
      try {
        const asked = AbortSignal.any([signal, caller.ended.signal]);
        return await this.#ask(serverId, asked, (ctx) => caller.handler(params, ctx));
      } finally {
        caller.asking -= 1;
      }
    }
    const fallback = this.#fallback;
    if (fallback) return this.#ask(serverId, signal, (ctx) => fallback(serverId, params, ctx));
    return this.#policy.unanswered();
  }

  /**
   * The answer to one request that belongs to a known call (a modern `input_required`): that call's
   * `handler` only, else the pool's own, else the policy's — never another caller in flight.
   */
  answerFor(
    handler: CallerHandler<P, R> | undefined,
    serverId: string,
    params: P,
    signal: AbortSignal,
  ): Promise<R> {
    if (handler) return this.#ask(serverId, signal, (ctx) => handler(params, ctx));
    const fallback = this.#fallback;
    if (fallback) return this.#ask(serverId, signal, (ctx) => fallback(serverId, params, ctx));
    return Promise.resolve().then(() => this.#policy.unanswered());
  }

  async #ask(
    serverId: string,
    signal: AbortSignal,
    run: (context: RequestContext) => R | Promise<R>,
  ): Promise<R> {
    if (signal.aborted) return this.#policy.withdrawn();
    let onAbort: (() => void) | undefined;
    const withdrawn = new Promise<typeof WITHDRAWN>((resolve) => {
      onAbort = () => resolve(WITHDRAWN);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    let answer: R | typeof WITHDRAWN;
    try {
      answer = await Promise.race([
        Promise.resolve().then(() => run({ serverId, signal })),
        withdrawn,
      ]);
    } catch (error) {
      return this.#policy.failed(error, serverId);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
    if (answer === WITHDRAWN) return this.#policy.withdrawn();
    return this.#policy.accept(answer, serverId);
  }
}

function keyOf(route: Route): string {
  return JSON.stringify([route.serverId, route.conversation ?? null, route.profile ?? null]);
}
