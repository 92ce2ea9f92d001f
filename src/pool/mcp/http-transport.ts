/**
 * An http row's transport: the SDK's StreamableHTTPClientTransport over the pinned,
 * keep-alive fetch, with the row's OAuth provider, the witness of its sign-in challenges,
 * and what a modern request adds to its POST (modern-fetch.ts). Loaded on demand through http-client.ts, never imported statically by what
 * a stdio-only daemon loads.
 */
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { HttpServerConfig } from "../../config/rows.js";
import { remoteUrlProblem } from "../../config/url-policy.js";
import { originPinnedFetch, sharedKeepAliveFetch } from "./fetch.js";
import { witnessChallenges } from "./challenges.js";
import { keepParamBook, modernFetch, ParamBook } from "./modern-fetch.js";
import type { HandedHttpSession, HandedSession, TransportContext } from "./transport.js";

/**
 * The SDK's transport with a close() that runs once. The SDK's says onclose on every call,
 * synchronously, and whoever learns of a close from onclose may close the transport in turn
 * (a lost connection's entry does, to take its leftovers down): without this the two
 * re-entered each other until the stack overflowed. stdio-transport.ts says its close once too.
 */
class OnceClosedHttpTransport extends StreamableHTTPClientTransport {
  #closed = false;
  /** A session another daemon handed over: the client resumes it instead of initializing. */
  handedSession?: HandedSession;

  override async close(): Promise<void> {
    // Set before the SDK's close: its onclose runs inside, and may call this again.
    if (this.#closed) return;
    this.#closed = true;
    await super.close();
  }
}

/**
 * `row` has its placeholders filled already (transport.ts). With `handed`, the transport goes
 * on in that session (src/daemon/handover/README.md): its requests carry its id.
 */
export function createHttpTransport(
  row: HttpServerConfig,
  context: TransportContext,
  handed?: HandedHttpSession,
): StreamableHTTPClientTransport {
  // The policy again on what the placeholders made of the url.
  const problem = remoteUrlProblem(row.url);
  if (problem !== undefined) throw new Error(problem);
  const url = new URL(row.url);
  const headers = { ...row.headers };
  const authProvider = context.authProvider?.(row);
  const onChallenge = context.onAuthChallenge;
  const pinned = originPinnedFetch(
    url,
    Object.keys(headers),
    context.fetch ?? sharedKeepAliveFetch(),
  );
  // What its tools mark for Mcp-Param-* headers, learnt by the client's listings.
  const book = new ParamBook();
  const transport = new OnceClosedHttpTransport(url, {
    requestInit: { headers },
    ...(authProvider ? { authProvider } : {}),
    // Redirects are the pinned fetch's to follow: it drops secrets on a hop off the origin.
    redirectPolicy: "follow",
    ...(handed ? { sessionId: handed.sessionId } : {}),
    // A modern request's headers and in-band errors (modern-fetch.ts); a legacy one passes.
    fetch: modernFetch(
      authProvider && onChallenge
        ? witnessChallenges(pinned, url, (challenge) => onChallenge(row.id, challenge))
        : pinned,
      book,
    ),
  });
  keepParamBook(transport, book);
  if (handed) transport.handedSession = handed.session;
  return transport;
}

export function httpErrorStatus(error: unknown): number | undefined {
  return error instanceof StreamableHTTPError ? error.code : undefined;
}

export function isHttpTransport(transport: unknown): boolean {
  return transport instanceof StreamableHTTPClientTransport;
}
