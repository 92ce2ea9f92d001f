/**
 * Where sign-ins are kept, without the OAuth code: the store's shape, the
 * pool's default in memory and the key a server's credentials are kept under. The pool
 * holds a store from the start; the providers that read it load with the first http row
 * (oauth-client.ts).
 */
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

/** What a sign-in leaves behind for one server url. */
export interface StoredCredentials {
  tokens?: OAuthTokens;
  /** The client registration (dynamic, or the configured client stamped with its issuer). */
  clientInformation?: OAuthClientInformationMixed;
  /** Epoch ms the tokens were saved; with `expires_in`, when the access token runs out. */
  savedAt?: number;
  /** What was unusual about the server's sign-in (its metadata, say), for `status`. */
  notice?: string;
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
