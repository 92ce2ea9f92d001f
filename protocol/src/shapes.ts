/**
 * The data that crosses the socket, declared once: the pool's public shapes (state(),
 * tools(), call(), probe(), onEvent() hand out exactly these; src/pool/core/types.ts re-exports
 * them), and the server row and hooks of row-shapes.ts, re-exported. Plain data only, so
 * the daemon sends every one of them unchanged.
 */
import type { ServerResources } from "./observe-shapes.js";
import type { ConversationEvent, ConversationStats } from "./conversation-shapes.js";
import type { ErrorCode } from "./errors.js";
import type { ServerRow } from "./row-shapes.js";

export type { ToolDefinition } from "./tool-definition.js";

export type {
  HookContext,
  HookEvent,
  HookFailure,
  HookOutcome,
  HttpServerConfig,
  OAuthClientSettings,
  OAuthGrant,
  ProtocolPin,
  ServerOptions,
  ServerRow,
  StdioServerConfig,
  ToolHook,
} from "./row-shapes.js";

/** What describe() says of one tool: what an OpenAI definition has no room for. */
export interface ToolDescription {
  /** The qualified name. */
  name: string;
  serverId: string;
  /** The server's own name for the tool. */
  toolName: string;
  title?: string;
  description?: string;
  /** The server's claims, as it sent them; untrusted. */
  annotations?: ToolAnnotations;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** The tool's `_meta`. */
  meta?: Record<string, unknown>;
  /** The tool's `icons` (each `{ src, mimeType?, sizes?, theme? }`), as the server sent them. */
  icons?: Record<string, unknown>[];
  /** The tool's `execution` (e.g. `{ taskSupport }`), as the server sent it. */
  execution?: Record<string, unknown>;
  tokens: number;
  /** The row hides it; only described when asked with `hidden: true`. */
  hidden?: boolean;
}

/**
 * `pin-mismatch`: the live tools differ from the row's `pin` and are withheld.
 * `auth-required`: the server wants an OAuth sign-in nobody has done (`mcpool login ID`).
 */
export type ServerStatus =
  | "ready"
  | "connecting"
  | "idle"
  | "disabled"
  | "error"
  | "crash-loop"
  | "pin-mismatch"
  | "auth-required"
  /** A call timed out and a ping went unanswered: the server is being replaced. */
  | "unresponsive"
  /**
   * A remote (http) row whose address answers nothing: refused, no such host, a TLS
   * certificate refused, a connect timeout. `error` names the cause by its code;
   * `retryAt` is the next attempt. `crash-loop` is for child processes.
   */
  | "unreachable";

/**
 * A tool's annotations, as the server sent them and the SDK parsed them: an optional field
 * may hold undefined (the SDK's zod-inferred type), which JSON leaves out on the wire.
 */
export interface ToolAnnotations {
  title?: string | undefined;
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
}

/** One tool as state() reports it: both of its names. */
export interface ToolState {
  /** The server's own name for the tool. */
  name: string;
  /** `<slug>__<name>`: what the model is offered and what call() takes. */
  qualified: string;
  description?: string;
  title?: string;
  annotations?: ToolAnnotations;
  /** Left out of tools() and catalog() by the row's `hiddenTools`. */
  hidden: boolean;
  /** Left out everywhere because another server holds the name. */
  clashed?: boolean;
  /** Estimated tokens its definition costs to send, while the index holds it. */
  tokens?: number;
}

/** What a server says of itself in a handshake: who it is, what it offers, how to use it. */
export interface ServerFace {
  serverInfo?: { name: string; version: string; title?: string; [key: string]: unknown };
  capabilities?: Record<string, unknown>;
  instructions?: string;
}

export interface ServerState {
  id: string;
  slug: string;
  label: string;
  /** A copy of the row; `env` and `headers` only with `state({ secrets: true })`. */
  config: ServerRow;
  status: ServerStatus;
  /** Why the server is at `error` / `crash-loop` / `unreachable`, with the stderr tail or the cause. */
  error?: string;
  /** For `error`, `crash-loop` and `unreachable`: epoch ms of the next attempt; nothing is dialled before. */
  retryAt?: number;
  /** The child's pid, while a stdio connection is up, or while it is starting. */
  pid?: number;
  /** While it is starting (`connecting`): since when, epoch ms. */
  startingSince?: number;
  /** Epoch ms the current connection was made. */
  startedAt?: number;
  /** Calls in flight on the current connection, when there are any. */
  inflight?: number;
  instructions?: string;
  capabilities?: Record<string, unknown>;
  /**
   * The server's own `serverInfo` (name, version, and title, icons, websiteUrl where it
   * gives them), from its initialize answer or its discover `_meta`, while connected.
   */
  serverInfo?: { name: string; version: string; title?: string; [key: string]: unknown };
  /**
   * The era of MCP the current connection speaks and the revision it named:
   * `legacy` with the handshake's version (`2025-11-25`…), or `modern` with `2026-07-28`.
   * While no connection is up, the era last found, if one is known (no version then).
   */
  era?: "legacy" | "modern";
  protocolVersion?: string;
  toolsFingerprint?: string;
  /**
   * The cache hint a 2026-07-28 server gave its tool list: its `scope`, its `ttlMs` as
   * given (0 included), and `expiresAt`, the epoch ms after which the next listing or call
   * lists it again (none is sent by a timer). Absent when the server gave none of them.
   */
  toolsCache?: { scope?: "public" | "private"; ttlMs?: number; expiresAt?: number };
  /** At `pin-mismatch`: how the list differs from the approved one, when that one is known. */
  pinDiff?: PinDiff;
  /** The list is the last one known, not a live one. */
  stale?: boolean;
  tools: ToolState[];
  /** A `session: "conversation"` row's clients, endings and operations: counts only. */
  conversations?: ConversationStats;
  /** At `auth-required`: what `mcpool login` should ask for. */
  signIn?: SignInRequest;
  /**
   * What was unusual about the last sign-in, in a sentence: an authorization server whose
   * metadata names another issuer than the URL it was fetched from, say.
   */
  signInNotice?: string;
  /**
   * The children that serve hosts with other capabilities or roots than the pool's, live
   * or starting; absent when there are none.
   */
  profiles?: ProfileChildState[];
  /**
   * Present when a 2025-11-25 host is served by a child of its own in that era (the server
   * speaks both, its row on `"protocol": "auto"` is held in 2026-07-28): what the server
   * declares in 2025-11-25, as such a child's handshake told it (learnt once, kept with the
   * tools cache); `known: false` until one did. Such a host is told these, not the row's.
   */
  legacyFace?: ({ known: true } & ServerFace) | { known: false };
  /** With `state({ resources: true })`: CPU, memory and recent calls. */
  resources?: ServerResources;
}

/** One child of a shared row serving one host profile. */
export interface ProfileChildState {
  /** What it declared to the server: `sampling`, `elicitation:form`, `roots`… or `none`. */
  capabilities: string;
  /** The roots it answers `roots/list` with (the project), when it is a per-roots child. */
  roots?: string[];
  status: ServerStatus;
  pid?: number;
  startedAt?: number;
  /** The server asked this child for its roots. */
  asksRoots?: boolean;
  /**
   * Opened ahead for a 2025-11-25 host whose roots are not known yet (its handshake done,
   * not yet asked for roots): the project's child made once they are takes it.
   */
  awaitingRoots?: boolean;
}

/** What the server's last refusal asked for, and how many sign-ins have not met it. */
export interface SignInRequest {
  /** The scope to request: the challenge's, together with what was granted before. */
  scope?: string;
  /** The protected-resource metadata the challenge pointed at (RFC 9728). */
  resourceMetadataUrl?: string;
  /** A 403 `insufficient_scope`: signed in, but without enough scope (step-up). */
  insufficientScope?: boolean;
  /** Sign-ins handed over that the server answered with this same challenge. */
  attempts: number;
  /** The bound was reached: only `mcpool login --force` asks again. */
  exhausted?: boolean;
}

/** What storeCredentials() and forgetCredentials() leave a server at, after the redial. */
export interface ServerAuthState {
  id: string;
  status: ServerStatus;
  /** Why the dial failed, when it did; never a token. */
  error?: string;
}

/** How a live tool list differs from the one its pin was approved for, by tool name. */
export interface PinDiff {
  added: string[];
  removed: string[];
  /** Same name, different tool: title, description, a schema or an annotation. */
  changed: string[];
}

/** A tool as a pin covers it: the fields toolsFingerprint hashes. */
export interface PinnedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

/** One changed tool, with a short line per thing that changed (`destructiveHint: false → true`). */
export interface ToolChange {
  name: string;
  changes: string[];
}

/** What a person approving a server's tools is shown: its pin against its live list. */
export interface PinInfo {
  serverId: string;
  /** The fingerprint the row pins, if it pins one. */
  pin?: string;
  /** The live list's fingerprint. */
  fingerprint: string;
  /** The live list. */
  tools: PinnedTool[];
  /** The pin does not match: the server's tools are withheld. */
  withheld: boolean;
  /** The list the pin was approved for, when the pool's pin store holds it. */
  approved?: PinnedTool[];
  /** How the live list differs from `approved`, when that is known. */
  diff?: PinDiff;
  /** What changed in each of `diff.changed`. */
  changes?: ToolChange[];
}

export interface ProbeResult {
  ok: boolean;
  error?: string;
  tools: { name: string; description?: string; title?: string; annotations?: ToolAnnotations }[];
  toolsFingerprint?: string;
  instructions?: string;
}

/** One tool of the catalog, by its qualified name. */
export interface CatalogTool {
  /** The qualified name (`<slug>__<tool>`). */
  name: string;
  description?: string;
  title?: string;
  annotations?: ToolAnnotations;
  /** Estimated tokens the tool's definition costs a model. */
  tokens?: number;
}

/** One server's part of the catalog. */
export interface CatalogServer {
  id: string;
  slug: string;
  label: string;
  /** The tools are the last ones known, not a live list. */
  stale?: boolean;
  tools: CatalogTool[];
}

/** An MCP CallToolResult, as `call(…, { raw: true })` returns it. */
export interface CallToolResult {
  content: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export type CloseReason =
  | "idle"
  | "stop"
  | "reconnect"
  | "removed"
  | "changed"
  | "redial"
  | "shutdown"
  | "crash"
  | "unresponsive";

export type PoolEvent =
  /** `recovered`: it came back after a crash, a hang or a failed dial. */
  | { type: "connect"; serverId: string; ms: number; tools: number; recovered?: true }
  | { type: "connect-failed"; serverId: string; ms: number; error: string }
  /** The server needs a sign-in: no usable token and no way to get one without a person. */
  | { type: "auth-required"; serverId: string; error: string }
  /** A call timed out and the server did not answer a ping: it is replaced. */
  | { type: "unresponsive"; serverId: string; error: string }
  /** A server that went down is being dialled again without waiting for a use. */
  | { type: "restart"; serverId: string }
  /**
   * `kept`: the server's last-known lists stay offered across this close (an idle stop, a
   * crash, a redial…), so what a host lists has not changed; absent, they are gone with it.
   */
  | { type: "close"; serverId: string; reason: CloseReason; error?: string; kept?: true }
  | {
      type: "tools-changed";
      serverId: string;
      before?: string;
      after?: string;
      tools: number;
      added: string[];
      removed: string[];
    }
  | {
      type: "pin-mismatch";
      serverId: string;
      /** The row's pin. */
      expected: string;
      /** What the server's list hashes to now. */
      actual: string;
      /** Absent when the approved list is not known. */
      diff?: PinDiff;
    }
  | {
      type: "call";
      qualified: string;
      serverId?: string;
      toolName?: string;
      ms: number;
      ok: boolean;
      /** A pool code; typed as every code because the pool and a client share the class. */
      code?: ErrorCode;
      error?: string;
      chars?: number;
      truncated?: boolean;
      hidden?: boolean;
      raw?: boolean;
      cached?: boolean;
    }
  /**
   * A reconcile added, removed or changed rows, each in place (a lazy row with the era its
   * tools cache knows): a row that is not connected says so by no other event. It names
   * no one server (`serverId` is absent), and the ids of each kind.
   */
  | {
      type: "rows-changed";
      serverId?: never;
      added: string[];
      removed: string[];
      changed: string[];
    }
  /** Its process group stayed over `maxMemoryMb`: it is replaced gracefully. */
  | { type: "over-memory"; serverId: string; rssBytes: number; limitMb: number }
  | ConversationEvent;

/** A server notification, forwarded with the id of the server that sent it. */
export interface ServerNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** The state of the daemon's config file. */
export interface ConfigStatus {
  path: string;
  /** The file parsed and its rows were applied. */
  ok: boolean;
  /** Why the last read failed; the running configuration is the last good one. */
  error?: string;
  /** 1-based position of the parse error. */
  line?: number;
  column?: number;
  /** Epoch ms of the last good load. */
  loadedAt?: number;
  /** One line per invalid row; valid rows still apply. */
  problems: string[];
  /**
   * What applied but may not be what was meant, one line each: a key written twice (the last
   * one counts), a placeholder whose variable is unset. Absent from an older daemon.
   */
  warnings?: string[];
  /**
   * Whether the daemon is watching the file for edits: false while its folder is gone
   * (a new folder is picked up when it comes back) or after the watch failed; `reload`
   * starts it again. Absent from an older daemon.
   */
  watching?: boolean;
  /** Why the daemon is not watching, when it is not. */
  watchReason?: string;
}

/** A store the daemon could not save to. */
export interface SaveProblem {
  /** `children` (pid records), `tools-cache`, `usage`, `pins`, `tokens`. */
  store: string;
  /** Where it saves. */
  folder: string;
  /** The system error's code: `ENOSPC`, `EROFS`, `EACCES`… */
  code: string;
  /** What the failure costs. */
  effect: string;
  /** Epoch ms of the first failure in a row. */
  since: number;
}

export interface DaemonStatus {
  pid: number;
  version: string;
  /** Epoch ms. */
  startedAt: number;
  socketPath: string;
  configPath: string;
  config: ConfigStatus;
  servers: ServerState[];
  /** Connected clients, this one included. */
  clients: number;
  /**
   * The connection cap (`mcpool.maxConnections`): connections counted now (the
   * socket's and the MCP sockets' sessions), the cap in force, and how many were refused.
   */
  connections?: { open: number; max: number; refused: number; perProcess?: number };
  /** Stores whose last save failed (a full or read-only data folder), until one succeeds. */
  saveProblems?: SaveProblem[];
  /** The daemon's log file, and why it is not being written when it is not. */
  log?: { path: string; problem?: string };
  /** With `status({ resources: true })`: the daemon's own resident memory, bytes. */
  rssBytes?: number;
  /** The hand-over this daemon was started by (`mcpool restart`), if it was. */
  handover?: HandoverInfo;
}

/** A restart that handed the servers over: from which daemon, when, and what came over. */
export interface HandoverInfo {
  from: { pid: number; version: string; startedAt: number };
  /** Epoch ms. */
  at: number;
  /**
   * Epoch ms: since when the pool has served without a cold start — the start of the first
   * daemon of this line of hand-overs (this process's own start, after a cold one).
   * Absent from a daemon of an earlier release: read it as `from.startedAt`.
   */
  servingSince?: number;
  /** The hand-overs since then, this one included (0 after a cold one); absent as above. */
  handovers?: number;
  /** The servers whose running child this daemon took over. */
  adopted: string[];
  /**
   * The host profiles' children it took over besides (a project's child of a row whose
   * server reads its host's roots), each as `<server> for <profile>`; absent: none.
   */
  children?: string[];
  /** Set when the snapshot could not be read: this daemon started every server again. */
  cold?: string;
}

/** The answer to `daemon/handover`: the new daemon, and what it took over. */
export interface HandoverResult {
  pid: number;
  adopted: string[];
  /** The host profiles' children handed over running besides, as in HandoverInfo. */
  children?: string[];
  /**
   * Children whose row had changed: stopped by the old daemon, started anew; told as
   * `children` are (a conversation's as `<server> for a conversation`).
   */
  untaken: string[];
  cold?: string;
}
