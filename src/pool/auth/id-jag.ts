/**
 * Enterprise-managed authorization (SEP-990) for `"grant": "id-jag"` rows: the first leg.
 * The user's ID token from the enterprise IdP is exchanged at the IdP's token endpoint for
 * an Identity Assertion JWT Authorization Grant (ID-JAG, RFC 8693 token exchange), naming
 * the MCP server's authorization server as its audience and the server as its resource.
 * The second leg is an ordinary token request with the jwt-bearer grant (RFC 7523) and the
 * ID-JAG as its assertion, which the SDK sends for auth/machine.ts's provider.
 *
 * The ID token, the IdP client secret and the ID-JAG are credentials: no message here
 * quotes them, nor the IdP's answer (it may echo the request).
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { remoteUrlProblem } from "../../config/url-policy.js";
import type { OAuthClientSettings } from "../../config/rows.js";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag";
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** Bound on the IdP's answer, ms: a hung IdP must not hold the dial past its own budget. */
const EXCHANGE_TIMEOUT_MS = 30_000;

export interface IdJagRequest {
  settings: OAuthClientSettings;
  serverId: string;
  /** The MCP server's url, the resource when its metadata names none. */
  serverUrl: string;
  /** What the SDK discovered: the resource and the authorization server (the audience). */
  discovery: OAuthDiscoveryState | undefined;
  scope: string | undefined;
}

/** The ID-JAG for this server's authorization server, from the IdP. */
export async function exchangeIdToken(request: IdJagRequest): Promise<string> {
  const { settings, serverId, discovery } = request;
  const endpoint = settings.idpTokenEndpoint ?? "";
  const problem = remoteUrlProblem(endpoint);
  if (problem !== undefined) {
    throw new Error(`server "${serverId}": ${problem.replace("`url`", "auth.idpTokenEndpoint")}`);
  }
  // The row's `issuer`, where it pins one, is the authorization server the ID-JAG is for.
  const audience =
    settings.issuer ??
    discovery?.authorizationServerMetadata?.issuer ??
    discovery?.authorizationServerUrl;
  if (audience === undefined) {
    throw new Error(`server "${serverId}": no authorization server to ask an ID-JAG for`);
  }
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    requested_token_type: ID_JAG_TYPE,
    audience,
    resource: discovery?.resourceMetadata?.resource ?? request.serverUrl,
    subject_token: settings.idToken ?? "",
    subject_token_type: ID_TOKEN_TYPE,
  });
  if (request.scope) body.set("scope", request.scope);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (settings.idpClientSecret !== undefined && settings.idpClientId !== undefined) {
    // client_secret_basic (RFC 6749 §2.3.1): both parts form-encoded, then base64.
    const pair = `${encodeURIComponent(settings.idpClientId)}:${encodeURIComponent(settings.idpClientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
  } else if (settings.idpClientId !== undefined) {
    body.set("client_id", settings.idpClientId);
  }
  const response = await fetch(endpoint, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
  });
  const answer = (await response.json().catch(() => undefined)) as
    { access_token?: unknown; issued_token_type?: unknown; error?: unknown } | undefined;
  if (!response.ok || typeof answer?.access_token !== "string") {
    // The error code is the IdP's keyword, not a secret; its description might quote one.
    const code = typeof answer?.error === "string" ? ` (${answer.error.slice(0, 60)})` : "";
    throw new Error(
      `server "${serverId}": the IdP refused to exchange the ID token: HTTP ${response.status}${code}`,
    );
  }
  return answer.access_token;
}
