/**
 * A real OAuth-protected MCP server on 127.0.0.1 for tests: node:http with the SDK's
 * StreamableHTTPServerTransport behind a bearer check that answers 401 with
 * `WWW-Authenticate: Bearer resource_metadata=…`, its protected-resource metadata (RFC 9728),
 * and a tiny authorization server on the same origin: metadata (RFC 8414), dynamic client
 * registration (RFC 7591), /authorize that redirects straight back with a code (headless: no
 * person, no consent page), and /token with PKCE S256 verification, refresh and rotation.
 *
 * Every token starts with `tokenPrefix`, so a test can hunt for it in every output.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export interface OAuthServerOptions {
  /** Prefix of every access and refresh token: a canary. Default "tok". */
  tokenPrefix?: string;
  /** `expires_in` of access tokens, seconds. Default 3600. */
  accessTokenTtlS?: number;
  /** Answer 401 with no resource_metadata and publish no metadata: a plain API-key server. */
  plain401?: boolean;
  /** Issue no refresh tokens. */
  noRefresh?: boolean;
  /**
   * A machine client: /token also takes `grant_type=client_credentials` from it, proven
   * with client_secret_basic (SEP-1046). Its tokens come without refresh tokens.
   */
  machineClient?: { clientId: string; clientSecret: string };
  /**
   * A server as the 2025-03-26 revision discovered them: a bare `Bearer` challenge, no
   * protected-resource metadata, and authorization server metadata at the origin's root
   * naming the issuer `origin + legacyIssuerPath` (not the URL it is fetched from).
   */
  legacyIssuerPath?: string;
}

export interface OAuthServerStats {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  /** Tokens issued to the machine client. */
  clientCredentials: number;
  /** /mcp requests answered 401. */
  unauthorized: number;
  /** /mcp requests let through. */
  authorized: number;
}

export interface OAuthServer {
  /** The MCP endpoint. */
  url: string;
  origin: string;
  stats: OAuthServerStats;
  /** Refuses every access token issued so far; refresh tokens keep working. */
  expireAccessTokens(): void;
  /** Refuses every token issued so far, refresh tokens included. */
  revokeAll(): void;
  /** While true, /mcp answers a valid bearer with a 500 that quotes it (a careless server). */
  quoteBearer: boolean;
  close(): Promise<void>;
}

interface Client {
  redirectUris: string[];
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  resource: string | undefined;
}

function base64url(buffer: Buffer): string {
  return buffer.toString("base64url");
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(response: ServerResponse, status: number, value: unknown, headers = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(value));
}

function mcpServer(): Server {
  const server = new Server(
    { name: "oauth-fixture", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "whoami",
        description: "Says who the bearer is.",
        inputSchema: { type: "object", properties: {} },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: "text", text: `hello from ${request.params.name}` }],
  }));
  return server;
}

export async function startOAuthServer(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const prefix = options.tokenPrefix ?? "tok";
  const ttl = options.accessTokenTtlS ?? 3600;
  const clients = new Map<string, Client>();
  const codes = new Map<string, Grant>();
  const access = new Map<string, number>(); // token → expiry epoch ms
  const refresh = new Map<string, string>(); // token → client id
  const stats: OAuthServerStats = {
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    clientCredentials: 0,
    unauthorized: 0,
    authorized: 0,
  };
  let origin = "";
  // Filled in once listening; `handle` reads its flags per request.
  const served = { quoteBearer: false } as OAuthServer;
  const token = (kind: string): string => `${prefix}-${kind}-${base64url(randomBytes(12))}`;

  const issue = (clientId: string, refreshable = !options.noRefresh): Record<string, unknown> => {
    const accessToken = token("access");
    access.set(accessToken, Date.now() + ttl * 1000);
    const out: Record<string, unknown> = {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ttl,
    };
    if (refreshable) {
      const refreshToken = token("refresh");
      refresh.set(refreshToken, clientId);
      out.refresh_token = refreshToken;
    }
    return out;
  };

  const legacy = options.legacyIssuerPath;
  const challenge = (): string =>
    options.plain401 || legacy !== undefined
      ? "Bearer"
      : `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", origin);
    const path = url.pathname;
    if (!options.plain401 && request.method === "GET") {
      if (path === "/.well-known/oauth-protected-resource/mcp" && legacy === undefined) {
        return json(response, 200, {
          resource: `${origin}/mcp`,
          authorization_servers: [origin],
          bearer_methods_supported: ["header"],
        });
      }
      if (path === "/.well-known/oauth-authorization-server") {
        return json(response, 200, {
          issuer: `${origin}${legacy ?? ""}`,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          registration_endpoint: `${origin}/register`,
          response_types_supported: ["code"],
          grant_types_supported: [
            "authorization_code",
            "refresh_token",
            ...(options.machineClient ? ["client_credentials"] : []),
          ],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: [
            "none",
            ...(options.machineClient ? ["client_secret_basic"] : []),
          ],
        });
      }
    }
    if (!options.plain401 && request.method === "POST" && path === "/register") {
      const metadata = JSON.parse(await body(request)) as { redirect_uris?: string[] };
      // Not a secret (it travels in the authorization URL): no canary prefix.
      const clientId = `client-${++stats.registrations}`;
      clients.set(clientId, { redirectUris: metadata.redirect_uris ?? [] });
      return json(response, 201, {
        ...metadata,
        client_id: clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        token_endpoint_auth_method: "none",
      });
    }
    if (!options.plain401 && request.method === "GET" && path === "/authorize") {
      const q = url.searchParams;
      const clientId = q.get("client_id") ?? "";
      const redirectUri = q.get("redirect_uri") ?? "";
      const client = clients.get(clientId);
      if (!client || !client.redirectUris.includes(redirectUri)) {
        return json(response, 400, {
          error: "invalid_request",
          error_description: "unknown client or redirect_uri",
        });
      }
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
        return json(response, 400, {
          error: "invalid_request",
          error_description: "PKCE S256 required",
        });
      }
      stats.authorizations += 1;
      const code = base64url(randomBytes(16));
      codes.set(code, {
        clientId,
        redirectUri,
        challenge: q.get("code_challenge")!,
        resource: q.get("resource") ?? undefined,
      });
      const back = new URL(redirectUri);
      back.searchParams.set("code", code);
      const state = q.get("state");
      if (state !== null) back.searchParams.set("state", state);
      response.writeHead(302, { location: back.href });
      response.end();
      return;
    }
    if (!options.plain401 && request.method === "POST" && path === "/token") {
      const form = new URLSearchParams(await body(request));
      const grant = form.get("grant_type");
      if (grant === "authorization_code") {
        const code = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const computed = base64url(createHash("sha256").update(verifier).digest());
        if (
          !code ||
          code.clientId !== form.get("client_id") ||
          code.redirectUri !== form.get("redirect_uri") ||
          computed !== code.challenge
        ) {
          return json(response, 400, { error: "invalid_grant" });
        }
        stats.codeExchanges += 1;
        return json(response, 200, issue(code.clientId));
      }
      if (grant === "refresh_token") {
        const old = form.get("refresh_token") ?? "";
        const clientId = refresh.get(old);
        if (!clientId || clientId !== form.get("client_id")) {
          return json(response, 400, { error: "invalid_grant" });
        }
        refresh.delete(old); // rotation: a refresh token is good once
        stats.refreshes += 1;
        return json(response, 200, issue(clientId));
      }
      const machine = options.machineClient;
      if (grant === "client_credentials" && machine) {
        const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
        const [id, secret] = Buffer.from(basic, "base64").toString("utf8").split(":");
        if (decodeURIComponent(id ?? "") !== machine.clientId) {
          return json(response, 401, { error: "invalid_client" });
        }
        if (decodeURIComponent(secret ?? "") !== machine.clientSecret) {
          return json(response, 401, { error: "invalid_client" });
        }
        stats.clientCredentials += 1;
        return json(response, 200, issue(machine.clientId, false));
      }
      return json(response, 400, { error: "unsupported_grant_type" });
    }
    if (path === "/mcp") {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
      const expiry = bearer === undefined ? undefined : access.get(bearer);
      if (expiry === undefined || expiry <= Date.now()) {
        stats.unauthorized += 1;
        return json(response, 401, { error: "invalid_token" }, { "www-authenticate": challenge() });
      }
      stats.authorized += 1;
      if (served.quoteBearer) {
        return json(response, 500, { error: `internal error handling token ${bearer}` });
      }
      if (request.method !== "POST") {
        response.writeHead(405, { allow: "POST" }).end();
        return;
      }
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({}); // no sessionIdGenerator: stateless
      response.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
      return;
    }
    response.writeHead(404).end();
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error: String(error) });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return Object.assign(served, {
    url: `${origin}/mcp`,
    origin,
    stats,
    expireAccessTokens() {
      for (const key of access.keys()) access.set(key, 0);
    },
    revokeAll() {
      access.clear();
      refresh.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  });
}

/**
 * The SDK client's side of a sign-in, in memory, as an application using the SDK directly
 * writes it: registers, keeps the verifier and tokens, and records where it would send a
 * person (`authorizationUrl`) instead of opening a browser.
 */
export class InMemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = "";

  constructor(readonly redirectUrl: string) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "direct",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }
  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.#client = client;
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
}
