/**
 * Server rows: what a configured MCP server is, as data (SPEC A1).
 *
 * A row is a discriminated union on `transport`; each arm carries only its own fields.
 * This module is browser-safe: it imports nothing from Node or the MCP SDK.
 */
import type { ToolHook } from "./hooks.js";
import type { ConversationRowOptions, SessionMode } from "./conversation.js";

/** Options every row may carry, whatever its transport. */
export interface ServerOptions {
  /** Unique, stable identifier. Also the default slug and label. */
  id: string;
  /** Prefix of the qualified tool names (`<slug>__<tool>`). Defaults to `id`. */
  slug?: string;
  /** Human-readable name, used in descriptions (`[Label] …`). Defaults to `id`. */
  label?: string;
  /** A disabled row is registered but never started. Default `true`. */
  enabled?: boolean;
  /** Connect budget in ms over initialize plus every tools/list page. Overrides the pool's. */
  connectTimeoutMs?: number | null;
  /** Per-call timeout in ms. Overrides the pool's; read at call time. */
  callTimeoutMs?: number | null;
  /** Probe budget in ms; a row's `connectTimeoutMs` outranks the pool's `probeTimeoutMs`. */
  probeTimeoutMs?: number | null;
  /** Cap on the characters `call()` returns for this server; 0 means no cap. */
  maxResultChars?: number | null;
  /**
   * MB of resident memory the server's process group may hold: over it in two samples in a
   * row, it is replaced gracefully (SPEC G5). Overrides the pool's; 0 means no limit.
   */
  maxMemoryMb?: number | null;
  /** Tools (by the server's own names) left out of tools() and catalog(); read at call time. */
  hiddenTools?: string[];
  /** Tools (by the server's own names) an agent should load from the first turn. */
  alwaysLoad?: string[];
  /** Believe the server's readOnlyHint / idempotentHint annotations. Default false. */
  trustAnnotations?: boolean;
  /** Whether arguments are coerced against the tool's input schema. Default: the pool's. */
  coerceArguments?: boolean;
  /** Close the connection after this many ms without a use; 0 opts out. */
  idleTimeoutMs?: number | null;
  /** Register without dialling; the first use starts it. Default: the pool's. */
  lazy?: boolean;
  /** Tool calls the host makes at points in a session (SPEC C17); see validateHooks. */
  hooks?: ToolHook[];
  /**
   * The toolsFingerprint a person approved (SPEC C18), written by `mcpool approve`. While
   * the live list hashes to something else, the server's tools are withheld. Read at
   * reconcile and call time: editing it never restarts the server.
   */
  pin?: string;
  /** `conversation`: a client of its own per caller-named identity (SPEC B9). Default `shared`. */
  session?: SessionMode;
  /** Budgets and rules of a `session: "conversation"` row; see ConversationRowOptions. */
  conversation?: ConversationRowOptions;
}

export interface StdioServerConfig extends ServerOptions {
  transport: "stdio";
  command: string;
  args?: string[];
  /** Variables added to the child's environment. Secret: left out of state() by default. */
  env?: Record<string, string>;
  /** Working directory of the child; absent inherits this process's. */
  cwd?: string;
}

export interface HttpServerConfig extends ServerOptions {
  transport: "http";
  /** Streamable HTTP endpoint: https anywhere, http only to loopback. */
  url: string;
  /** Headers sent with every request. Secret: left out of state() by default. */
  headers?: Record<string, string>;
  /**
   * OAuth sign-in (the MCP authorization spec): `"oauth"` with a dynamically registered
   * client, or the client to use. Absent, a server that answers 401 with protected-resource
   * metadata still gets it. Tokens are never here: they live in the daemon's token store.
   */
  auth?: "oauth" | OAuthClientSettings;
}

/**
 * The OAuth client of an http row, when it does not register one dynamically. Every string
 * may hold `${VAR}` placeholders, expanded when the server is dialled (like header values).
 */
export interface OAuthClientSettings {
  /**
   * `authorization_code` (the default): a person signs in with `mcpool login`.
   * `client_credentials`: a machine-to-machine grant the daemon makes by itself, with
   * `clientSecret` (client_secret_basic) or a private key (private_key_jwt, RFC 7523).
   * `id-jag`: enterprise-managed authorization (SEP-990), also by itself: `idToken`, an
   * ID token from the enterprise's IdP, is exchanged at `idpTokenEndpoint` for an Identity
   * Assertion JWT Authorization Grant (RFC 8693), which this client, proving itself as for
   * `client_credentials`, presents to the server's authorization server (RFC 7523 jwt-bearer).
   */
  grant?: OAuthGrant;
  /** A client registered with the authorization server beforehand. Absent: dynamic registration. */
  clientId?: string;
  /** Its secret, for a confidential client. Secret: left out of state() by default. */
  clientSecret?: string;
  /**
   * The https URL of this client's metadata document (SEP-991), used as its client id by an
   * authorization server that takes those; others get dynamic registration.
   */
  clientMetadataUrl?: string;
  /** PEM (PKCS#8) key that signs private_key_jwt assertions. Secret, like `clientSecret`. */
  privateKey?: string;
  /** A file holding that PEM key, read at dial time; the path itself is not secret. */
  privateKeyFile?: string;
  /** The JWS algorithm of the assertions (`ES256`, `RS256`…). Default: from the key's type. */
  algorithm?: string;
  /** The authorization server machine credentials may be sent to; absent: the one the server names. */
  issuer?: string;
  /** `id-jag`: the IdP's ID token for the user. Secret, like `clientSecret`; usually `${VAR}`. */
  idToken?: string;
  /** `id-jag`: the IdP's token endpoint, where the ID token is exchanged for an ID-JAG. */
  idpTokenEndpoint?: string;
  /** `id-jag`: this client's id at the IdP, when the IdP wants one for the exchange. */
  idpClientId?: string;
  /** `id-jag`: its secret at the IdP (client_secret_basic). Secret, like `clientSecret`. */
  idpClientSecret?: string;
  /** Scopes to ask for when neither the server's challenge nor its metadata name any. */
  scopes?: string[];
}

/** The OAuth grants a row may use. */
export type OAuthGrant = "authorization_code" | "client_credentials" | "id-jag";

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export type Transport = McpServerConfig["transport"];

/** The slug a row's tools are qualified with: its own, else its id. */
export function slugOf(row: Pick<ServerOptions, "id" | "slug">): string {
  return row.slug !== undefined && row.slug !== "" ? row.slug : row.id;
}

/** The label a row is shown with: its own, else its id. */
export function labelOf(row: Pick<ServerOptions, "id" | "label">): string {
  return row.label !== undefined && row.label !== "" ? row.label : row.id;
}

/** Whether a row should ever be started. */
export function isEnabled(row: Pick<ServerOptions, "enabled">): boolean {
  return row.enabled !== false;
}

/**
 * A copy of a row without its secrets (`env`, `headers`, and in `auth` the client secret,
 * private key, ID token and IdP client secret).
 */
export function withoutSecrets(row: McpServerConfig): McpServerConfig {
  if (row.transport === "stdio") {
    const { env: _env, ...rest } = row;
    return rest;
  }
  const { headers: _headers, auth, ...rest } = row;
  if (typeof auth === "object") {
    const {
      clientSecret: _secret,
      privateKey: _key,
      idToken: _idToken,
      idpClientSecret: _idpSecret,
      ...client
    } = auth;
    return { ...rest, auth: client };
  }
  return auth === undefined ? rest : { ...rest, auth };
}
