/**
 * The pool's half of signing in, in one place: which OAuth provider a row's
 * connection gets (the stored, non-interactive one, or a machine grant's), the tokens to
 * redact, what each server's refusals asked for (sign-in.ts), the one sentence every
 * auth-required status, event, log line and error carries for a server, and the sign-ins
 * `mcpool login` and `logout` store or forget, each followed by a redial. McpPool holds one.
 * The providers are the OAuth code's (oauth-client.ts), loaded with the first http row or
 * sign-in: what a stdio-only pool asks of this class needs none of it.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { expandServerConfig, type Environment } from "../../config/placeholders.js";
import type { HttpServerConfig, McpServerConfig } from "../../config/rows.js";
import { McpPoolError } from "../core/errors.js";
import { httpErrorStatus } from "../transport/http-client.js";
import { loadedOAuth, loadOAuth } from "./oauth-client.js";
import { isAuthRequired } from "./refusal.js";
import { credentialsKey, memoryTokenStore, type TokenStore } from "./store.js";
import type { AuthChallenge } from "../transport/challenges.js";
import { SignInLedger } from "./sign-in.js";
import type { PoolLog, ServerAuthState, ServerStatus, SignInRequest } from "../core/types.js";

/** What sign-in reads of a configured server: its row, and how its last dial went. */
export interface SignInSubject {
  readonly row: McpServerConfig;
  readonly status: ServerStatus;
  readonly error: string | undefined;
}

export interface PoolAuthOptions {
  /** Where sign-ins are kept. Default: this process's memory. */
  tokenStore: TokenStore | undefined;
  /** A caller's own provider per row, which outranks ours (McpPoolOptions.authProvider). */
  authProvider: ((row: HttpServerConfig) => OAuthClientProvider | undefined) | undefined;
  /** A live connection's token was refused and nothing can renew it. */
  lost(serverId: string): void;
  log: NonNullable<PoolLog["error"]>;
  /** Where placeholders in a row's url are filled from (McpPoolOptions.env). */
  env: Environment | undefined;
  /** The entry of a configured server; throws `unknown-server`. */
  entry(serverId: string): SignInSubject;
  /** Closes a server's connection and dials it again (McpPool.reconnect). */
  reconnect(serverId: string): Promise<void>;
}

export class PoolAuth {
  readonly store: TokenStore;
  readonly #options: PoolAuthOptions;
  /** Per server, the OAuth tokens its provider last handed out: redacted from messages. */
  readonly #secrets = new Map<string, readonly string[]>();
  /** Per server, what was unusual about its sign-in (its authorization server's metadata). */
  readonly #notices = new Map<string, string>();
  readonly #ledger: SignInLedger;

  constructor(options: PoolAuthOptions) {
    this.#options = options;
    this.store = options.tokenStore ?? memoryTokenStore();
    this.#ledger = new SignInLedger(options.log);
  }

  /**
   * The provider of one connection of `row` (placeholders filled). `live`: a connection of
   * the pool, whose lost token makes the server auth-required; otherwise a probe's.
   */
  provider(row: HttpServerConfig, live: boolean): OAuthClientProvider | undefined {
    if (this.#options.authProvider) return this.#options.authProvider(row);
    const oauth = loadedOAuth();
    // The pool's transports load OAuth before they ask for a provider (withOAuth).
    if (oauth === undefined) throw new Error(`server "${row.id}": OAuth is not loaded yet`);
    const onTokens = (values: string[]): void => void this.#secrets.set(row.id, values);
    if (oauth.isMachineGrant(row)) return oauth.machineAuthProvider({ row, onTokens });
    return oauth.storedAuthProvider({
      row,
      store: this.store,
      ...(live
        ? {
            // A call that lost its token: the server says auth-required until a sign-in.
            onAuthRequired: () => this.#options.lost(row.id),
            onTokens,
            onGranted: (scope: string | undefined) => this.#ledger.granted(row.id, scope),
            onNotice: (notice: string) => void this.#notices.set(row.id, notice),
          }
        : {}),
    });
  }

  secrets(serverId: string): readonly string[] {
    return this.#secrets.get(serverId) ?? [];
  }

  /** What was unusual about the server's sign-in, for `status`, when something was. */
  notice(serverId: string): string | undefined {
    return this.#notices.get(serverId);
  }

  challenged(serverId: string, challenge: AuthChallenge): void {
    this.#ledger.challenged(serverId, challenge);
  }

  /**
   * The auth-required sentence when `cause` means the server wants a sign-in (or, without a
   * cause, for its standing refusal); undefined when the cause is something else. A 401 or
   * 403 the SDK gave up on after renewing a token counts when the server's challenge was seen.
   */
  refusal(serverId: string, cause?: unknown): string | undefined {
    const status = httpErrorStatus(cause);
    const seen = (status === 401 || status === 403) && this.#ledger.request(serverId) !== undefined;
    if (cause === undefined || seen || isAuthRequired(cause)) return this.#ledger.message(serverId);
    return undefined;
  }

  /** What a sign-in should ask for, while the server's last challenge is unmet. */
  request(serverId: string): SignInRequest | undefined {
    return this.#ledger.request(serverId);
  }

  /** A dial or a call of the server went through. */
  satisfied(serverId: string, by: "connect" | "call"): void {
    this.#ledger.satisfied(serverId, by);
  }

  /**
   * Saves what `mcpool login` handed over under the server's store key and dials it again.
   * Resolves with the status the dial left, never with a connect failure; refuses an unknown
   * id, a stdio row and credentials without an access token (`invalid-arguments`).
   */
  storeCredentials(serverId: string, credentials: unknown): Promise<ServerAuthState> {
    return this.#changeSignIn(serverId, async (key) => {
      const { parseCredentials } = await loadOAuth();
      const parsed = parseCredentials(serverId, credentials);
      await this.store.save(key, parsed);
      if (parsed.notice !== undefined) this.#notices.set(serverId, parsed.notice);
      else this.#notices.delete(serverId);
      this.#ledger.granted(serverId, parsed.tokens?.scope);
      this.#ledger.signedIn(serverId);
    });
  }

  /** Forgets what a sign-in left for an http server (`mcpool logout`) and dials it again. */
  forgetCredentials(serverId: string): Promise<ServerAuthState> {
    return this.#changeSignIn(serverId, async (key) => {
      await this.store.delete(key);
      this.#notices.delete(serverId);
      this.#ledger.forget(serverId);
    });
  }

  async #changeSignIn(
    serverId: string,
    change: (key: string) => Promise<void>,
  ): Promise<ServerAuthState> {
    const { entry, env, reconnect } = this.#options;
    await change(signInKey(entry(serverId).row, env));
    // A failed dial is the answer, not an error: the state says what it was.
    await reconnect(serverId).catch(() => undefined);
    const { status, error } = entry(serverId);
    return { id: serverId, status, ...(error !== undefined ? { error } : {}) };
  }
}

/**
 * Where a sign-in of `row` is stored: its url as dialled (placeholders filled from `env`),
 * the key the transport's provider reads. Refuses a stdio row (`invalid-arguments`).
 */
export function signInKey(row: McpServerConfig, env: Environment = process.env): string {
  if (row.transport !== "http") {
    throw new McpPoolError(
      "invalid-arguments",
      `server "${row.id}" is a stdio server; only http servers sign in`,
      { serverId: row.id },
    );
  }
  return credentialsKey((expandServerConfig(row, env) as HttpServerConfig).url);
}
