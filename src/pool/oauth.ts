/**
 * OAuth for http rows, the pool's half (MCP authorization, SPEC E1): a non-interactive
 * OAuthClientProvider over a TokenStore. The SDK's transport drives it: it sends the stored
 * access token, and on a 401 runs discovery and refreshes with the stored refresh token.
 * Whenever a person would be needed (no registration, no token, a refresh refused) the
 * provider opens nothing: it throws AuthRequiredError, which the pool reports as the
 * `auth-required` status, event and error code. `mcpool login` does the interactive part
 * and hands the result to `McpPool.storeCredentials()`.
 *
 * Tokens and client registrations live in the store only: never in a row, a state(), an
 * event, a log line or the tools cache.
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
  type OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { HttpServerConfig, OAuthClientSettings } from "../config/rows.js";
import { McpPoolError } from "./errors.js";

/** What a sign-in leaves behind for one server url. */
export interface StoredCredentials {
  tokens?: OAuthTokens;
  /** The client registration (dynamic, or the configured client stamped with its issuer). */
  clientInformation?: OAuthClientInformationMixed;
  /** Epoch ms the tokens were saved; with `expires_in`, when the access token runs out. */
  savedAt?: number;
}

/**
 * Where credentials outlive a connection, keyed by `credentialsKey(url)`: one sign-in serves
 * every row (and every agent) that dials the same server. The daemon's is a directory of
 * 0600 files; the pool's default keeps them in memory.
 */
export interface TokenStore {
  load(key: string): StoredCredentials | undefined | Promise<StoredCredentials | undefined>;
  save(key: string, credentials: StoredCredentials): void | Promise<void>;
  delete(key: string): void | Promise<void>;
}

/** A TokenStore in this process's memory: what a pool without one uses. */
export function memoryTokenStore(): TokenStore {
  const entries = new Map<string, StoredCredentials>();
  return {
    load: (key) => structuredClone(entries.get(key)),
    save: (key, credentials) => void entries.set(key, structuredClone(credentials)),
    delete: (key) => void entries.delete(key),
  };
}

/** The store key of a server: its url as dialled (placeholders filled), without a fragment. */
export function credentialsKey(url: string | URL): string {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

/**
 * The sentence every auth-required refusal carries: what to run. Never a url, never a
 * token, only the row's id.
 */
export function authRequiredMessage(serverId: string): string {
  return `server "${serverId}" needs you to sign in: run \`mcpool login ${serverId}\``;
}

/** The server wants a person to sign in; thrown where the SDK would open a browser. */
export class AuthRequiredError extends Error {
  override readonly name = "AuthRequiredError";
  constructor(readonly serverId: string) {
    super(authRequiredMessage(serverId));
  }
}

/**
 * Whether an error from a connect or a call means "sign in first": ours, or the SDK's
 * UnauthorizedError (a provider that redirected, as a custom `authProvider` may).
 */
export function isAuthRequired(error: unknown): boolean {
  return error instanceof AuthRequiredError || error instanceof UnauthorizedError;
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
): OAuthClientMetadata {
  return {
    client_name: "mcpool",
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
    saveDiscoveryState(state: OAuthDiscoveryState) {
      if (!settings.explicit && state.resourceMetadata === undefined) throw new NotOAuthError();
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
  return {
    tokens: tokens.data,
    ...(clientInformation ? { clientInformation } : {}),
    savedAt: Date.now(),
  };
}
