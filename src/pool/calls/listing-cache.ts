/**
 * Passthrough answers a 2026-07-28 server calls `public`, with a positive `ttlMs` (SEP-2549):
 * listings and `resources/read`. One answer serves every caller until it runs out, keyed by server,
 * method and params (a page's cursor, a read's URI). Nothing else is kept — a private answer, one
 * with no lifetime, a legacy server's, and one the server gave only after asking for input (a retry
 * with `inputResponses`: the spec forbids keeping it, as it depends on answers that are no part of
 * the key) — so those go to the server on every request, as before. A listing's requests that come
 * while it is on its way share it (a listing asks no input); a read is sent for each caller until
 * one is kept (a read may ask its own caller). A list change the server announces, a
 * `resources/updated` for a read's URI, or a new connection drops what it made old; no timer runs.
 */
import { canonicalJson } from "../core/fingerprint.js";
import { answeredAfterInput } from "../mcp/input-required.js";
import { cacheHintOf } from "../mcp/list-tools.js";

const RESOURCES_CHANGED = "notifications/resources/list_changed";
const RESOURCE_UPDATED = "notifications/resources/updated";

/** The answers that may be kept, and the notices that make them old. */
const KEPT_UNTIL: Readonly<Record<string, readonly string[]>> = {
  "prompts/list": ["notifications/prompts/list_changed"],
  "resources/list": [RESOURCES_CHANGED],
  "resources/templates/list": [RESOURCES_CHANGED],
  // A resource's own update (for its URI), or the server's resources changing at all.
  "resources/read": [RESOURCE_UPDATED, RESOURCES_CHANGED],
};

interface Kept {
  method: string;
  /** A read's URI: what a `resources/updated` names. */
  uri: string | undefined;
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
    const uri =
      method === "resources/read" && typeof asked.uri === "string" ? asked.uri : undefined;
    const where = { serverId, key, method, uri };
    if (!share || method === "resources/read") return this.#keep(where, await send());
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
      return this.#keep(where, await sent);
    } finally {
      own.delete(key);
      if (own.size === 0 && this.#asking.get(serverId) === own) this.#asking.delete(serverId);
    }
  }

  /** `result`, kept first when its server called it public for a while. */
  #keep(
    where: { serverId: string; key: string; method: string; uri: string | undefined },
    result: object,
  ): object {
    const hint = cacheHintOf(result);
    if (hint.scope !== "public" || !hint.ttlMs || answeredAfterInput(result)) return result;
    let byKey = this.#kept.get(where.serverId);
    if (byKey === undefined) {
      byKey = new Map();
      this.#kept.set(where.serverId, byKey);
    }
    byKey.set(where.key, {
      method: where.method,
      uri: where.uri,
      result: structuredClone(result),
      expiresAt: Date.now() + hint.ttlMs,
    });
    return result;
  }

  /**
   * Server `id` sent `notice` (a list_changed, a resources/updated with its `params`) or
   * connected again (undefined): drop what it made old.
   */
  drop(serverId: string, notice?: string, params?: Record<string, unknown>): void {
    const byKey = this.#kept.get(serverId);
    if (byKey === undefined) return;
    for (const [key, kept] of [...byKey]) {
      const old =
        notice === undefined ||
        (KEPT_UNTIL[kept.method]?.includes(notice) === true &&
          (notice !== RESOURCE_UPDATED || kept.uri === params?.uri));
      if (old) byKey.delete(key);
    }
    if (byKey.size === 0) this.#kept.delete(serverId);
  }
}
