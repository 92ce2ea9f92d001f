/**
 * A modern server's input request keeps its key on the way to a modern host (SPEC H3): the
 * pool hands it to the call's handler in the question's `_meta`, the bridge takes it out.
 */

/**
 * The `_meta` key the pool gives a modern server's input request's own key in (the pool's
 * INPUT_KEY_META, src/pool/mcp/client.ts): kept for a modern host, never shown to any host.
 */
const INPUT_KEY_META = "mcpool/inputKey";

/** A question's params without the pool's key, and that key when there was one. */
export function splitInputKey(params: unknown): { params: unknown; key: string | undefined } {
  if (typeof params !== "object" || params === null) return { params, key: undefined };
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  if (_meta === undefined || !(INPUT_KEY_META in _meta)) return { params, key: undefined };
  const { [INPUT_KEY_META]: key, ...meta } = _meta;
  const kept = Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
  return { params: kept, key: typeof key === "string" ? key : undefined };
}
