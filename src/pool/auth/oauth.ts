/**
 * OAuth for http rows, the pool's half (MCP authorization, docs/security.md): a non-interactive
 * OAuthClientProvider over a TokenStore. The SDK's transport drives it: it sends the stored
 * access token, and on a 401 runs discovery and refreshes with the stored refresh token.
 * Whenever a person would be needed (no registration, no token, a refresh refused) the
 * provider opens nothing: it throws AuthRequiredError, which the pool reports as the
 * `auth-required` status, event and error code. `mcpool login` does the interactive part
 * and hands the result to `McpPool.storeCredentials()`.
 *
 * Tokens and client registrations live in the store only: never in a row, a state(), an
 * event, a log line or the tools cache. Loaded with the first http row or sign-in
 * (oauth-client.ts); what the pool needs before that is in auth/store.ts and
 * auth/refusal.ts.
 */
import {
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import {
  OAuthClientInformationFullSchema,
  OAuthTokensSchema,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { HttpServerConfig, OAuthClientSettings } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";
import { checkedIssuer } from "./issuer.js";
import { AuthRequiredError } from "./refusal.js";
import { credentialsKey, type StoredCredentials, type TokenStore } from "./store.js";

// What stays named here for those who read it from this module (index.ts, the daemon's store).
export { AuthRequiredError, authRequiredMessage, isAuthRequired } from "./refusal.js";
export {
  credentialsKey,
  memoryTokenStore,
  type StoredCredentials,
  type TokenStore,
} from "./store.js";

/**
 * Whether `error` is the SDK's UnauthorizedError; auth/refusal.ts asks through here once
 * this module is loaded, so the question itself never loads it.
 */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof UnauthorizedError;
}

/**
 * The redirect URI the non-interactive provider names. The SDK needs one to take the
 * refresh path at all (without it, it treats the client as a client_credentials one); no
 * listener is ever behind it, since the provider never starts an authorization.
 */
export const NON_INTERACTIVE_REDIRECT_URL = "http://127.0.0.1/mcpool/oauth/callback";

/** The settings of a row's `auth` field; `explicit` is false for a row that has none. */
export function oauthSettings(row: Pick<HttpServerConfig, "auth">): OAuthClientSettings & {
  explicit: boolean;
} {
  const auth = row.auth;
  if (auth === undefined) return { explicit: false };
  if (auth === "oauth") return { explicit: true };
  return { ...auth, explicit: true };
}

/** The client metadata mcpool registers with (RFC 7591) for one redirect URI. */
export function clientMetadataFor(
  redirectUrl: string,
  settings: OAuthClientSettings,
): OAuthClientMetadata & { application_type: "native" } {
  return {
    client_name: "mcpool",
    // A CLI with a loopback redirect (SEP-837; OIDC registration defaults to "web", whose
    // redirect rules refuse 127.0.0.1).
    application_type: "native",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    // A configured secret makes a confidential client; otherwise PKCE alone (OAuth 2.1 §2.1).
    token_endpoint_auth_method: settings.clientSecret ? "client_secret_basic" : "none",
    ...(settings.scopes && settings.scopes.length > 0 ? { scope: settings.scopes.join(" ") } : {}),
  };
}

/** The configured client of a row, when it names one. */
export function configuredClient(
  settings: OAuthClientSettings,
): OAuthClientInformationMixed | undefined {
  if (!settings.clientId) return undefined;
  return {
    client_id: settings.clientId,
    ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
  };
}

/** Thrown for a row without `auth` whose 401 does not lead to protected-resource metadata. */
export class NotOAuthError extends Error {
  override readonly name = "NotOAuthError";
  constructor() {
    super(
      'the server answered 401 Unauthorized and publishes no OAuth protected-resource metadata; check the row\'s headers, or set "auth": "oauth"',
    );
  }
}

export interface StoredProviderOptions {
  /** The row as dialled: placeholders filled. Its url is the store key. */
  row: HttpServerConfig;
  store: TokenStore;
  /** Told when a person is needed, before the error is thrown (a call mid-session, say). */
  onAuthRequired?: () => void;
  /** Told the token strings the provider hands out, so messages can be redacted of them. */
  onTokens?: (values: string[]) => void;
  /** Told the scope the stored tokens were granted (for a step-up's request). */
  onGranted?: (scope: string | undefined) => void;
  /** Told what was unusual about the server's sign-in, when the store or discovery says. */
  onNotice?: (notice: string) => void;
}

/**
 * The daemon's OAuthClientProvider for one connection of one row: stored tokens, refresh
 * through the SDK, never a browser. The store is read once per provider (the SDK asks for
 * the tokens on every request) and written through on every change.
 *
 * A row without `auth` gets OAuth only from a server that answers 401 and publishes
 * protected-resource metadata (RFC 9728), so a plain wrong API key still reads as the
 * connect failure it is.
 */
export function storedAuthProvider(options: StoredProviderOptions): OAuthClientProvider {
  const { row, store } = options;
  const key = credentialsKey(row.url);
  const settings = oauthSettings(row);
  let current: Promise<StoredCredentials> | undefined;
  const told = (credentials: StoredCredentials): StoredCredentials => {
    const { access_token, refresh_token, id_token } = credentials.tokens ?? {};
    const values = [access_token, refresh_token, id_token].filter((v): v is string => !!v);
    if (values.length > 0) options.onTokens?.(values);
    if (credentials.tokens) options.onGranted?.(credentials.tokens.scope);
    if (credentials.notice !== undefined) options.onNotice?.(credentials.notice);
    return credentials;
  };
  const read = (): Promise<StoredCredentials> =>
    (current ??= Promise.resolve(store.load(key)).then((stored) => told(stored ?? {})));
  const write = async (change: (stored: StoredCredentials) => StoredCredentials): Promise<void> => {
    const next = told(change(await read()));
    current = Promise.resolve(next);
    await store.save(key, next);
  };
  const required = (): never => {
    options.onAuthRequired?.();
    throw new AuthRequiredError(row.id);
  };
  return {
    get redirectUrl() {
      return NON_INTERACTIVE_REDIRECT_URL;
    },
    get clientMetadata() {
      return clientMetadataFor(NON_INTERACTIVE_REDIRECT_URL, settings);
    },
    async clientInformation() {
      const stored = (await read()).clientInformation;
      const configured = configuredClient(settings);
      // The configured client wins over a registration left by an earlier configuration.
      if (configured) {
        return stored?.client_id === configured.client_id
          ? { ...stored, ...configured }
          : configured;
      }
      // Registering is interactive business: a registration is only useful with a login.
      return stored ?? required();
    },
    async saveClientInformation(clientInformation) {
      await write((stored) => ({ ...stored, clientInformation }));
    },
    async tokens() {
      return (await read()).tokens;
    },
    async saveTokens(tokens) {
      await write((stored) => ({ ...stored, tokens, savedAt: Date.now() }));
    },
    redirectToAuthorization() {
      required();
    },
    saveCodeVerifier() {
      // Never reached with a verifier worth keeping: redirectToAuthorization() refuses next.
    },
    codeVerifier() {
      return required();
    },
    async invalidateCredentials(scope) {
      if (scope === "all") {
        current = Promise.resolve({});
        await store.delete(key);
      } else if (scope === "tokens") {
        await write(({ tokens: _tokens, savedAt: _savedAt, ...rest }) => rest);
      } else if (scope === "client") {
        await write(({ clientInformation: _client, ...rest }) => rest);
      }
    },
    async saveDiscoveryState(state: OAuthDiscoveryState) {
      // Tokens are refreshed only at the issuer the metadata was fetched for (RFC 8414 §3.3).
      const { notice } = checkedIssuer(state) ?? {};
      if (!settings.explicit && state.resourceMetadata === undefined) throw new NotOAuthError();
      if (notice !== undefined && (await read()).notice !== notice) {
        await write((stored) => ({ ...stored, notice }));
      }
    },
  };
}

/**
 * Credentials as a sign-in hands them over (the wire, a caller of the library), checked
 * against the SDK's own schemas: an access token is required, a registration optional.
 * Problems never quote a value.
 */
export function parseCredentials(serverId: string, value: unknown): StoredCredentials {
  const record =
    typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const tokens = OAuthTokensSchema.safeParse(record.tokens);
  if (!tokens.success) {
    throw new McpPoolError(
      "invalid-arguments",
      `the credentials for "${serverId}" carry no valid OAuth tokens (access_token and token_type are required)`,
      { serverId },
    );
  }
  let clientInformation: OAuthClientInformationMixed | undefined;
  if (record.clientInformation !== undefined) {
    const parsed = OAuthClientInformationFullSchema.partial({ redirect_uris: true }).safeParse(
      record.clientInformation,
    );
    if (!parsed.success) {
      throw new McpPoolError(
        "invalid-arguments",
        `the credentials for "${serverId}" carry a client registration without a valid client_id`,
        { serverId },
      );
    }
    clientInformation = parsed.data as OAuthClientInformationMixed;
  }
  const notice = typeof record.notice === "string" ? record.notice : undefined;
  return {
    tokens: tokens.data,
    ...(clientInformation ? { clientInformation } : {}),
    ...(notice !== undefined ? { notice } : {}),
    savedAt: Date.now(),
  };
}
