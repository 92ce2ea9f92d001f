/**
 * What HostProfiles (host-profiles.ts) learns about each row's server, once, and keeps with
 * its tools cache (ProfileMemo): which capability keys list the row's own tools, whether it
 * asks for roots and shows it took them in, whether it speaks only 2026-07-28 and else what
 * it declares in 2025-11-25 (its legacy face), and which questions it asks its client
 * (sampling, form or url elicitation).
 *
 * The questions: a legacy server reads its client's capabilities at `initialize`, and one
 * that checks them itself before asking refuses by itself for a client without them (the
 * conformance suite's server: -32603 "Client does not support form elicitation."). On the
 * row's connection, which declared the pool's capabilities, it asks instead, and a host
 * that did not declare the question hears the "Method not found" (-32601) an SDK client
 * without it answers. So a server seen to ask a question, on any connection of its row, for
 * any host, never has it shared with hosts that lack it: they get a child that declared
 * exactly what they declare, as direct. Seen once: the first question, if it is asked for a
 * host that lacks it, has been answered already (-32601) and is not sent again.
 */
import { capabilityKey, type HostProfile, type ServerFace } from "mcpool-protocol";
import { canonicalJson } from "./core/fingerprint.js";
import type { McpServerConfig } from "../config/rows.js";
import { sameConnection } from "../config/same-connection.js";
import type { CallRoutes } from "./calls/routes.js";
import type { ProfileMemo, Question } from "./catalog/tools-cache.js";
import type { EntryContext } from "./server/context.js";

export type { Question } from "./catalog/tools-cache.js";

/** The question an `elicitation/create` asks: a form unless it names the url mode. */
export function elicitationQuestion(params: { mode?: unknown } | undefined): Question {
  return params?.mode === "url" ? "elicitation:url" : "elicitation:form";
}

/**
 * How a row's own connections answer their server's questions (through `routes`), each
 * question told to `asked` first: whoever it is for, it is a fact about the server.
 */
export function answering(
  routes: CallRoutes,
  asked: (id: string, question: Question) => void,
): Required<Pick<EntryContext, "elicit" | "sample">> {
  return {
    elicit: (serverId, params, signal) => {
      asked(serverId, elicitationQuestion(params));
      return routes.elicit({ serverId }, params, signal);
    },
    sample: (serverId, params, signal) => {
      asked(serverId, "sampling");
      return routes.sample({ serverId }, params, signal);
    },
  };
}

/** Whether the capability key `caps` (capabilityKey) declares what `question` needs. */
function declares(caps: string, question: Question): boolean {
  // The parts before an extensions part (whose JSON may hold commas) hold none.
  const parts = caps.split(",");
  if (question === "sampling") return parts.includes("sampling");
  const mode = question.slice("elicitation:".length);
  const elicitation = parts.find((part) => part.startsWith("elicitation:"));
  return elicitation?.slice("elicitation:".length).split("+").includes(mode) === true;
}

/** Facts kept only while their row's connection stays the one they were learnt over. */
interface OfConnection<T> {
  row: McpServerConfig;
  values: Set<T>;
}

export class ProfileFacts {
  /** Row id → the capability keys whose listing was found the row's own, and that row. */
  readonly #same = new Map<string, OfConnection<string>>();
  /** Row id → the questions its server was seen to ask, and that row. */
  readonly #asks = new Map<string, OfConnection<Question>>();
  /** Rows whose server asked a child for its roots. */
  readonly #asksRoots = new Set<string>();
  /** Rows whose server was found not to ask at its start (ProfileEntry.atStart). */
  readonly #silent = new Set<string>();
  /** Rows whose server asked and showed nothing after taking its roots in (sign-of-life.ts). */
  readonly #quiet = new Set<string>();
  /** Rows whose server showed that it took its roots in: never taken for quiet again. */
  readonly #shows = new Set<string>();
  /** Rows held in 2026-07-28 whose server refused a legacy child (it speaks only that era). */
  readonly #modernOnly = new Set<string>();
  /** Row id → what its server declared to a legacy child, and that row. */
  readonly #legacyFaces = new Map<string, { row: McpServerConfig; face: ServerFace }>();

  /** The rows whose server refused a legacy child's `initialize`. */
  get modernOnly(): ReadonlySet<string> {
    return this.#modernOnly;
  }

  /**
   * Whether hosts with `profile` share row `id`'s connection: their capability key lists the
   * row's own tools, and the server was never seen to ask a question they lack.
   */
  shares(id: string, profile: HostProfile): boolean {
    const caps = capabilityKey(profile);
    return this.#same.get(id)?.values.has(caps) === true && !this.lacks(id, caps);
  }

  /** Whether row `id`'s server was seen to ask a question the capability key `caps` lacks. */
  lacks(id: string, caps: string): boolean {
    const asks = this.#asks.get(id)?.values ?? [];
    return [...asks].some((question) => !declares(caps, question));
  }

  /** The capability key `caps` lists row `row`'s own tools. */
  same(row: McpServerConfig, id: string, caps: string): void {
    let same = this.#same.get(id);
    if (same === undefined) {
      same = { row, values: new Set() };
      this.#same.set(id, same);
    }
    same.values.add(caps);
  }

  /**
   * Row `id`'s server asked `question`: true when that is new (kept from now on; the keys
   * lacking it no longer share its connection).
   */
  asked(row: McpServerConfig, id: string, question: Question): boolean {
    const asks = this.#asks.get(id);
    if (asks?.values.has(question) === true) return false;
    if (asks === undefined) this.#asks.set(id, { row, values: new Set([question]) });
    else asks.values.add(question);
    const same = this.#same.get(id)?.values;
    for (const caps of [...(same ?? [])]) if (!declares(caps, question)) same?.delete(caps);
    return true;
  }

  asksRoots(id: string): boolean {
    return this.#asksRoots.has(id);
  }

  /** Row `id`'s server asked for roots: true when that is new. */
  rootsAsked(id: string): boolean {
    if (this.#asksRoots.has(id)) return false;
    this.#asksRoots.add(id);
    this.#silent.delete(id);
    const same = this.#same.get(id)?.values;
    for (const caps of [...(same ?? [])]) {
      if (caps.split(",").includes("roots")) same?.delete(caps);
    }
    return true;
  }

  /** A child of row `id` served without its server asking for roots: true when that is new. */
  servedSilently(id: string): boolean {
    if (this.#silent.has(id) || this.#asksRoots.has(id)) return false;
    this.#silent.add(id);
    return true;
  }

  quiet(id: string): boolean {
    return this.#quiet.has(id);
  }

  /** A child of row `id` showed nothing after taking its roots in (this daemon only). */
  wentQuiet(id: string): void {
    if (!this.#shows.has(id)) this.#quiet.add(id);
  }

  shows(id: string): boolean {
    return this.#shows.has(id);
  }

  /** A child of row `id` showed it took its roots in: true when that is new. */
  shown(id: string): boolean {
    this.#quiet.delete(id);
    if (this.#shows.has(id)) return false;
    this.#shows.add(id);
    return true;
  }

  /** Row `id`'s server refused a legacy child: true when that is new. */
  refusedLegacy(id: string): boolean {
    if (this.#modernOnly.has(id)) return false;
    this.#modernOnly.add(id);
    return true;
  }

  /** What row `id`'s server declares in 2025-11-25, once a legacy child's handshake told it. */
  legacyFace(id: string): ServerFace | undefined {
    return this.#legacyFaces.get(id)?.face;
  }

  /** A legacy child of row `id` connected, its server declaring `face`: true when that is new. */
  sawLegacyFace(row: McpServerConfig, id: string, face: ServerFace): boolean {
    const known = this.#legacyFaces.get(id);
    if (known !== undefined && canonicalJson(known.face) === canonicalJson(face)) return false;
    this.#legacyFaces.set(id, { row, face });
    return true;
  }

  /** What the tools cache kept about row `row`. */
  learn(row: McpServerConfig, id: string, memo: ProfileMemo): void {
    if (memo.legacyFace !== undefined) this.#legacyFaces.set(id, { row, face: memo.legacyFace });
    if (memo.asksRoots === true) this.#asksRoots.add(id);
    if (memo.asksRoots === false) this.#silent.add(id);
    if (memo.showsUptake === true) this.#shows.add(id);
    if (memo.legacyToo === false) this.#modernOnly.add(id);
    for (const question of memo.asks ?? []) this.asked(row, id, question);
    for (const caps of memo.same ?? []) {
      if (memo.asksRoots === true && caps.split(",").includes("roots")) continue;
      if (!this.lacks(id, caps)) this.same(row, id, caps);
    }
  }

  /** What was learnt about row `id`, for the tools cache; undefined: nothing. */
  memo(id: string): ProfileMemo | undefined {
    const same = [...(this.#same.get(id)?.values ?? [])].sort();
    const asks = [...(this.#asks.get(id)?.values ?? [])].sort();
    const asksRoots = this.#asksRoots.has(id) ? true : this.#silent.has(id) ? false : undefined;
    // Only what the server showed is kept: a bound that ran out says nothing past this daemon.
    const shows = this.#shows.has(id) ? true : undefined;
    const modernOnly = this.#modernOnly.has(id);
    const legacyFace = this.#legacyFaces.get(id)?.face;
    if (
      same.length === 0 &&
      asks.length === 0 &&
      asksRoots === undefined &&
      shows === undefined &&
      !modernOnly &&
      legacyFace === undefined
    ) {
      return undefined;
    }
    return {
      ...(same.length > 0 ? { same } : {}),
      ...(asks.length > 0 ? { asks } : {}),
      ...(asksRoots !== undefined ? { asksRoots } : {}),
      ...(shows ? { showsUptake: shows } : {}),
      ...(modernOnly ? { legacyToo: false } : {}),
      ...(legacyFace !== undefined ? { legacyFace } : {}),
    };
  }

  /**
   * The rows after a reconcile: what was learnt about a removed row is forgotten, and what
   * a server lists or asks is learnt again once its connection changed.
   */
  sync(rows: ReadonlyMap<string, McpServerConfig>): void {
    const learnt = [this.#same, this.#asks, this.#legacyFaces] as Map<
      string,
      { row: McpServerConfig }
    >[];
    for (const facts of learnt) {
      for (const [id, kept] of facts) {
        const row = rows.get(id);
        if (row === undefined || !sameConnection(row, kept.row)) facts.delete(id);
      }
    }
    for (const set of [this.#asksRoots, this.#silent, this.#quiet, this.#shows, this.#modernOnly]) {
      for (const id of set) if (!rows.has(id)) set.delete(id);
    }
  }
}
