/**
 * A host session's profile (SPEC I4, I5): what the host declared (a legacy host in its
 * initialize, a modern one in each request's envelope, below) that a pooled server can
 * see — sampling, elicitation, roots — and, when a legacy host declares roots, its roots,
 * asked of the host with `roots/list` once and again after the host's
 * `notifications/roots/list_changed`. Every listing and call of the session names it, so
 * the daemon serves the session from the child of each server that declared the same.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ServerContext } from "@modelcontextprotocol/server";
import { hostProfile, type HostProfile, type HostRoot } from "mcpool-client";

/**
 * How long a host gets to answer our `roots/list`, ms. A host that does not answer is
 * served as one that declared no roots (the row's own configuration) until it says its
 * roots changed: a host that never answers costs one wait, not one per listing.
 */
export const ROOTS_TIMEOUT_MS = 10_000;

export class SessionProfile {
  readonly #server: Server;
  readonly #log: (line: string) => void;
  /** The profile with the roots the host last gave, while they hold. */
  #asked: Promise<HostProfile> | undefined;

  constructor(server: Server, log: (line: string) => void) {
    this.#server = server;
    this.#log = log;
  }

  /**
   * The session's profile now; the host is asked for its roots when they are not known, on
   * the stream of the request `relatedRequestId` (a Streamable HTTP host may have no other).
   */
  get(relatedRequestId?: string | number): Promise<HostProfile> {
    const capabilities = this.#server.getClientCapabilities();
    if (capabilities?.roots === undefined) return Promise.resolve(hostProfile(capabilities));
    this.#asked ??= this.#server
      .listRoots(undefined, {
        timeout: ROOTS_TIMEOUT_MS,
        ...(relatedRequestId !== undefined ? { relatedRequestId } : {}),
      })
      .then(
        (answer) => hostProfile(capabilities, answer.roots as HostRoot[]),
        (error: Error) => {
          this.#log(`mcpool bridge: the host did not list its roots: ${error.message}`);
          const { roots: _unknown, ...rest } = capabilities;
          return hostProfile(rest);
        },
      );
    return this.#asked;
  }

  /** The host said its roots changed: the next listing or call asks again. */
  changed(): void {
    this.#asked = undefined;
  }
}

// ── A modern host (modern.ts): its profile is in each request's envelope ────────────────

/** The envelope key of a modern request's client capabilities (SDK v2's, not loaded here). */
const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/** A modern request's `_meta`. */
export function metaOf(ctx: ServerContext): Record<string, unknown> | undefined {
  return ctx.mcpReq._meta as Record<string, unknown> | undefined;
}

/**
 * The host's profile from the request's envelope (SessionProfile for a legacy host): its
 * sampling and elicitation. Its roots are not named: a modern host has no channel for a
 * `roots/list` of our own outside an `input_required`, so the server's own `roots/list`
 * inside the call is asked of it in one (onRoots).
 */
export function profileOf(ctx: ServerContext): HostProfile {
  const { roots: _roots, ...declared } = clientCapabilities(ctx);
  return hostProfile(declared as never);
}

/** What the request's envelope says the host can do. */
export function clientCapabilities(ctx: ServerContext): Record<string, unknown> {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const declared = envelope[CLIENT_CAPABILITIES_META_KEY] ?? envelope.clientCapabilities;
  return typeof declared === "object" && declared !== null
    ? (declared as Record<string, unknown>)
    : {};
}
