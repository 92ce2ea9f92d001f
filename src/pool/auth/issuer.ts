/**
 * Which authorization server a sign-in talks to, checked the way the 2026-07-28 revision
 * asks (MCP authorization, "Authorization Response Validation"; RFC 8414 §3.3, RFC 9207):
 * metadata is used only when it names the issuer its well-known URL was built from, and an
 * authorization response is acted on only when its `iss` is that issuer (or, for a server
 * that does not send one, when it never said it would). A server that publishes no
 * protected-resource metadata (the 2025-03-26 revision's discovery) names no issuer to
 * check against: the SDK client takes the metadata at its origin's root whatever issuer it
 * names, and so does mcpool, saying so in `status`. Comparisons are plain string
 * equality: no case folding, port elision, trailing-slash or percent-encoding
 * normalisation (RFC 3986 §6.2.1), so `https://as.example/` is not `https://as.example`.
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";

/** What a sign-in records of its authorization server before sending a person to it. */
export interface RecordedIssuer {
  issuer: string;
  /** The metadata's `authorization_response_iss_parameter_supported`. */
  issInResponses: boolean;
  /** What was unusual about the metadata, in a sentence for `status`, when something was. */
  notice?: string;
}

/**
 * The discovered authorization server, refused when its metadata names another issuer than
 * the identifier discovery fetched it for. Without protected-resource metadata the SDK falls
 * back to the server's origin with a `/` path: no issuer was declared, so the one the
 * metadata names is taken (as the SDK client takes it), with a notice when it is not the
 * origin.
 */
export function checkedIssuer(state: OAuthDiscoveryState): RecordedIssuer | undefined {
  const metadata = state.authorizationServerMetadata;
  if (metadata === undefined) return undefined;
  const fetchedFor = String(state.authorizationServerUrl);
  const named = metadata.issuer;
  const fallback = state.resourceMetadata === undefined;
  if (named !== fetchedFor && !fallback) {
    throw new Error(
      `the authorization server metadata fetched for ${JSON.stringify(fetchedFor)} names the issuer ${JSON.stringify(named)}; RFC 8414 requires them to be identical, so mcpool does not use it`,
    );
  }
  const record = metadata as Record<string, unknown>;
  const unusual = fallback && named !== fetchedFor && fetchedFor !== `${named}/`;
  return {
    issuer: named,
    issInResponses: record.authorization_response_iss_parameter_supported === true,
    ...(unusual
      ? {
          notice: `the server publishes no protected-resource metadata, and the authorization server metadata at its origin (${fetchedFor}) names the issuer ${JSON.stringify(named)}; mcpool signed in with it, as the 2025-03-26 revision's clients do`,
        }
      : {}),
  };
}

/**
 * The code of an authorization response (the redirect's query), or why it is refused. The
 * `iss` check comes first: a response from another issuer is not acted on at all, not even
 * to show its error (RFC 9207 §2.4, and the revision's "MUST NOT act on or display").
 */
export function authorizationCode(
  serverId: string,
  params: URLSearchParams,
  recorded: RecordedIssuer | undefined,
): string {
  const iss = params.get("iss");
  if (recorded !== undefined) {
    if (iss === null && recorded.issInResponses) {
      throw new Error(
        `the sign-in to "${serverId}" came back without the issuer its authorization server (${recorded.issuer}) promised to name (RFC 9207); not signing in`,
      );
    }
    if (iss !== null && iss !== recorded.issuer) {
      throw new Error(
        `the sign-in to "${serverId}" came back from issuer ${JSON.stringify(iss)}, not ${JSON.stringify(recorded.issuer)} where mcpool sent it (RFC 9207): a mix-up or an attack; not signing in`,
      );
    }
  }
  const error = params.get("error");
  const code = params.get("code");
  if (error !== null || code === null) {
    const description = params.get("error_description");
    throw new Error(
      `the authorization server refused the sign-in: ${error ?? "no code"}${description ? ` (${description})` : ""}`,
    );
  }
  return code;
}
