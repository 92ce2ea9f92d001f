/**
 * What an auth-required refusal is, without the OAuth code: the sentence it
 * carries and how to know one. Every server's failures are asked "is this a sign-in?", a
 * stdio row's too, so the asking loads nothing of the SDK's client/auth.js: the pool
 * loads OAuth before it makes any http transport (oauth-client.ts), so before that an SDK
 * UnauthorizedError can only come from a consumer's own SDK client.
 */
import { loadedOAuth } from "./oauth-client.js";

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
 * UnauthorizedError (a provider that redirected, as a custom `authProvider` may). Before
 * the pool loaded OAuth, the SDK's error can only come from a consumer's own client: it is
 * known by its class's name then, as http-client.ts knows an HTTP error.
 */
export function isAuthRequired(error: unknown): boolean {
  if (error instanceof AuthRequiredError) return true;
  const oauth = loadedOAuth();
  if (oauth) return oauth.isUnauthorized(error);
  return error instanceof Error && error.constructor.name === "UnauthorizedError";
}
