/**
 * What the pool knows about a server's demand for a sign-in, per server id: the
 * last challenge its server sent (a 401, or a 403 `insufficient_scope`, with the scope and
 * resource metadata its `WWW-Authenticate` named), the scope earlier sign-ins were granted,
 * and how many sign-ins in a row left that challenge unmet.
 *
 * `state()` hands it to `mcpool login` as `signIn`, so a login asks for what the daemon was
 * refused with (step-up: the challenge's scope together with what was granted before, as
 * the MCP authorization spec's scope challenge handling says), even when the login's own
 * dial would get in without one. After MAX_SIGN_INS sign-ins that the server answered with
 * the same challenge, the pool stops asking (the spec's "clients SHOULD implement retry
 * limits"): status says so, the bound is logged once, and only `mcpool login --force` goes on.
 */
import type { AuthChallenge } from "../transport/challenges.js";
import type { PoolLog, SignInRequest } from "../core/types.js";
import { serverLog } from "../core/server-log.js";

/**
 * Sign-ins in a row a server may answer with the same challenge before the pool stops
 * asking: the first, and two more for a scope the account is slow to be given.
 */
export const MAX_SIGN_INS = 3;

interface Demand {
  /** The refusal not yet met; undefined again once a dial or call meets it. */
  challenge?: AuthChallenge | undefined;
  /** The scope the stored tokens were granted, as the token response said, if it said. */
  granted?: string | undefined;
  /** Sign-ins handed over since the challenge last changed or was met. */
  attempts: number;
  /** The bound was reached and logged for this challenge. */
  exhausted: boolean;
}

/** The sentence of an auth-required refusal: what to run, with the scope when one was named. */
export function authRequiredText(serverId: string, request?: SignInRequest): string {
  if (request?.exhausted) {
    return `server "${serverId}" still asks for ${scopeText(request.scope)} after ${request.attempts} sign-ins in a row, so mcpool stopped asking: check what the account may be granted, then run \`mcpool login ${serverId} --force\``;
  }
  const scope = request?.scope === undefined ? "" : ` with scope "${request.scope}"`;
  return `server "${serverId}" needs you to sign in${scope}: run \`mcpool login ${serverId}\``;
}

function scopeText(scope: string | undefined): string {
  return scope === undefined ? "a sign-in" : `scope "${scope}"`;
}

/** The words of two scope strings, each once, the first's first. */
export function unionScope(a: string | undefined, b: string | undefined): string | undefined {
  const words = [...new Set(`${a ?? ""} ${b ?? ""}`.split(/\s+/).filter((w) => w !== ""))];
  return words.length === 0 ? undefined : words.join(" ");
}

export class SignInLedger {
  readonly #demands = new Map<string, Demand>();
  readonly #log: NonNullable<PoolLog["error"]>;

  constructor(log: NonNullable<PoolLog["error"]>) {
    this.#log = log;
  }

  #demand(id: string): Demand {
    let demand = this.#demands.get(id);
    if (!demand) this.#demands.set(id, (demand = { attempts: 0, exhausted: false }));
    return demand;
  }

  /** The server refused a request. A new scope starts a new count; the same one keeps it. */
  challenged(id: string, challenge: AuthChallenge): void {
    const demand = this.#demand(id);
    if (demand.challenge?.scope !== challenge.scope) {
      demand.attempts = 0;
      demand.exhausted = false;
    }
    demand.challenge = challenge;
    if (demand.attempts >= MAX_SIGN_INS && !demand.exhausted) {
      demand.exhausted = true;
      serverLog({ error: this.#log }, id).error(
        `${demand.attempts} sign-ins in a row were refused with ${scopeText(challenge.scope)}; not asking again until \`mcpool login ${id} --force\``,
      );
    }
  }

  /** The stored tokens say what they were granted. */
  granted(id: string, scope: string | undefined): void {
    this.#demand(id).granted = scope;
  }

  /**
   * A sign-in was handed over (`mcpool login`, `--force` included): one more attempt at the
   * challenge. One past the bound is let through, and the bound is met again if it fails.
   */
  signedIn(id: string): void {
    const demand = this.#demand(id);
    demand.exhausted = false;
    if (demand.challenge) demand.attempts += 1;
  }

  /**
   * A dial or a call went through: the challenge is met, unless it was a call's and this is
   * only a dial (a step-up for one tool is not met by a listing).
   */
  satisfied(id: string, by: "connect" | "call"): void {
    const demand = this.#demands.get(id);
    if (!demand?.challenge) return;
    if (by === "connect" && demand.challenge.method === "tools/call") return;
    demand.challenge = undefined;
    demand.attempts = 0;
    demand.exhausted = false;
  }

  /** What a login should ask for, while a challenge is unmet. */
  request(id: string): SignInRequest | undefined {
    const demand = this.#demands.get(id);
    const challenge = demand?.challenge;
    if (!demand || !challenge) return undefined;
    const scope = unionScope(challenge.scope, challenge.scope ? demand.granted : undefined);
    return {
      ...(scope !== undefined ? { scope } : {}),
      ...(challenge.resourceMetadataUrl !== undefined
        ? { resourceMetadataUrl: challenge.resourceMetadataUrl }
        : {}),
      ...(challenge.insufficientScope ? { insufficientScope: true } : {}),
      attempts: demand.attempts,
      ...(demand.exhausted ? { exhausted: true } : {}),
    };
  }

  /** The refusal sentence for the server as it stands. */
  message(id: string): string {
    return authRequiredText(id, this.request(id));
  }

  forget(id: string): void {
    this.#demands.delete(id);
  }
}
