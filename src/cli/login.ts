/**
 * `mcpool login ID` and `mcpool logout ID`: the interactive half of OAuth (the daemon holds
 * the non-interactive half, src/pool/oauth.ts). Login dials the server the way the daemon
 * does (placeholders, URL policy, origin pinning: createDefaultTransport), lets the SDK
 * discover the authorization server, register a client (or use the row's), and build a
 * PKCE authorization URL; opens it in the browser (or prints it); waits on a loopback
 * listener on 127.0.0.1 for the redirect; exchanges the code; and hands the tokens and the
 * client registration to the daemon (`auth/store`), which stores them 0600 and redials.
 * The listener exists for this flow only and is closed after it, whatever happened.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  UnauthorizedError,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { McpPoolError as ClientError, type PoolClient, type ServerAuthState } from "mcpool-client";
import type { Environment } from "../config/placeholders.js";
import type { HttpServerConfig, McpServerConfig } from "../config/rows.js";
import {
  clientMetadataFor,
  configuredClient,
  oauthSettings,
  type StoredCredentials,
} from "../pool/oauth.js";
import { createDefaultTransport } from "../pool/transport.js";
import { VERSION } from "../version.js";

/** How long a person has to finish signing in, from the moment the URL is shown. */
export const LOGIN_TIMEOUT_MS = 5 * 60_000;

/** The path of the loopback redirect URI (RFC 8252 §7.3: any port, this path). */
const CALLBACK_PATH = "/callback";

export interface SignInOptions {
  /** Open the authorization URL with `xdg-open` / `open`. false: only print it. */
  openBrowser: boolean;
  /** Where the URL and progress are written for a person (stderr: stdout is for results). */
  say(line: string): void;
  /** Bound on the whole wait for the redirect, ms. Default 5 minutes. */
  timeoutMs?: number;
  /** Where the row's placeholders are read. Default: process.env. */
  env?: Environment;
}

export type SignInResult =
  | { signedIn: true; credentials: StoredCredentials }
  /** The server let us in without a sign-in: nothing to store. */
  | { signedIn: false };

/**
 * The interactive flow for one http row, without the daemon: resolves with what to store,
 * or rejects (timeout, the authorization server's error, a state that does not match).
 */
export async function signIn(row: HttpServerConfig, options: SignInOptions): Promise<SignInResult> {
  const listener = await listenForRedirect();
  const settings = oauthSettings(row);
  let client: Client | undefined;
  try {
    const provider = new LoginProvider(listener.redirectUrl, settings, (url) =>
      announce(row.id, url, options),
    );
    listener.expectState(provider.stateValue);
    const transport = createDefaultTransport(row, {
      childEnv: "inherit",
      ...(options.env ? { env: options.env } : {}),
      authProvider: () => provider,
    });
    if (!(transport instanceof StreamableHTTPClientTransport)) {
      throw new Error(`server "${row.id}" is not an http server`);
    }
    client = new Client({ name: "mcpool-login", version: VERSION }, { capabilities: {} });
    try {
      await client.connect(transport);
      // In without a redirect: no sign-in needed, or a client that needs no person.
      const tokens = provider.savedTokens;
      return tokens
        ? { signedIn: true, credentials: provider.credentials(tokens) }
        : { signedIn: false };
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === undefined) {
        throw error;
      }
    }
    const code = await withTimeout(
      listener.code,
      options.timeoutMs ?? LOGIN_TIMEOUT_MS,
      `no sign-in for "${row.id}" arrived within ${Math.round((options.timeoutMs ?? LOGIN_TIMEOUT_MS) / 1000)} s`,
    );
    // The SDK's own exchange, with the PKCE verifier and the resource it discovered.
    await transport.finishAuth(code);
    const tokens = provider.savedTokens;
    if (!tokens) throw new Error(`the authorization server issued no tokens for "${row.id}"`);
    return { signedIn: true, credentials: provider.credentials(tokens) };
  } finally {
    await client?.close().catch(() => undefined);
    await listener.close();
  }
}

/** The interactive provider: in memory, for one flow; the daemon's store gets the result. */
class LoginProvider implements OAuthClientProvider {
  readonly stateValue = randomBytes(24).toString("base64url");
  authorizationUrl: URL | undefined;
  savedTokens: OAuthTokens | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #verifier: string | undefined;

  constructor(
    readonly redirectUrl: string,
    private readonly settings: ReturnType<typeof oauthSettings>,
    private readonly onRedirect: (url: URL) => void,
  ) {}

  get clientMetadata() {
    return clientMetadataFor(this.redirectUrl, this.settings);
  }

  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client ?? configuredClient(this.settings);
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    this.#client = clientInformation;
  }

  tokens(): OAuthTokens | undefined {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
    this.onRedirect(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error("no PKCE verifier: no authorization began");
    return this.#verifier;
  }

  /** What the daemon keeps. A configured secret stays in mcp.json, not in the token store. */
  credentials(tokens: OAuthTokens): StoredCredentials {
    let client = this.#client ?? configuredClient(this.settings);
    if (client && this.settings.clientSecret !== undefined) {
      const { client_secret: _secret, ...rest } = client;
      client = rest;
    }
    return { tokens, ...(client ? { clientInformation: client } : {}), savedAt: Date.now() };
  }
}

interface RedirectListener {
  redirectUrl: string;
  /** Resolves with the authorization code of the first redirect that carries our state. */
  code: Promise<string>;
  expectState(state: string): void;
  close(): Promise<void>;
}

/** A listener on 127.0.0.1, a port of the kernel's choosing, for one redirect. */
async function listenForRedirect(): Promise<RedirectListener> {
  let expected: string | undefined;
  let settle: { resolve(code: string): void; reject(error: Error): void } | undefined;
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // Nobody may be waiting yet when an error arrives; the rejection is read later.
  code.catch(() => undefined);
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== CALLBACK_PATH) {
      response.writeHead(404).end();
      return;
    }
    const params = url.searchParams;
    // Anything without our state is not the redirect we asked for (another local process).
    if (expected === undefined || params.get("state") !== expected) {
      response.writeHead(400, { "content-type": "text/plain" }).end("unexpected sign-in state");
      return;
    }
    const error = params.get("error");
    const received = params.get("code");
    if (error !== null || received === null) {
      page(response, 400, "Sign-in failed. You can close this window.");
      const description = params.get("error_description");
      settle?.reject(
        new Error(
          `the authorization server refused the sign-in: ${error ?? "no code"}${description ? ` (${description})` : ""}`,
        ),
      );
      return;
    }
    page(response, 200, "Signed in to mcpool. You can close this window.");
    settle?.resolve(received);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    code,
    expectState: (state) => (expected = state),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function page(response: import("node:http").ServerResponse, status: number, text: string): void {
  response
    .writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" })
    .end(`<!doctype html><title>mcpool</title><p>${text}</p>`);
}

/** Shows the URL and, when asked, opens it; a failed opener falls back to the printed URL. */
function announce(id: string, url: URL, options: SignInOptions): void {
  const href = url.href;
  if (!options.openBrowser) {
    options.say(`To sign in to "${id}", open this URL in a browser:\n  ${href}`);
    return;
  }
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  const fallback = (): void =>
    options.say(`Could not open a browser. To sign in to "${id}", open this URL:\n  ${href}`);
  options.say(`Opening your browser to sign in to "${id}"…`);
  try {
    const child = spawn(opener, [href], { stdio: "ignore", detached: true });
    child.once("error", fallback);
    child.once("exit", (exitCode) => {
      if (exitCode !== 0) fallback();
    });
    child.unref();
  } catch {
    fallback();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export type WithClient = <T>(run: (client: PoolClient) => Promise<T>) => Promise<T>;

export interface LoginCommandOptions {
  openBrowser: boolean;
  json: boolean;
  out(line: string): void;
  err(line: string): void;
}

/** `mcpool login ID`: resolves with the exit code; throws for the CLI to report. */
export async function login(
  withClient: WithClient,
  id: string,
  options: LoginCommandOptions,
): Promise<number> {
  // The row with its secrets (a configured client secret), from the daemon that will dial it.
  const row = await withClient(async (client) => {
    const state = (await client.state({ secrets: true })).find((s) => s.id === id);
    if (!state) throw new ClientError("unknown-server", `unknown server "${id}"`);
    return state.config as McpServerConfig;
  });
  if (row.transport !== "http") {
    throw new ClientError(
      "invalid-arguments",
      `server "${id}" is a stdio server; only http servers sign in`,
    );
  }
  const result = await signIn(row, { openBrowser: options.openBrowser, say: options.err });
  if (!result.signedIn) {
    report(options, { id, status: "ready" }, `"${id}" let mcpool in without a sign-in`);
    return 0;
  }
  const { tokens, clientInformation } = result.credentials;
  const state = await withClient((client) =>
    client.storeCredentials(id, {
      tokens: { ...tokens },
      ...(clientInformation ? { clientInformation: { ...clientInformation } } : {}),
    }),
  );
  report(options, state, `signed in to "${id}"`);
  return state.status === "ready" || state.status === "idle" || state.status === "disabled" ? 0 : 1;
}

/** `mcpool logout ID`: the daemon forgets the sign-in and redials the server. */
export async function logout(
  withClient: WithClient,
  id: string,
  options: LoginCommandOptions,
): Promise<number> {
  const state = await withClient((client) => client.forgetCredentials(id));
  report(options, state, `signed out of "${id}"`);
  return 0;
}

function report(options: LoginCommandOptions, state: ServerAuthState, done: string): void {
  if (options.json) {
    options.out(JSON.stringify(state, null, 2));
    return;
  }
  options.out(`${done}; the server is ${state.status}${state.error ? `: ${state.error}` : ""}`);
}
