/**
 * Passthrough listings a 2026-07-28 server calls `public`, with a positive `ttlMs` (SPEC H2,
 * SEP-2549): one answer serves every caller until it runs out, keyed by server, method and
 * params (a page's cursor), and the requests that come while it is on its way share it.
 * Nothing else is kept — a private answer, one with no lifetime, a legacy server's — so those
 * go to the server on every request, as before. A list change the server announces, or a
 * new connection, drops what was kept for it; no timer runs.
 */
import { canonicalJson } from "../core/fingerprint.js";
import { cacheHintOf } from "../mcp/list-tools.js";

/** The listings whose answers may be kept, and the notices that make them old. */
const KEPT_UNTIL: Readonly<Record<string, string>> = {
  "prompts/list": "notifications/prompts/list_changed",
  "resources/list": "notifications/resources/list_changed",
  "resources/templates/list": "notifications/resources/list_changed",
};

interface Kept {
  result: object;
  expiresAt: number;
}

export class ListingCache {
  /** Server id → key → the answer kept. */
  readonly #kept = new Map<string, Map<string, Kept>>();
  /** Server id → key → the request on its way. */
  readonly #asking = new Map<string, Map<string, Promise<object>>>();

  /**
   * `send`'s answer, or a public one still fresh for the same method and params. With
   * `share`, `send` runs once for the requests that ask the same meanwhile; a request that
   * can be aborted (it has a signal) sends its own, so its abort ends no one else's.
   * Another method: `send`.
   */
  async answer(
    serverId: string,
    method: string,
    params: Record<string, unknown> | undefined,
    send: () => Promise<object>,
    share: boolean,
  ): Promise<object> {
    if (KEPT_UNTIL[method] === undefined) return send();
    // The request's `_meta` (a progress token, trace context) is no part of what it asks.
    const asked = { ...params };
    delete asked._meta;
    const key = `${method} ${canonicalJson(asked)}`;
    const kept = this.#kept.get(serverId)?.get(key);
    if (kept !== undefined && Date.now() < kept.expiresAt) return structuredClone(kept.result);
    if (!share) return this.#keep(serverId, key, await send());
    let asking = this.#asking.get(serverId);
    const pending = asking?.get(key);
    if (pending !== undefined) return structuredClone(await pending);
    if (asking === undefined) {
      asking = new Map();
      this.#asking.set(serverId, asking);
    }
    const own = asking;
    const sent = send();
    own.set(key, sent);
    try {
      return this.#keep(serverId, key, await sent);
    } finally {
      own.delete(key);
      if (own.size === 0 && this.#asking.get(serverId) === own) this.#asking.delete(serverId);
    }
  }

  /** `result`, kept first when its server called it public for a while. */
  #keep(serverId: string, key: string, result: object): object {
    const hint = cacheHintOf(result);
    if (hint.scope !== "public" || !hint.ttlMs) return result;
    let byKey = this.#kept.get(serverId);
    if (byKey === undefined) {
      byKey = new Map();
      this.#kept.set(serverId, byKey);
    }
    byKey.set(key, { result: structuredClone(result), expiresAt: Date.now() + hint.ttlMs });
    return result;
  }

  /** Server `id` said `method` (a list_changed) or connected again (undefined): drop what it made old. */
  drop(serverId: string, notice?: string): void {
    const byKey = this.#kept.get(serverId);
    if (byKey === undefined) return;
    for (const key of [...byKey.keys()]) {
      const method = key.slice(0, key.indexOf(" "));
      if (notice === undefined || KEPT_UNTIL[method] === notice) byKey.delete(key);
    }
    if (byKey.size === 0) this.#kept.delete(serverId);
  }
}
