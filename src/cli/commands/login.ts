/**
 * `mcpool login ID` and `mcpool logout ID`: the interactive half of OAuth (the daemon holds
 * the non-interactive half, src/pool/auth/oauth.ts). Login signs in whenever the daemon says the
 * server needs it (`auth-required`), asking for what the daemon was refused with: the scope
 * of the server's challenge together with what was granted before (step-up, 403
 * `insufficient_scope`), at the resource metadata it named, even where a dial of its own
 * would get in without a token (a server that lets `initialize` through and refuses the
 * rest). Otherwise it dials the server the way the daemon does (placeholders, URL policy,
 * origin pinning: createDefaultTransport; initialize, then tools/list) and signs in if that
 * is refused; `--force` signs in regardless. Either way the SDK discovers the authorization
 * server, registers a client (or uses the row's) and builds a PKCE authorization URL; login
 * opens it in the browser (or prints it), waits on a loopback listener on 127.0.0.1 for the
 * redirect, exchanges the code, and hands the tokens and the client registration to the
 * daemon (`auth/store`), which stores them 0600 and redials. The listener exists for this
 * flow only and is closed after it, whatever happened. A server the daemon stopped asking
 * for (the sign-in bound, sign-in.ts) is signed in to only with `--force`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  auth,
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import {
  McpPoolError,
  type ServerAuthState,
  type ServerState,
  type SignInRequest,
} from "mcpool-client";
import { expandServerConfig, type Environment } from "../../config/placeholders.js";
import type { HttpServerConfig, McpServerConfig } from "../../config/rows.js";
import {
  clientMetadataFor,
  configuredClient,
  oauthSettings,
  type StoredCredentials,
} from "../../pool/auth/oauth.js";
import { authorizationCode, checkedIssuer, type RecordedIssuer } from "../../pool/auth/issuer.js";
import { isMachineGrant } from "../../pool/auth/machine.js";
import { createDefaultTransport } from "../../pool/transport/transport.js";
import { VERSION } from "../../version.js";
import { withProgress, type ProgressStream } from "../output/progress.js";
import type { CommandContext } from "./context.js";

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
  /**
   * What the daemon's refusal asked for: signs in with it at once, without a dial (whose
   * own requests may well be let through).
   */
  request?: SignInRequest | undefined;
  /** Sign in even when a dial gets in without one (`--force`, or the daemon says so). */
  always?: boolean;
  /** Where the progress line of each wait is drawn (a terminal only). Default: stderr. */
  progress?: ProgressStream;
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
  // The client settings as the daemon dials them: placeholders filled (a `${VAR}` secret).
  const dialled = expandServerConfig(row, options.env) as HttpServerConfig;
  const settings = oauthSettings(dialled);
  let client: Client | undefined;
  // Each step can take seconds (discovery, a person in a browser, the exchange), so each says what
  // it is doing.
  const step = <T>(label: string, work: () => Promise<T>): Promise<T> =>
    withProgress(label, work, options.progress);
  try {
    const provider = new LoginProvider(listener.redirectUrl, settings);
    // The redirect that carries our state, checked against the issuer we sent the person to.
    listener.expect(provider.stateValue, (params) =>
      authorizationCode(row.id, params, provider.recordedIssuer),
    );
    // An http row's transport comes once the HTTP client has loaded (http-client.ts).
    const transport = await createDefaultTransport(row, {
      childEnv: "inherit",
      ...(options.env ? { env: options.env } : {}),
      authProvider: () => provider,
    });
    if (!(transport instanceof StreamableHTTPClientTransport)) {
      throw new Error(`server "${row.id}" is not an http server`);
    }
    const serverUrl = dialled.url;
    // With the daemon's challenge, or with a dial that got in: the SDK's own flow, at once.
    const direct = async (request: SignInRequest | undefined): Promise<void> => {
      const result = await auth(provider, authOptions(serverUrl, request));
      if (result !== "REDIRECT") throw new Error(`no authorization began for "${row.id}"`);
    };
    const contacting = `contacting "${row.id}" and its authorization server`;
    if (options.request) {
      await step(contacting, () => direct(options.request));
    } else {
      const dialling = new Client({ name: "mcpool-login", version: VERSION }, { capabilities: {} });
      client = dialling;
      const redirected = await step(contacting, () => dialsThrough(dialling, transport, provider));
      if (!redirected) {
        // In without a redirect: no sign-in needed, or a client that needs no person.
        const tokens = provider.savedTokens;
        if (tokens) return { signedIn: true, credentials: provider.credentials(tokens) };
        if (!options.always) return { signedIn: false };
        await step(contacting, () => direct(undefined));
      }
    }
    // Shown once the progress line is erased: the URL is what a person acts on.
    const url = provider.authorizationUrl;
    if (url === undefined) throw new Error(`no authorization began for "${row.id}"`);
    announce(row.id, url, options);
    const timeoutMs = options.timeoutMs ?? LOGIN_TIMEOUT_MS;
    const code = await step(`waiting for the sign-in to "${row.id}" in the browser`, () =>
      withTimeout(
        listener.code,
        timeoutMs,
        `no sign-in for "${row.id}" arrived within ${Math.round(timeoutMs / 1000)} s`,
      ),
    );
    // The SDK's own exchange, with the PKCE verifier and the resource it discovered.
    await step("exchanging the code for a token", async () => {
      if (client) {
        await transport.finishAuth(code);
        return;
      }
      const result = await auth(provider, {
        ...authOptions(serverUrl, options.request),
        authorizationCode: code,
      });
      if (result !== "AUTHORIZED") throw new Error(`the code for "${row.id}" was not exchanged`);
    });
    const tokens = provider.savedTokens;
    if (!tokens) throw new Error(`the authorization server issued no tokens for "${row.id}"`);
    return { signedIn: true, credentials: provider.credentials(tokens) };
  } finally {
    await client?.close().catch(() => undefined);
    await listener.close();
  }
}

/** What the SDK's auth() is told of a refusal: its scope and resource metadata, if any. */
function authOptions(
  serverUrl: string,
  request: SignInRequest | undefined,
): Parameters<typeof auth>[1] {
  return {
    serverUrl,
    ...(request?.scope !== undefined ? { scope: request.scope } : {}),
    ...(request?.resourceMetadataUrl !== undefined
      ? { resourceMetadataUrl: new URL(request.resourceMetadataUrl) }
      : {}),
  };
}

/**
 * Dials as the daemon does (initialize, then the first page of tools/list, where servers
 * that let initialize through refuse): true when the SDK was sent to the browser.
 */
async function dialsThrough(
  client: Client,
  transport: StreamableHTTPClientTransport,
  provider: LoginProvider,
): Promise<boolean> {
  try {
    await client.connect(transport);
    if (client.getServerCapabilities()?.tools) await client.listTools();
    return false;
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || provider.authorizationUrl === undefined) {
      throw error;
    }
    return true;
  }
}

/** The interactive provider: in memory, for one flow; the daemon's store gets the result. */
class LoginProvider implements OAuthClientProvider {
  readonly stateValue = randomBytes(24).toString("base64url");
  authorizationUrl: URL | undefined;
  savedTokens: OAuthTokens | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #verifier: string | undefined;
  #discovered: RecordedIssuer | undefined;
  /** The issuer the person was sent to, recorded with the verifier (RFC 9207). */
  recordedIssuer: RecordedIssuer | undefined;
  /** Offered where the authorization server takes URL client ids (SEP-991); else DCR. */
  readonly clientMetadataUrl?: string;

  constructor(
    readonly redirectUrl: string,
    private readonly settings: ReturnType<typeof oauthSettings>,
  ) {
    if (settings.clientMetadataUrl !== undefined) {
      this.clientMetadataUrl = settings.clientMetadataUrl;
    }
  }

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
    this.recordedIssuer = this.#discovered;
  }

  /** Refuses metadata that names another issuer than it was fetched for (RFC 8414 §3.3). */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovered = checkedIssuer(state);
  }

  /** What was unusual about the authorization server's metadata, when something was. */
  get notice(): string | undefined {
    return this.#discovered?.notice;
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
    const notice = this.notice;
    return {
      tokens,
      ...(client ? { clientInformation: client } : {}),
      ...(notice !== undefined ? { notice } : {}),
      savedAt: Date.now(),
    };
  }
}

interface RedirectListener {
  redirectUrl: string;
  /** Resolves with the authorization code of the first redirect that carries our state. */
  code: Promise<string>;
  /** The state to wait for, and what makes its redirect a code (or throws why not). */
  expect(state: string, decide: (params: URLSearchParams) => string): void;
  close(): Promise<void>;
}

/** A listener on 127.0.0.1, a port of the kernel's choosing, for one redirect. */
async function listenForRedirect(): Promise<RedirectListener> {
  let expected: { state: string; decide(params: URLSearchParams): string } | undefined;
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
    if (expected === undefined || params.get("state") !== expected.state) {
      response.writeHead(400, { "content-type": "text/plain" }).end("unexpected sign-in state");
      return;
    }
    let received: string;
    try {
      received = expected.decide(params);
    } catch (error) {
      page(response, 400, "Sign-in failed. You can close this window.");
      settle?.reject(error as Error);
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
    expect: (state, decide) => (expected = { state, decide }),
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

/** What login and logout read of their command line. */
type LoginFlags = { "no-browser"?: boolean; force?: boolean };

/** Exit code of a login the daemon's state says is pointless: the server refuses every sign-in. */
const EXIT_GAVE_UP = 1;

/** `mcpool login ID [--no-browser] [--force]`: resolves with the exit code; throws for the CLI to report. */
export async function loginCommand(context: CommandContext<LoginFlags>): Promise<number> {
  const id = context.arg(0, "server ID");
  const { withClient } = context;
  // The row with its secrets (a configured client secret), from the daemon that will dial it.
  const state = await withClient(async (client) => {
    const found = (await client.state({ secrets: true })).find((s) => s.id === id);
    if (!found) throw new McpPoolError("unknown-server", `unknown server "${id}"`);
    return found;
  });
  const row = state.config as McpServerConfig;
  if (row.transport !== "http") {
    throw new McpPoolError(
      "invalid-arguments",
      `server "${id}" is a stdio server; only http servers sign in`,
    );
  }
  const force = context.flags.force === true;
  const early = withoutSignIn(id, row, state, force);
  if (early) {
    report(context, { id, status: state.status, ...errorOf(state) }, early.say);
    return early.code;
  }
  const needed = state.status === "auth-required";
  const result = await signIn(row, {
    openBrowser: context.flags["no-browser"] !== true,
    say: context.err,
    request: needed ? state.signIn : undefined,
    always: needed || force,
  });
  if (!result.signedIn) {
    report(
      context,
      { id, status: state.status, ...errorOf(state) },
      `"${id}" let mcpool in without a sign-in`,
    );
    return 0;
  }
  const { tokens, clientInformation, notice } = result.credentials;
  // The daemon stores the token and redials with it before it answers.
  const after = await withProgress(`connecting to "${id}"`, () =>
    withClient((client) =>
      client.storeCredentials(id, {
        tokens: { ...tokens },
        ...(clientInformation ? { clientInformation: { ...clientInformation } } : {}),
        ...(notice !== undefined ? { notice } : {}),
      }),
    ),
  );
  report(context, after, `signed in to "${id}"`);
  return after.status === "ready" || after.status === "idle" || after.status === "disabled" ? 0 : 1;
}

/**
 * When login has nothing to do, what it says, in the daemon's own words: a row with a
 * machine grant, a server that is up, one the daemon stopped asking for.
 */
function withoutSignIn(
  id: string,
  row: HttpServerConfig,
  state: ServerState,
  force: boolean,
): { say: string; code: number } | undefined {
  if (isMachineGrant(row)) {
    return {
      say: `"${id}" signs in by itself with ${typeof row.auth === "object" && row.auth.grant === "id-jag" ? "an ID-JAG for its IdP ID token" : "its client credentials"}; no login needed`,
      code: 0,
    };
  }
  if (force) return undefined;
  if (state.signIn?.exhausted) {
    return { say: `not signing in to "${id}"`, code: EXIT_GAVE_UP };
  }
  if (state.status === "ready" || state.status === "pin-mismatch") {
    return {
      say: `"${id}" needs no sign-in (\`mcpool login ${id} --force\` signs in again)`,
      code: 0,
    };
  }
  return undefined;
}

function errorOf(state: ServerState): { error?: string } {
  return state.error !== undefined ? { error: state.error } : {};
}

/** `mcpool logout ID`: the daemon forgets the sign-in and redials the server. */
export async function logoutCommand(context: CommandContext): Promise<number> {
  const id = context.arg(0, "server ID");
  const state = await context.withClient((client) => client.forgetCredentials(id));
  report(context, state, `signed out of "${id}"`);
  return 0;
}

function report(context: CommandContext, state: ServerAuthState, done: string): void {
  if (context.json) {
    context.out(JSON.stringify(state, null, 2));
    return;
  }
  context.out(`${done}; the server is ${state.status}${state.error ? `: ${state.error}` : ""}`);
}
