/**
 * The SDK's streamable HTTP client loads with the first http row, not with the daemon: a
 * pool of stdio rows never pays for it (issue 16). This module is the one door to it. It
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
 * undefined for any other error.
 */
export function httpErrorStatus(error: unknown): number | undefined {
  return loaded?.httpErrorStatus(error);
}
