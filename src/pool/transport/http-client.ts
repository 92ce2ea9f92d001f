/**
 * The SDK's streamable HTTP client loads with the first http row, not with the daemon: a
 * pool of stdio rows never pays for it. This module is the one door to it. It
 * imports nothing of the SDK itself, so what asks "was this an HTTP error?" does not load
 * the client to find out: no such error can exist before the client was loaded.
 */
type HttpModule = typeof import("./http-transport.js");

let loading: Promise<HttpModule> | undefined;
let loaded: HttpModule | undefined;

/** The http transport module, imported once on first use. */
export function loadHttpClient(): Promise<HttpModule> {
  return (loading ??= import("./http-transport.js").then((module) => (loaded = module)));
}

/**
 * The HTTP status a Streamable HTTP request failed with (the SDK's StreamableHTTPError);
 * undefined for any other error. Before the pool loaded the client, the error can only come
 * from a consumer's own SDK client (sessionLost is exported for that): it is known by its
 * class's name then, so asking still loads nothing.
 */
export function httpErrorStatus(error: unknown): number | undefined {
  if (loaded) return loaded.httpErrorStatus(error);
  const named = error instanceof Error && error.constructor.name === "StreamableHTTPError";
  const code = named ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === "number" ? code : undefined;
}

/**
 * Whether `transport` is the pool's Streamable HTTP transport, where a modern request may
 * go first; a custom transport is not taken for one. False before the client loads.
 */
export function isHttpTransport(transport: unknown): boolean {
  return loaded !== undefined && loaded.isHttpTransport(transport);
}

/** Ends an http session's GET stream for a hand-over: true if one was open (ListenStream, fetch.ts). */
export async function holdListening(transport: unknown): Promise<boolean> {
  return loaded !== undefined && (await loaded.holdListening(transport));
}

/** Lets an http session open its GET stream again (http-transport.ts listenAgain()). */
export function listenAgain(transport: unknown, reopen?: boolean): void {
  loaded?.listenAgain(transport, reopen);
}

/**
 * The JSON-RPC error a Streamable HTTP request was refused with, when the SDK's error carries
 * the server's answer in its message (a 4xx whose body is a JSON-RPC error, as a 2026-07-28
 * server refuses a legacy `initialize` with -32022); undefined otherwise.
 */
export function httpJsonRpcError(error: unknown): { code?: unknown; data?: unknown } | undefined {
  if (httpErrorStatus(error) === undefined) return undefined;
  const message = (error as Error).message;
  const start = message.indexOf("{");
  if (start === -1) return undefined;
  try {
    const body = JSON.parse(message.slice(start)) as { error?: { code?: unknown; data?: unknown } };
    return typeof body.error === "object" && body.error !== null ? body.error : undefined;
  } catch {
    return undefined;
  }
}
