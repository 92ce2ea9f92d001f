/**
 * OAuth without I/O: the row's `auth` field (validation, secrets, sameConnection, mcp.json)
 * and the non-interactive provider's decisions over an in-memory store.
 */
import { describe, expect, it } from "vitest";
import { parseMcpJson } from "../../src/config/mcp-json.js";
import { withoutSecrets, type HttpServerConfig } from "../../src/config/rows.js";
import { sameConnection } from "../../src/config/same-connection.js";
import { validateServerConfig } from "../../src/config/validate.js";
import { httpStatusFor } from "../../src/pool/core/errors.js";
import {
  AuthRequiredError,
  credentialsKey,
  memoryTokenStore,
  NON_INTERACTIVE_REDIRECT_URL,
  NotOAuthError,
  parseCredentials,
  storedAuthProvider,
} from "../../src/pool/auth/oauth.js";

const row = (extra: Partial<HttpServerConfig> = {}): HttpServerConfig => ({
  id: "gh",
  transport: "http",
  url: "https://mcp.example.com/mcp",
  ...extra,
});

const tokens = { access_token: "at-123", token_type: "Bearer", refresh_token: "rt-456" };

describe("the auth field of an http row", () => {
  it('accepts "oauth" and a client, and says what is wrong otherwise without quoting a secret', () => {
    expect(validateServerConfig(row({ auth: "oauth" }))).toEqual([]);
    expect(
      validateServerConfig(
        row({ auth: { clientId: "id", clientSecret: "s3cret", scopes: ["a"] } }),
      ),
    ).toEqual([]);
    const problems = [
      ...validateServerConfig({ ...row(), auth: "basic" }),
      ...validateServerConfig({ ...row(), auth: { clientSecret: "s3cret-value", scope: "a" } }),
      ...validateServerConfig({ ...row(), auth: { clientId: 7, scopes: "a b" } }),
      ...validateServerConfig({ id: "x", transport: "stdio", command: "x", auth: "oauth" }),
    ];
    expect(problems).toEqual([
      expect.stringContaining('`auth` must be "oauth" or an object'),
      "`auth.scope` is not an OAuth setting; use grant, clientId, clientSecret, clientMetadataUrl, privateKey, privateKeyFile, algorithm, issuer, idToken, idpTokenEndpoint, idpClientId, idpClientSecret, scopes",
      "`auth.clientSecret` needs the `auth.clientId` it belongs to",
      "`auth.clientId` must be a non-empty string, got a number",
      "`auth.scopes` must be an array of strings, got a string",
      "a stdio row carries no `auth`",
    ]);
    expect(problems.join("\n")).not.toContain("s3cret");
  });

  it("keeps the client secret out of a row without secrets, and the rest in", () => {
    const bare = withoutSecrets(
      row({ auth: { clientId: "id", clientSecret: "s3cret", scopes: ["a"] } }),
    );
    expect(bare).toEqual(row({ auth: { clientId: "id", scopes: ["a"] } }));
    expect(withoutSecrets(row({ auth: "oauth" }))).toEqual(row({ auth: "oauth" }));
  });

  it("restarts a server whose OAuth settings changed, not one whose equal settings were rewritten", () => {
    expect(sameConnection(row({ auth: "oauth" }), row({ auth: "oauth" }))).toBe(true);
    expect(sameConnection(row(), row({ auth: "oauth" }))).toBe(false);
    expect(
      sameConnection(
        row({ auth: { clientId: "a", scopes: ["x"] } }),
        row({ auth: { clientId: "a", scopes: ["x"] } }),
      ),
    ).toBe(true);
    expect(sameConnection(row({ auth: { clientId: "a" } }), row({ auth: { clientId: "b" } }))).toBe(
      false,
    );
  });

  it("reads `auth` from mcp.json for http servers", () => {
    const { rows, problems } = parseMcpJson(
      JSON.stringify({
        mcpServers: {
          gh: { type: "http", url: "https://mcp.example.com/mcp", auth: { clientId: "id" } },
        },
      }),
    );
    expect(problems).toEqual([]);
    expect(rows[0]).toMatchObject({ id: "gh", auth: { clientId: "id" } });
  });

  it("answers auth-required with HTTP 401", () => {
    expect(httpStatusFor("auth-required")).toBe(401);
  });
});

describe("the non-interactive provider", () => {
  it("names a redirect URI (so the SDK refreshes) but never starts an authorization", async () => {
    const told: string[] = [];
    const provider = storedAuthProvider({
      row: row(),
      store: memoryTokenStore(),
      onAuthRequired: () => told.push("auth-required"),
    });
    expect(String(provider.redirectUrl)).toBe(NON_INTERACTIVE_REDIRECT_URL);
    expect(await provider.tokens()).toBeUndefined();
    // Nothing stored and nothing configured: registering would be interactive business.
    await expect(provider.clientInformation()).rejects.toBeInstanceOf(AuthRequiredError);
    expect(() => provider.redirectToAuthorization(new URL("https://as.example/authorize"))).toThrow(
      "run `mcpool login gh`",
    );
    expect(told.length).toBeGreaterThanOrEqual(1);
  });

  it("reads and writes through the store under the server's url, and forgets only what the SDK asks", async () => {
    const store = memoryTokenStore();
    const key = credentialsKey("https://mcp.example.com/mcp");
    await store.save(key, { tokens, clientInformation: { client_id: "dyn" } });
    const provider = storedAuthProvider({ row: row(), store });
    expect(await provider.tokens()).toEqual(tokens);
    expect(await provider.clientInformation()).toEqual({ client_id: "dyn" });
    await provider.saveTokens({ ...tokens, access_token: "at-789" });
    expect((await store.load(key))?.tokens?.access_token).toBe("at-789");
    await provider.invalidateCredentials?.("tokens");
    expect(await store.load(key)).toEqual({ clientInformation: { client_id: "dyn" } });
    await provider.invalidateCredentials?.("all");
    expect(await store.load(key)).toBeUndefined();
  });

  it("prefers the configured client over a registration left by another configuration", async () => {
    const store = memoryTokenStore();
    await store.save(credentialsKey(row().url), { clientInformation: { client_id: "old" } });
    const provider = storedAuthProvider({
      row: row({ auth: { clientId: "cfg", clientSecret: "s3cret" } }),
      store,
    });
    expect(await provider.clientInformation()).toEqual({
      client_id: "cfg",
      client_secret: "s3cret",
    });
    expect(provider.clientMetadata.token_endpoint_auth_method).toBe("client_secret_basic");
  });

  it("registers as a native application, a CLI with a loopback redirect (SEP-837)", () => {
    const provider = storedAuthProvider({ row: row(), store: memoryTokenStore() });
    expect(provider.clientMetadata).toMatchObject({ application_type: "native" });
  });

  it("takes OAuth for a row without `auth` only from a server that publishes resource metadata", async () => {
    const flagless = storedAuthProvider({ row: row(), store: memoryTokenStore() });
    await expect(
      flagless.saveDiscoveryState?.({ authorizationServerUrl: "https://mcp.example.com/" }),
    ).rejects.toThrow(NotOAuthError);
    await expect(
      flagless.saveDiscoveryState?.({
        authorizationServerUrl: "https://as.example.com/",
        resourceMetadata: { resource: "https://mcp.example.com/mcp" },
      }),
    ).resolves.toBeUndefined();
    const explicit = storedAuthProvider({ row: row({ auth: "oauth" }), store: memoryTokenStore() });
    await expect(
      explicit.saveDiscoveryState?.({ authorizationServerUrl: "https://mcp.example.com/" }),
    ).resolves.toBeUndefined();
  });

  it("keys credentials by the url without its fragment, and checks what a sign-in hands over", () => {
    expect(credentialsKey("https://MCP.example.com/mcp#x")).toBe("https://mcp.example.com/mcp");
    expect(parseCredentials("gh", { tokens, clientInformation: { client_id: "c" } })).toMatchObject(
      {
        tokens,
        clientInformation: { client_id: "c" },
      },
    );
    expect(() => parseCredentials("gh", { tokens: { token_type: "Bearer" } })).toThrow(
      /no valid OAuth tokens/,
    );
    expect(() =>
      parseCredentials("gh", { tokens, clientInformation: { client_secret: "x" } }),
    ).toThrow(/client registration/);
  });
});
