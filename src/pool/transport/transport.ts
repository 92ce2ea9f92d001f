/**
 * Building an unconnected SDK Transport for a row: the seam tests and custom transports
 * plug into (`createTransport`). Placeholders and secrets are read here, at the boundary,
 * and nowhere else.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { expandServerConfig, type Environment } from "../../config/placeholders.js";
import type { HttpServerConfig, McpServerConfig } from "../../config/rows.js";
import { childEnvironment, type ChildEnvPolicy } from "./child-env.js";
import { loadHttpClient } from "./http-client.js";
import { redactSecrets, secretValues } from "../core/secrets.js";
import type { AuthChallenge } from "./challenges.js";
import { ChildProcessTransport } from "./stdio-transport.js";
import type { Implementation, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { DiscoverResult, EraVerdict } from "../core/era.js";
import type { Collector } from "../core/collect.js";

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface TransportContext {
  childEnv: ChildEnvPolicy;
  /** Variables every stdio child gets, over its row's (McpPoolOptions.childMark). */
  childMark?: Readonly<Record<string, string>>;
  /** What http rows are fetched with, under origin pinning. Default: one shared keepAliveFetch(). */
  fetch?: FetchLike;
  /** Where placeholders and inherited variables are read. Default: process.env. */
  env?: Environment;
  /** Told each variable a placeholder names that is unset and has no default (left verbatim). */
  onUnsetVariable?: (serverId: string, name: string) => void;
  /**
   * Called with each stdout line of a stdio child that is not JSON-RPC, whole, and with what
   * removes the secrets that child was given (its row's env as dialled; see secrets.ts).
   */
  onJunk?: (serverId: string, line: string, redact: (text: string) => string) => void;
  /** Told when a stdio child starts and when it and its group are gone. */
  onChild?: ChildListener;
  /**
   * The OAuth provider of an http row, given the row as dialled (placeholders filled);
   * undefined: no OAuth, a 401 fails the connect. See oauth.ts.
   */
  authProvider?: (row: HttpServerConfig) => OAuthClientProvider | undefined;
  /** Told what each 401, or 403 insufficient_scope, of an OAuth row's server said (sign-in.ts). */
  onAuthChallenge?: (serverId: string, challenge: AuthChallenge) => void;
  /** The children a previous daemon handed over: a stdio row's dial takes its child, once. */
  handed?: HandedChildren;
  /** V8's collector, for a stdio child's oversize lines (core/collect.ts); none by default. */
  collector?: Collector;
}

/**
 * Children handed over by a previous daemon, by the row they were started from and, for a
 * host profile's child, its profile key (host-profiles.ts); no key: the row's own child.
 */
export interface HandedChildren {
  /** Whether a child of exactly this row (and profile key) waits to be taken. */
  has(row: McpServerConfig, profileKey?: string): boolean;
  /** That child, taken: the next call for the row (and key) finds none. */
  take(row: McpServerConfig, profileKey?: string): HandedChild | undefined;
  /**
   * An http row's live session (for a conversation, under its key), taken: the row's next
   * dial (for that conversation) goes on in it, once.
   */
  takeSession?(row: McpServerConfig, key?: string): HandedHttpSession | undefined;
}

/** The key a conversation's handed child goes by, beside the host profiles' keys. */
export function conversationHandedKey(conversationKey: string): string {
  return `conversation ${conversationKey}`;
}

/**
 * `handed` for the children of one profile key: what a profile child's dials take from.
 * `onTaken` hears of each child or http session a dial takes, at once, before the dial goes
 * on in it.
 */
export function handedFor(
  handed: HandedChildren | undefined,
  profileKey: string,
  onTaken?: (taken: HandedChild | HandedHttpSession) => void,
): HandedChildren | undefined {
  if (handed === undefined) return undefined;
  const takeSession = handed.takeSession?.bind(handed);
  return {
    has: (row) => handed.has(row, profileKey),
    take(row) {
      const child = handed.take(row, profileKey);
      if (child !== undefined) onTaken?.(child);
      return child;
    },
    ...(takeSession
      ? {
          takeSession: (row: McpServerConfig) => {
            const session = takeSession(row, profileKey);
            if (session !== undefined) onTaken?.(session);
            return session;
          },
        }
      : {}),
  };
}

export type ChildListener = (event: {
  type: "spawn" | "gone";
  serverId: string;
  pid: number;
}) => void;

/** Returns an unconnected Transport for the row; throwing fails the connect. */
export type CreateTransport = (
  row: McpServerConfig,
  context: TransportContext,
) => Transport | Promise<Transport>;

export const createDefaultTransport: CreateTransport = (configured, context) => {
  // Placeholders are filled here and only here: the expanded row is never stored.
  const env = context.env ?? process.env;
  const row = expandServerConfig(configured, env, (name) =>
    context.onUnsetVariable?.(configured.id, name),
  );
  if (row.transport === "stdio") {
    // Matched on the row as configured: the child was started from it, placeholders and all.
    const handed = context.handed?.take(configured);
    return new ChildProcessTransport({
      ...(handed ? { handed } : {}),
      ...(context.collector ? { collector: context.collector } : {}),
      command: row.command,
      args: row.args ?? [],
      env: { ...childEnvironment(context.childEnv, row.env, env), ...context.childMark },
      ...(row.cwd ? { cwd: row.cwd } : {}),
      ...(context.onJunk ? { onJunk: junkListener(configured, env, context.onJunk) } : {}),
      ...(context.onChild
        ? {
            onSpawn: (pid: number) => context.onChild?.({ type: "spawn", serverId: row.id, pid }),
            onGone: (pid: number) => context.onChild?.({ type: "gone", serverId: row.id, pid }),
          }
        : {}),
    });
  }
  // The SDK's HTTP client loads with the first http row (http-client.ts).
  const handed = context.handed?.takeSession?.(configured);
  return loadHttpClient().then((http) => http.createHttpTransport(row, context, handed));
};

/**
 * The child's junk lines, tagged with its server and redacted with the secrets of the row it
 * was started from: a retiring child of an edited or removed row is still redacted right.
 */
function junkListener(
  row: McpServerConfig,
  env: Environment,
  onJunk: NonNullable<TransportContext["onJunk"]>,
): (line: string) => void {
  let secrets: string[] | undefined;
  const redact = (text: string): string =>
    redactSecrets(text, (secrets ??= secretValues(row, env)));
  return (line) => onJunk(row.id, line, redact);
}

/** What a transport can tell about the process behind it, if there is one. */
export function processOf(transport: Transport): ChildProcessTransport | undefined {
  return transport instanceof ChildProcessTransport ? transport : undefined;
}

// ── A stdio child handed from one daemon to the next (src/daemon/handover/README.md) ──

/** What a connection had opened, as the handshake (or `server/discover`) told it. */
export interface HandedSession {
  protocolVersion: string;
  capabilities: ServerCapabilities;
  serverInfo?: Implementation;
  instructions?: string;
  verdict?: EraVerdict;
  /** A modern connection: the version its requests name and what the server said. */
  modern?: { version: string; discover: DiscoverResult };
  /** The next JSON-RPC id the old client would have used: no answer is taken for another's. */
  nextId: number;
  /**
   * Since when the server has served this pool (epoch ms): its uptime in `status` counts on
   * from there, not from the adoption. Absent from older snapshots: from the adoption.
   */
  startedAt?: number;
}

/** An http row's live session as handed over: its `Mcp-Session-Id` and what it had opened. */
export interface HandedHttpSession {
  sessionId: string;
  session: HandedSession;
  /** The old daemon listened on the session's GET stream (closed for the hand-over): open it again. */
  listened?: boolean;
  /**
   * In the new daemon: whether the hand-over went through. Until it settles true the session
   * is still the old daemon's, which serves on in it if this one gives up: ending it here
   * sends no DELETE (session-end.ts `provisional`).
   */
  owned?: Promise<boolean>;
  /** In the new daemon, a host profile's session: what its server showed of its roots there. */
  uptake?: HandedUptake;
}

/** A child as handed over: in the old daemon, its fds there; in the new one, its fds here. */
export interface HandedChild {
  pid: number;
  /** stdin, stdout, stderr. */
  fds: [number, number, number];
  /** stdout bytes read but not yet a whole line, base64. */
  unread: string;
  /** The old daemon was dropping an oversize line: the new one drops up to its newline first. */
  skipToNewline?: true;
  session: HandedSession;
  /**
   * In the new daemon: whether the hand-over went through. Until it settles the child is not
   * yet this process's to stop: a close lets it go without a signal if this resolves false.
   */
  owned?: Promise<boolean>;
  /** In the new daemon, a host profile's child: what its server showed of its roots there. */
  uptake?: HandedUptake;
}

/** What a host profile's child showed of its roots in the old daemon (host-profiles.ts). */
export interface HandedUptake {
  asksRoots: boolean;
  atStart?: "asks" | "silent";
}
