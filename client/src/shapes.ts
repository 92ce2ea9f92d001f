/**
 * The data that crosses the socket: structural copies of the pool's public shapes
 * (src/pool/types.ts) and of a server row (src/config/rows.ts), because this package may not
 * import src/. The daemon hands the pool's own values to the wire typed as these, so tsc
 * fails in src/daemon the day the two drift apart.
 */
import type { PoolErrorCode } from "./errors.js";

/** Options every row may carry, whatever its transport (SPEC A1). */
export interface ServerOptions {
  id: string;
  slug?: string;
  label?: string;
  enabled?: boolean;
  connectTimeoutMs?: number | null;
  callTimeoutMs?: number | null;
  probeTimeoutMs?: number | null;
  maxResultChars?: number | null;
  hiddenTools?: string[];
  alwaysLoad?: string[];
  trustAnnotations?: boolean;
  coerceArguments?: boolean;
  idleTimeoutMs?: number | null;
  lazy?: boolean;
}

export interface StdioServerConfig extends ServerOptions {
  transport: "stdio";
  command: string;
  args?: string[];
  /** Secret: present only in `state({ secrets: true })`. */
  env?: Record<string, string>;
  cwd?: string;
}

export interface HttpServerConfig extends ServerOptions {
  transport: "http";
  url: string;
  /** Secret: present only in `state({ secrets: true })`. */
  headers?: Record<string, string>;
}

/** A server row, as configured. */
export type ServerRow = StdioServerConfig | HttpServerConfig;

export type ServerStatus = "ready" | "connecting" | "idle" | "disabled" | "error" | "crash-loop";

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
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
  hidden: boolean;
  clashed?: boolean;
}

export interface ServerState {
  id: string;
  slug: string;
  label: string;
  config: ServerRow;
  status: ServerStatus;
  error?: string;
  retryAt?: number;
  pid?: number;
  startedAt?: number;
  /** Calls in flight on the current connection, when there are any. */
  inflight?: number;
  instructions?: string;
  capabilities?: Record<string, unknown>;
  toolsFingerprint?: string;
  stale?: boolean;
  tools: ToolState[];
}

/** An OpenAI-shaped function definition. */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

export interface ProbeResult {
  ok: boolean;
  error?: string;
  tools: { name: string; description?: string; title?: string; annotations?: ToolAnnotations }[];
  toolsFingerprint?: string;
  instructions?: string;
}

/** One tool of the catalogue, by its qualified name. */
export interface CatalogTool {
  /** The qualified name (`<slug>__<tool>`). */
  name: string;
  description?: string;
  title?: string;
  annotations?: ToolAnnotations;
  /** Estimated tokens the tool's definition costs a model. */
  tokens?: number;
}

/** One server's part of the catalogue. */
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
  "idle" | "stop" | "reconnect" | "removed" | "changed" | "redial" | "shutdown" | "crash";

export type PoolEvent =
  | { type: "connect"; serverId: string; ms: number; tools: number }
  | { type: "connect-failed"; serverId: string; ms: number; error: string }
  | { type: "close"; serverId: string; reason: CloseReason; error?: string }
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
      type: "call";
      qualified: string;
      serverId?: string;
      toolName?: string;
      ms: number;
      ok: boolean;
      code?: PoolErrorCode;
      error?: string;
      chars?: number;
      truncated?: boolean;
      hidden?: boolean;
      raw?: boolean;
      cached?: boolean;
    };

/** A notification a pooled server sent. */
export interface ServerNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** The state of the daemon's config file (SPEC A7). */
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
}
