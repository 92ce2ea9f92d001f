/**
 * What the 2026-07-28 Streamable HTTP binding asks of a modern request beyond its body,
 * around the fetch an http row's transport uses: the `MCP-Protocol-Version`, `Mcp-Method`
 * and `Mcp-Name` headers, read from the body it sends (a request names its era by its
 * `_meta` envelope: a legacy request passes untouched), and a 4xx whose body is a JSON-RPC
 * error answered in-band, as a modern client takes it, so the caller sees the server's
 * error (an UnsupportedProtocolVersionError with the versions it speaks) rather than an
 * HTTP status. Only an error of that very request: one without an id could be answered to
 * no one. 401 and 403 stay what they are: the sign-in's to handle.
 */
import { META } from "./era.js";
import { headerValue, type ParamBook } from "./param-headers.js";
import type { FetchLike } from "./transport.js";

/** The method whose `params` field names what `Mcp-Name` carries. */
const NAME_FIELD: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

interface Claimed {
  id?: unknown;
  method?: unknown;
  params?: { _meta?: Record<string, unknown>; [key: string]: unknown };
}

/** The body's request when it claims the modern era, else undefined (not parsed at all when it cannot). */
function modernRequestOf(body: unknown): Claimed | undefined {
  if (typeof body !== "string" || !body.includes(META.protocolVersion)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  const claimed = message as Claimed;
  const version = claimed?.params?._meta?.[META.protocolVersion];
  return typeof claimed?.method === "string" && typeof version === "string" ? claimed : undefined;
}

export { headerValue };

/** `fetch` with the modern binding's headers; a tools/call's `Mcp-Param-*` from `book`. */
export function modernFetch(fetch: FetchLike, book?: ParamBook): FetchLike {
  return async (url, init) => {
    const request = init?.method === "POST" ? modernRequestOf(init.body) : undefined;
    if (request === undefined) return fetch(url, init);
    const method = request.method as string;
    const headers = new Headers(init?.headers);
    headers.set("mcp-protocol-version", String(request.params?._meta?.[META.protocolVersion]));
    headers.set("mcp-method", method);
    const field = NAME_FIELD[method];
    const name = field === undefined ? undefined : request.params?.[field];
    if (typeof name === "string") headers.set("mcp-name", headerValue(name));
    if (method === "tools/call" && typeof name === "string" && book !== undefined) {
      const params = book.headersFor(name, request.params?.arguments);
      for (const [header, value] of Object.entries(params)) headers.set(header, value);
    }
    const response = await fetch(url, { ...init, headers });
    return inBand(response, request.id);
  };
}

/** A 4xx carrying the JSON-RPC error of request `id`, as the 200 it means in the modern era. */
async function inBand(response: Response, id: unknown): Promise<Response> {
  const status = response.status;
  if (status < 400 || status >= 500 || status === 401 || status === 403) return response;
  if (!(response.headers.get("content-type") ?? "").includes("application/json")) return response;
  const text = await response.text();
  let body: { jsonrpc?: unknown; error?: { code?: unknown }; id?: unknown } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const rebuilt = (code: number): Response =>
    new Response(text, {
      status: code,
      statusText: code === status ? response.statusText : "OK",
      headers: response.headers,
    });
  if (body?.jsonrpc !== "2.0" || typeof body.error?.code !== "number" || body.id !== id) {
    return rebuilt(status);
  }
  return rebuilt(200);
}
