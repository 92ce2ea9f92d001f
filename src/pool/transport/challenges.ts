/**
 * What a server's refusals said: the transport witnesses each 401, or 403
 * `insufficient_scope`, and hands it on as an AuthChallenge; the sign-in ledger
 * (auth/sign-in.ts) keeps them. The transport needs no sign-in code to do so.
 */
import type { FetchLike } from "./transport.js";

/** What one refused response said. */
export interface AuthChallenge {
  status: 401 | 403;
  /** The `scope` of its WWW-Authenticate, when it named one. */
  scope?: string;
  resourceMetadataUrl?: string;
  /** A 403 with `error="insufficient_scope"`: the token is good, its scope is not enough. */
  insufficientScope: boolean;
  /** The JSON-RPC method that was refused, when the request was one. */
  method?: string;
}

/**
 * `fetch` that tells `onChallenge` what each 401, or 403 `insufficient_scope`, from the
 * server's own url said. The SDK reads the same header for its own flow; this is only a
 * witness, so `mcpool login` can be told what the daemon was refused with. The SDK's
 * reader of the header is imported at the first refusal: the ledger (auth/sign-in.ts) is the pool's
 * from the start, client/auth.js only with the http client.
 */
export function witnessChallenges(
  fetch: FetchLike,
  serverUrl: URL,
  onChallenge: (challenge: AuthChallenge) => void,
): FetchLike {
  const endpoint = serverUrl.href.split("#")[0];
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.status !== 401 && response.status !== 403) return response;
    if (String(url).split("#")[0] !== endpoint) return response;
    const { extractWWWAuthenticateParams } =
      await import("@modelcontextprotocol/sdk/client/auth.js");
    const { scope, resourceMetadataUrl, error } = extractWWWAuthenticateParams(response);
    const insufficientScope = response.status === 403 && error === "insufficient_scope";
    if (response.status === 403 && !insufficientScope) return response;
    const method = methodOf(init?.body);
    onChallenge({
      status: response.status,
      ...(scope !== undefined ? { scope } : {}),
      ...(resourceMetadataUrl !== undefined
        ? { resourceMetadataUrl: resourceMetadataUrl.href }
        : {}),
      insufficientScope,
      ...(method !== undefined ? { method } : {}),
    });
    return response;
  };
}

function methodOf(body: unknown): string | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { method?: unknown };
    return typeof message.method === "string" ? message.method : undefined;
  } catch {
    return undefined;
  }
}
