/**
 * A host session's profile: what the host declared (a legacy host in its
 * initialize, a modern one in each request's envelope, below) that a pooled server can
 * see — sampling, elicitation, roots — and, when a legacy host declares roots, its roots,
 * asked of the host with `roots/list` once and again after the host's
 * `notifications/roots/list_changed`. Every listing and call of the session names it, so
 * the daemon serves the session from the child of each server that declared the same.
 * A modern host's roots (ModernRoots) are asked in an `input_required` instead (modern/bridge.ts).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerContext } from "@modelcontextprotocol/server";
import {
  hostProfile,
  isHostProfile,
  type HostProfile,
  type HostRoot,
  type PoolClient,
} from "mcpool-client";
import type { Scope } from "./naming.js";

/**
 * How long a host gets to answer our `roots/list`, ms: what a server that asks it direct
 * gives it — server-filesystem calls the SDK's `listRoots()` with no bound of its own, so
 * the SDK's request bound. A host that does not answer is served as one that declared no
 * roots (the row's own configuration) until it says its roots changed: a host that never
 * answers costs one wait, not one per listing.
 */
export const ROOTS_TIMEOUT_MS = DEFAULT_REQUEST_TIMEOUT_MSEC;

export class SessionProfile {
  readonly #server: Server;
  readonly #log: (line: string) => void;
  /** The profile with the roots the host last gave, while they hold. */
  #asked: Promise<HostProfile> | undefined;
  /**
   * The profile the session's requests named last (undefined: none yet): the daemon sends
   * a server's log lines and list changes to the hosts by it (pool-traffic.ts).
   */
  last: HostProfile | undefined;

  constructor(server: Server, log: (line: string) => void) {
    this.#server = server;
    this.#log = log;
  }

  /**
   * The session's profile now (a legacy host's: era `legacy`); the host is asked for its roots
   * when they are not known, on the stream of the request `relatedRequestId` (a Streamable HTTP
   * host may have no other).
   */
  get(relatedRequestId?: string | number): Promise<HostProfile> {
    return this.#get(relatedRequestId).then((profile) => {
      this.last = { ...profile, era: "legacy" };
      return this.last;
    });
  }

  #get(relatedRequestId?: string | number): Promise<HostProfile> {
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

/** The key of the bridge's own `roots/list` in a modern host's `input_required` (modern/bridge.ts). */
export const ROOTS_INPUT_KEY = "mcpool-roots";

/**
 * A modern host's roots, as one serving unit learnt them: a modern host has no
 * channel for a `roots/list` of ours but an `input_required` (modern/bridge.ts asks in one), so its
 * roots are asked once, on the request that first needs them, and kept for the serving
 * unit's life: 2026-07-28 has no `notifications/roots/list_changed` (the SDK drops one). A
 * host that gave no answer, or a malformed one, is served as one that declared no roots —
 * as SessionProfile serves a legacy host that did not answer.
 */
export class ModernRoots {
  /** Undefined: not asked yet; else what the host answered (undefined roots: no answer). */
  #learnt: { roots: readonly HostRoot[] | undefined } | undefined;
  /**
   * Told when the roots are learnt, or learnt different from before, once their project's
   * child has listed (modern/rounds.ts): never again for the same roots.
   */
  onLearnt: (() => void) | undefined;

  /** Whether the host's roots were asked (answered or not). */
  get known(): boolean {
    return this.#learnt !== undefined;
  }

  /**
   * The host's answer to our `roots/list` (a ListRootsResult, untrusted), kept. Whether it
   * changed what the unit held: the first answer does, one equal to the last does not (two
   * calls asked in parallel both carry the answer).
   */
  learn(response: unknown, log: (line: string) => void): boolean {
    const before = this.#learnt;
    const roots = (response as { roots?: unknown } | null | undefined)?.roots;
    if (Array.isArray(roots) && isHostProfile({ roots })) {
      this.#learnt = { roots: roots as HostRoot[] };
    } else {
      log(
        `mcpool bridge: the host ${response === undefined ? "did not list" : "listed malformed"} roots; served as a host that declares none`,
      );
      this.#learnt = { roots: undefined };
    }
    return (
      before === undefined || JSON.stringify(before.roots) !== JSON.stringify(this.#learnt.roots)
    );
  }

  /**
   * The profile of a host that declared `capabilities` in its envelope: its roots when they
   * were learnt, else without roots (the row's own configuration, as for a host without).
   */
  profile(capabilities: Record<string, unknown>): HostProfile {
    const { roots: _declared, ...rest } = capabilities;
    const roots = this.#learnt?.roots;
    return roots === undefined ? hostProfile(rest as never) : hostProfile(capabilities, roots);
  }

  /**
   * The profile a listing runs with: a server lists by what its client declared
   * (server-everything offers `get-roots-list` only to a client that declares roots), so a
   * host that declared roots lists as one — with no roots while they are not asked yet (a
   * listing has no `input_required` to ask them in; the first call asks).
   */
  listing(capabilities: Record<string, unknown>): HostProfile {
    if (this.#learnt === undefined && capabilities.roots !== undefined) {
      return hostProfile(capabilities, []);
    }
    return this.profile(capabilities);
  }
}

/**
 * Whether the server of tool `qualified` may ask its client's roots at its start (a legacy
 * server, or one whose era is not known yet): a modern one asks inside each request.
 * Without `qualified` (a prompt or a resource, whose server the pool finds as it routes
 * the request): whether any server in scope may.
 */
export async function mayAskAtStart(
  bridge: { upstream: PoolClient; scope: Scope },
  qualified?: string,
): Promise<boolean> {
  const states = (await bridge.upstream.state()).filter((state) => bridge.scope.includes(state.id));
  if (qualified === undefined) return states.some((state) => state.era !== "modern");
  const server = states.find((state) => state.tools.some((tool) => tool.qualified === qualified));
  return server?.era !== "modern";
}

// ── A modern host (modern/bridge.ts): its profile is in each request's envelope ────────────────

/** The envelope key of a modern request's client capabilities (SDK v2's, not loaded here). */
const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";

/** A modern request's `_meta`. */
export function metaOf(ctx: ServerContext): Record<string, unknown> | undefined {
  return ctx.mcpReq._meta as Record<string, unknown> | undefined;
}

/** What the request's envelope says the host can do. */
export function clientCapabilities(ctx: ServerContext): Record<string, unknown> {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const declared = envelope[CLIENT_CAPABILITIES_META_KEY] ?? envelope.clientCapabilities;
  return typeof declared === "object" && declared !== null
    ? (declared as Record<string, unknown>)
    : {};
}
