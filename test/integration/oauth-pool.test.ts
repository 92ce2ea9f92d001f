/**
 * OAuth through the pool, against a real loopback OAuth-protected MCP server: the
 * non-interactive provider (stored tokens, refresh through the SDK, auth-required when a
 * person is needed) and the interactive sign-in of `mcpool login`, completed headlessly by
 * fetching the authorization URL it prints.
 */
import { afterEach, describe, expect, it } from "vitest";
import { signIn } from "../../src/cli/commands/login.js";
import {
  McpPool,
  McpPoolError,
  memoryTokenStore,
  type HttpServerConfig,
  type PoolEvent,
  type StoredCredentials,
  type TokenStore,
} from "../../src/index.js";
import {
  startOAuthServer,
  type OAuthServer,
  type OAuthServerOptions,
} from "../helpers/oauth-server.js";
import { nextMatching } from "../helpers/processes.js";

const BOUND_MS = 10_000;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

async function server(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const started = await startOAuthServer({ tokenPrefix: "canary-oauth-pool", ...options });
  cleanups.push(() => started.close());
  return started;
}

/** A store that also tells the test what it holds. */
function observedStore(): TokenStore & { saved: StoredCredentials[] } {
  const inner = memoryTokenStore();
  const saved: StoredCredentials[] = [];
  return {
    saved,
    load: (key) => inner.load(key),
    save: (key, credentials) => {
      saved.push(credentials);
      return inner.save(key, credentials);
    },
    delete: (key) => inner.delete(key),
  };
}

function pool(store: TokenStore): McpPool {
  const created = new McpPool({
    clientName: "mcpool-test",
    log: {},
    connectTimeoutMs: BOUND_MS,
    tokenStore: store,
    // Long enough that no reconcile redials on its own during a test.
    crashBackoffMs: 60_000,
  });
  cleanups.push(() => created.close());
  return created;
}

function row(url: string, extra: Partial<HttpServerConfig> = {}): HttpServerConfig {
  return { id: "gh", transport: "http", url, ...extra };
}

/** The interactive sign-in, with the browser played by a fetch of the printed URL. */
async function headlessSignIn(config: HttpServerConfig): Promise<StoredCredentials> {
  const said: string[] = [];
  const result = await signIn(config, {
    openBrowser: false,
    timeoutMs: BOUND_MS,
    say: (line) => {
      said.push(line);
      const url = /https?:\/\/\S+/.exec(line)?.[0];
      // The authorization server redirects straight to the loopback listener.
      if (url) void fetch(url).then((response) => response.body?.cancel());
    },
  });
  expect(said.join("\n")).toContain("/authorize?");
  if (!result.signedIn) throw new Error("expected a sign-in");
  return result.credentials;
}

async function refusal(promise: Promise<unknown>): Promise<McpPoolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(McpPoolError);
    return error as McpPoolError;
  }
  throw new Error("expected a refusal");
}

describe("OAuth for http rows", () => {
  it("says auth-required, with an event and a coded error naming `mcpool login`, when no one has signed in", async () => {
    const remote = await server();
    const p = pool(memoryTokenStore());
    const events: PoolEvent[] = [];
    p.onEvent((event) => events.push(event));
    // No `auth` field: the 401 with protected-resource metadata is enough.
    await p.sync([row(remote.url)]);
    const [state] = p.state();
    expect(state?.status).toBe("auth-required");
    expect(state?.error).toContain("mcpool login gh");
    expect(events).toContainEqual({
      type: "auth-required",
      serverId: "gh",
      error: expect.stringContaining("mcpool login gh") as string,
    });
    expect(events.some((e) => e.type === "connect-failed")).toBe(false);
    const refused = await refusal(p.call("gh__whoami"));
    expect(refused.code).toBe("auth-required");
    expect(refused.message).toContain("`mcpool login gh`");
    const probed = await p.probe(row(remote.url));
    expect(probed).toMatchObject({ ok: false, error: expect.stringContaining("mcpool login gh") });
    // Nothing was registered: registering is the interactive half's business.
    expect(remote.stats.registrations).toBe(0);
  });

  it("connects with what an interactive sign-in stored, and keeps it per server url", async () => {
    const remote = await server();
    const store = observedStore();
    const p = pool(store);
    await p.sync([row(remote.url)]);
    expect(p.state()[0]?.status).toBe("auth-required");

    const credentials = await headlessSignIn(row(remote.url));
    expect(remote.stats).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    expect(credentials.tokens?.access_token).toMatch(/^canary-oauth-pool-access-/);
    expect(credentials.clientInformation?.client_id).toMatch(/^client-/);

    const state = await p.storeCredentials("gh", credentials);
    expect(state).toEqual({ id: "gh", status: "ready" });
    expect(await p.call("gh__whoami")).toBe("hello from whoami");
    expect(await p.probe(row(remote.url))).toMatchObject({ ok: true, tools: [{ name: "whoami" }] });
    // A second row on the same url shares the sign-in.
    await p.sync([row(remote.url), row(remote.url, { id: "gh2" })]);
    expect(await p.call("gh2__whoami")).toBe("hello from whoami");
  });

  it("refreshes an expired access token through the SDK and stores the new one", async () => {
    const remote = await server();
    const store = observedStore();
    const p = pool(store);
    await p.sync([row(remote.url, { auth: "oauth" })]);
    await p.storeCredentials("gh", await headlessSignIn(row(remote.url)));
    const first = store.saved.at(-1)?.tokens?.access_token;

    remote.expireAccessTokens();
    expect(await p.call("gh__whoami")).toBe("hello from whoami");
    expect(remote.stats.refreshes).toBe(1);
    const refreshed = store.saved.at(-1)?.tokens;
    expect(refreshed?.access_token).toMatch(/^canary-oauth-pool-access-/);
    expect(refreshed?.access_token).not.toBe(first);
    // Stamped with the authorization server it came from, as the SDK asks.
    expect(refreshed?.issuer).toContain(remote.origin);
    expect(p.state()[0]?.status).toBe("ready");
  });

  it("turns a refused refresh mid-session into auth-required, and a new sign-in brings it back", async () => {
    const remote = await server();
    const p = pool(memoryTokenStore());
    await p.sync([row(remote.url)]);
    await p.storeCredentials("gh", await headlessSignIn(row(remote.url)));
    const lost = nextMatching<PoolEvent>(
      (listener) => p.onEvent(listener),
      (event) => event.type === "auth-required",
      BOUND_MS,
    );
    const closed = nextMatching<PoolEvent>(
      (listener) => p.onEvent(listener),
      (event) => event.type === "close",
      BOUND_MS,
    );
    remote.revokeAll();
    const refused = await refusal(p.call("gh__whoami"));
    expect(refused.code).toBe("auth-required");
    await lost;
    expect(p.state()[0]?.status).toBe("auth-required");
    // Its tools went with the session: the close does not say they stay offered.
    expect(await closed).toEqual({ type: "close", serverId: "gh", reason: "reconnect" });
    expect(p.tools()).toEqual([]);
    // Until someone signs in, a call is refused at once with the same code, not `backoff`.
    expect((await refusal(p.call("gh__whoami"))).code).toBe("auth-required");

    const state = await p.storeCredentials("gh", await headlessSignIn(row(remote.url)));
    expect(state.status).toBe("ready");
    expect(await p.call("gh__whoami")).toBe("hello from whoami");
  });

  it("forgets a sign-in on forgetCredentials and reports auth-required again", async () => {
    const remote = await server();
    const p = pool(memoryTokenStore());
    await p.sync([row(remote.url)]);
    await p.storeCredentials("gh", await headlessSignIn(row(remote.url)));
    expect(p.state()[0]?.status).toBe("ready");
    expect(await p.forgetCredentials("gh")).toEqual({
      id: "gh",
      status: "auth-required",
      error: expect.stringContaining("mcpool login gh") as string,
    });
  });

  it("redacts the OAuth token from what a careless server quotes back in an error", async () => {
    const remote = await server();
    const store = observedStore();
    const p = pool(store);
    await p.sync([row(remote.url)]);
    await p.storeCredentials("gh", await headlessSignIn(row(remote.url)));
    const token = store.saved.at(-1)?.tokens?.access_token ?? "";
    expect(token).toMatch(/^canary-oauth-pool-access-/);
    remote.quoteBearer = true;
    const events: PoolEvent[] = [];
    p.onEvent((event) => events.push(event));
    await p.reconnect("gh").catch(() => undefined);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toContain("[redacted]");
    expect(JSON.stringify([state, events])).not.toContain(token);
  });

  it("treats a 401 without protected-resource metadata as a connect failure, unless the row says oauth", async () => {
    const remote = await server({ plain401: true });
    const p = pool(memoryTokenStore());
    await p.sync([row(remote.url)]);
    const [state] = p.state();
    expect(state?.status).toBe("error");
    expect(state?.error).toContain("protected-resource metadata");
    await p.sync([row(remote.url, { auth: "oauth" })]);
    expect(p.state()[0]?.status).toBe("auth-required");
  });

  it("refuses credentials without an access token and rows that cannot sign in", async () => {
    const remote = await server();
    const p = pool(memoryTokenStore());
    await p.sync([
      row(remote.url),
      { id: "local", transport: "stdio", command: "true", enabled: false },
    ]);
    expect(
      (await refusal(p.storeCredentials("gh", { tokens: { token_type: "Bearer" } }))).code,
    ).toBe("invalid-arguments");
    expect((await refusal(p.storeCredentials("local", { tokens: {} }))).code).toBe(
      "invalid-arguments",
    );
    expect((await refusal(p.forgetCredentials("nope"))).code).toBe("unknown-server");
  });
});
