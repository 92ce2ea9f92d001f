/**
 * The remote URL policy: https anywhere, plain http only to this machine,
 * nothing else. The one encoding of the rule, read at three points that must never
 * disagree: validation of a configured url, the transport built from its expanded form,
 * and every redirect hop the origin-pinned fetch follows — a url the loader refused must
 * not be reachable by expansion or by redirect either.
 *
 * Messages name the scheme and host, never the whole url: its query or userinfo may hold
 * a token. Browser-safe: WHATWG URL is a global everywhere this runs.
 */
import { hasPlaceholders } from "./placeholders.js";

/**
 * WHATWG URL, declared here rather than taken from `lib: ["DOM"]` or `@types/node`, so the
 * module also compiles for a browser bundle with `types: []`.
 */
declare const URL: new (input: string) => { readonly protocol: string; readonly hostname: string };

/**
 * Whether a hostname names this machine: `localhost`, an IPv4 address in 127.0.0.0/8, or
 * `::1` (with or without the brackets a URL's `hostname` keeps). Plain http is allowed
 * only to these, since nothing on the wire can read or alter loopback traffic.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost") return true;
  if (host === "::1" || host === "[::1]") return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (octets === null) return false;
  const values = octets.slice(1).map(Number);
  return values[0] === 127 && values.every((n) => n <= 255);
}

/** Scheme and host only: whether a parsed url may be dialled or redirected to. */
export function isAllowedRemoteUrl(url: {
  readonly protocol: string;
  readonly hostname: string;
}): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

/** What is wrong with a url a transport is about to dial, or undefined. */
export function remoteUrlProblem(url: string): string | undefined {
  let parsed: { readonly protocol: string; readonly hostname: string };
  try {
    parsed = new URL(url);
  } catch {
    // The url itself is not quoted: its query or userinfo may hold a token.
    return "`url` is not a valid absolute URL (expected https://host/path)";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    const scheme = parsed.protocol.replace(/:$/, "");
    return `\`url\` must use http or https, got ${JSON.stringify(scheme.slice(0, 40))}`;
  }
  if (!isAllowedRemoteUrl(parsed)) {
    return `\`url\` uses plain http to ${parsed.hostname}; http is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https`;
  }
  return undefined;
}

/** `scheme://authority` of a url as written, before anything parses it. */
const SCHEME_AND_AUTHORITY = /^([^:/?#]*):\/\/([^/?#]*)/;

/**
 * What is wrong with a url as configured, placeholders and all. What a placeholder will
 * hold is unknown until the transport is built, so a url whose scheme or host is a
 * placeholder is accepted here and held to the policy then; placeholders elsewhere (a
 * path, a query token) do not stop the scheme and host from being checked now.
 */
export function configuredUrlProblem(url: string): string | undefined {
  if (!hasPlaceholders(url)) return remoteUrlProblem(url);
  const head = SCHEME_AND_AUTHORITY.exec(url);
  if (head === null) {
    // `${MCP_URL}` or `${SCHEME}:…`: nothing to check until it is expanded.
    return url.startsWith("${") ? undefined : remoteUrlProblem(url);
  }
  const [, scheme, authority] = head as unknown as [string, string, string];
  if (hasPlaceholders(scheme)) return undefined;
  const lower = scheme.toLowerCase();
  if (hasPlaceholders(authority)) {
    return lower === "http" || lower === "https"
      ? undefined
      : `\`url\` must use http or https, got ${JSON.stringify(lower.slice(0, 40))}`;
  }
  // Only the path, query or fragment is templated, and `${…}` parses there.
  return remoteUrlProblem(url);
}
