/**
 * A server row and its hooks, declared once: what a config file says, what
 * state() copies into ServerState.config and what `pool/runHooks` carries. The config's
 * browser-safe entry (src/config: rows.ts, hooks.ts) re-exports these types beside the
 * functions that read and check them; shapes.ts re-exports them for the wire.
 */
import type { ConversationRowOptions, SessionMode } from "./conversation-shapes.js";

/** A row's `protocol`: found per server, or pinned to one era. */
export type ProtocolPin = "auto" | "legacy" | "2026-07-28";

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
   * row, it is replaced gracefully. Overrides the pool's; 0 means no limit.
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
  /** Tool calls the host makes at points in a session; see validateHooks. */
  hooks?: ToolHook[];
  /**
   * The toolsFingerprint a person approved: 64 hex characters, written by
   * `mcpool approve`. While the live list hashes to something else, the server's tools are
   * withheld. Read at reconcile and call time: editing it never restarts the server.
   */
  pin?: string;
  /**
   * Which era of MCP the server is spoken to in: `auto` (the default) finds it
   * once and remembers it; `legacy` (initialize, 2025-11-25 and earlier) or `2026-07-28`
   * pins it, and a server that speaks the other fails to connect, saying so.
   */
  protocol?: ProtocolPin;
  /** `conversation`: a client of its own per caller-named identity. Default `shared`. */
  session?: SessionMode;
  /** Budgets and rules of a `session: "conversation"` row; see ConversationRowOptions. */
  conversation?: ConversationRowOptions;
}

export interface StdioServerConfig extends ServerOptions {
  transport: "stdio";
  command: string;
  args?: string[];
  /** Variables added to the child's environment. Secret: only in `state({ secrets: true })`. */
  env?: Record<string, string>;
  /** Working directory of the child; absent inherits the daemon's. */
  cwd?: string;
}

export interface HttpServerConfig extends ServerOptions {
  transport: "http";
  /** Streamable HTTP endpoint: https anywhere, http only to loopback. */
  url: string;
  /** Headers sent with every request. Secret: only in `state({ secrets: true })`. */
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
 * Its secrets (client secret, key, ID token, IdP client secret) are only in
 * `state({ secrets: true })`.
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
  /** Its secret, for a confidential client. Secret. */
  clientSecret?: string;
  /**
   * The https URL of this client's metadata document (SEP-991), used as its client id by an
   * authorization server that takes those; others get dynamic registration.
   */
  clientMetadataUrl?: string;
  /** PEM (PKCS#8) key that signs private_key_jwt assertions. Secret. */
  privateKey?: string;
  /** A file holding that PEM key, read at dial time; the path itself is not secret. */
  privateKeyFile?: string;
  /** The JWS algorithm of the assertions (`ES256`, `RS256`…). Default: from the key's type. */
  algorithm?: string;
  /** The authorization server machine credentials may be sent to; absent: the one the server names. */
  issuer?: string;
  /** `id-jag`: the IdP's ID token for the user. Secret; usually `${VAR}`. */
  idToken?: string;
  /** `id-jag`: the IdP's token endpoint, where the ID token is exchanged for an ID-JAG. */
  idpTokenEndpoint?: string;
  /** `id-jag`: this client's id at the IdP, when the IdP wants one for the exchange. */
  idpClientId?: string;
  /** `id-jag`: its secret at the IdP (client_secret_basic). Secret. */
  idpClientSecret?: string;
  /** Scopes to ask for when neither the server's challenge nor its metadata name any. */
  scopes?: string[];
}

/**
 * The OAuth grants a row may use. `client_credentials` and `id-jag` (SEP-990
 * enterprise-managed authorization) are made by the daemon itself, with no person signing in.
 */
export type OAuthGrant = "authorization_code" | "client_credentials" | "id-jag";

/** A server row, as configured: a union on `transport`, each arm with only its own fields. */
export type ServerRow = StdioServerConfig | HttpServerConfig;

/** Every point in a session a hook can run at (src/config's HOOK_EVENTS lists them in order). */
export type HookEvent =
  "sessionStart" | "beforeTurn" | "afterTurn" | "beforeCompact" | "sessionEnd" | "sessionDelete";

/** One hook on a row: a tool call the host makes at an event. */
export interface ToolHook {
  /** Unique among the row's hooks; outcomes carry it. */
  id: string;
  on: HookEvent;
  /** The tool to call, by the server's own name. Hidden tools may be called. */
  tool: string;
  /**
   * The tool's arguments. A string that is exactly `"{{path}}"` becomes the value itself;
   * `{{path}}` inside a longer string is interpolated as text. A path the context has no
   * value for skips the hook.
   */
  args?: Record<string, unknown>;
  /** What the tool returns goes into contextBlocks. Only on sessionStart and beforeTurn. */
  inject?: boolean;
  /** The tool may ask for the compaction not to happen. Only on beforeCompact. */
  veto?: boolean;
  /** Cap on this hook's block in contextBlocks, tokens. Default 1000. */
  maxTokens?: number;
  /** Bound on the hook, waking its server included, ms. Default 3000 where someone waits, else 60000. */
  timeoutMs?: number;
}

/** What a host knows at an event; hook templates read it by dotted path. */
export interface HookContext {
  session: { id: string };
  /** The host's name. */
  host?: string;
  /** ISO time; the runner fills it in when absent. */
  now?: string;
  /** Anything else the host wants templates to see, as `{{vars.name}}`. */
  vars?: Record<string, unknown>;
  prompt?: string;
  reply?: string;
  turn?: { index?: number; messages?: unknown[] };
  /** What is about to be summarised away. */
  compacting?: unknown;
  range?: { from?: number; through?: number };
  /** How a run ended. */
  status?: string;
}

/** Why a hook came back without an answer. */
export type HookFailure = "failed" | "timeout" | "aborted" | "skipped";

/** One hook's result. A runner never throws; every failure is one of these with `ok: false`. */
export interface HookOutcome {
  /** The hook's id. */
  hook: string;
  serverId: string;
  /** The row's label: the `source` of its context block. */
  label: string;
  event: HookEvent;
  /** The qualified tool name. */
  tool: string;
  ok: boolean;
  /** What the tool returned; for a veto, its reason when it gave one. */
  text?: string;
  /** Only when not ok. */
  reason?: HookFailure;
  /** Only when not ok: what went wrong, for a person. */
  error?: string;
  /** The pool's refusal code, when the pool refused or the tool failed. */
  code?: string;
  /** The row asked for the text to be injected, on an event that allows it. */
  inject: boolean;
  /** The hook's own contextBlocks cap, tokens, when it set one. */
  maxTokens?: number;
  /** Only beside `ok: true`, only on beforeCompact, only when the row grants it. */
  veto?: true;
  ms: number;
}
