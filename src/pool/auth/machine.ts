/**
 * Machine-to-machine OAuth for http rows (`"auth": {"grant": "client_credentials", …}`,
 * SEP-1046): the provider the SDK's transport drives with no person at hand, for a daemon
 * under systemd. On a 401 the SDK fetches a token with the client_credentials grant, the
 * client proving itself with its secret (client_secret_basic, or _post where that is all
 * the server takes) or with a JWT assertion signed by its private key (private_key_jwt,
 * RFC 7523 §2.2, signed by the SDK's createPrivateKeyJwtAuth). An expired token is met by
 * another 401 and another grant: nothing to refresh, nobody to ask.
 *
 * `"grant": "id-jag"` (SEP-990, enterprise-managed authorization) proves the client the
 * same way, but its grant is the jwt-bearer one (RFC 7523) with an ID-JAG as the assertion,
 * exchanged for the row's ID token at the IdP just before each token request
 * (auth/id-jag.ts); the audience and resource come from the SDK's discovery.
 *
 * Tokens live in this provider's memory only (a grant is always at hand); the secret and
 * key come from the row as dialled (placeholders filled) or the key's file, read at dial
 * time. None of them is ever logged or reported; the pool is told the token strings so
 * that messages can be redacted of them.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type {
  AddClientAuthentication,
  OAuthClientProvider,
  OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { HttpServerConfig, OAuthClientSettings } from "../../config/rows.js";
import { exchangeIdToken, JWT_BEARER } from "./id-jag.js";

/** Whether a row signs in by itself with a machine grant. */
export function isMachineGrant(row: Pick<HttpServerConfig, "auth">): boolean {
  if (typeof row.auth !== "object") return false;
  return row.auth.grant === "client_credentials" || row.auth.grant === "id-jag";
}

/** The JWS algorithm for a key whose row names none: what its type and curve sign with. */
function algorithmOf(pem: string): string {
  const key = createPrivateKey(pem);
  const type = key.asymmetricKeyType;
  if (type === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === "secp384r1" ? "ES384" : curve === "secp521r1" ? "ES512" : "ES256";
  }
  if (type === "ed25519" || type === "ed448") return "EdDSA";
  if (type === "rsa-pss") return "PS256";
  return "RS256";
}

/** The PEM a row's private_key_jwt signs with: inline (often `${VAR}`), or read from its file. */
function privateKeyOf(settings: OAuthClientSettings, serverId: string): string | undefined {
  if (settings.privateKey !== undefined) return settings.privateKey;
  if (settings.privateKeyFile === undefined) return undefined;
  try {
    return readFileSync(settings.privateKeyFile, "utf8");
  } catch (error) {
    // The path is configuration, not a secret; the file's content never appears.
    throw new Error(
      `server "${serverId}": cannot read auth.privateKeyFile ${settings.privateKeyFile}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

export interface MachineProviderOptions {
  /** The row as dialled: placeholders filled. */
  row: HttpServerConfig;
  /** Told the token strings the provider hands out, so messages can be redacted of them. */
  onTokens?: (values: string[]) => void;
}

/** The provider of a `client_credentials` or `id-jag` row, for one connection. */
export function machineAuthProvider(options: MachineProviderOptions): OAuthClientProvider {
  const { row } = options;
  const settings = typeof row.auth === "object" ? row.auth : {};
  const pem = privateKeyOf(settings, row.id);
  const idJag = settings.grant === "id-jag";
  const clientInformation: OAuthClientInformationMixed = {
    client_id: settings.clientId ?? "",
    ...(settings.clientSecret !== undefined ? { client_secret: settings.clientSecret } : {}),
    ...(settings.issuer !== undefined ? { issuer: settings.issuer } : {}),
  };
  const clientMetadata: OAuthClientMetadata = {
    client_name: "mcpool",
    redirect_uris: [],
    grant_types: [idJag ? JWT_BEARER : "client_credentials"],
    token_endpoint_auth_method: pem === undefined ? "client_secret_basic" : "private_key_jwt",
    ...(settings.scopes && settings.scopes.length > 0 ? { scope: settings.scopes.join(" ") } : {}),
  };
  const addClientAuthentication: AddClientAuthentication | undefined =
    pem === undefined
      ? undefined
      : createPrivateKeyJwtAuth({
          issuer: clientInformation.client_id,
          subject: clientInformation.client_id,
          privateKey: pem,
          alg: settings.algorithm ?? algorithmOf(pem),
        });
  let tokens: OAuthTokens | undefined;
  let discovery: OAuthDiscoveryState | undefined;
  /** The latest ID-JAG: a credential too, redacted with the tokens until the next one. */
  let assertion: string | undefined;
  const tell = (): void => {
    const values = [tokens?.access_token, tokens?.refresh_token, assertion];
    options.onTokens?.(values.filter((v): v is string => !!v));
  };
  const refuse = (): never => {
    throw new Error(`server "${row.id}" signs in with client credentials; no browser is involved`);
  };
  return {
    // No redirect URL: the SDK takes the non-interactive path and fetches a token.
    get redirectUrl() {
      return undefined;
    },
    get clientMetadata() {
      return clientMetadata;
    },
    clientInformation: () => clientInformation,
    tokens: () => tokens,
    saveTokens(next) {
      tokens = next;
      tell();
    },
    // Kept for the ID-JAG's audience and resource; not handed back, so each grant discovers.
    saveDiscoveryState(state) {
      discovery = state;
    },
    redirectToAuthorization: refuse,
    saveCodeVerifier() {
      // No authorization code, no PKCE.
    },
    codeVerifier: refuse,
    async prepareTokenRequest(scope) {
      const params = new URLSearchParams({ grant_type: "client_credentials" });
      if (idJag) {
        const request = { settings, serverId: row.id, serverUrl: row.url, discovery, scope };
        assertion = await exchangeIdToken(request);
        tell();
        params.set("grant_type", JWT_BEARER);
        params.set("assertion", assertion);
      }
      if (scope) params.set("scope", scope);
      return params;
    },
    ...(addClientAuthentication ? { addClientAuthentication } : {}),
  };
}
