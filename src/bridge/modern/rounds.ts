/**
 * A modern host's requests between their rounds (SEP-2322): a request whose pooled
 * server asked something is parked, and its host gets `input_required` with the questions
 * of one round and a `requestState` sealed with this process's key (HMAC,
 * createRequestStateCodec, bound to the method); the host's retry with `inputResponses` and
 * that state answers them, and the request goes on to its result or its next round. The
 * bridge's own question comes first: a roots-declaring host's roots (withRoots). Only
 * bridge.ts loads this file (and SDK v2 with it).
 */
import { randomBytes } from "node:crypto";
import {
  createRequestStateCodec,
  inputRequired,
  ProtocolError,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ConversationIdentity, HostProfile } from "mcpool-client";
import {
  clientCapabilities,
  mayAskAtStart,
  ROOTS_INPUT_KEY,
  type ModernRoots,
} from "../core/host-profile.js";
import type { Ask, ParkedCall } from "../core/host-requests.js";
import type { BridgeCore } from "./bridge-core.js";

/** How long a parked call waits for the host's retry before its question is cancelled, ms. */
export const PARKED_MS = 10 * 60_000;
/**
 * How long the rest of a round may take to reach the bridge once its first question has,
 * ms: a question of the round the pool answered itself (one it refused) never comes, and
 * the host is then asked the ones that did.
 */
export const ROUND_GATHER_MS = 2_000;
/** How long a minted requestState is believed, s (a little past PARKED_MS). */
const STATE_TTL_S = PARKED_MS / 1000 + 60;

export type StatePayload =
  | {
      call: string;
      /** The round the state answers (ParkedCall.rounds when it was minted). */
      round: number;
    }
  /** The bridge asked the host for its roots before running its call (askRoots). */
  | { roots: true };

/** The requests parked between rounds, and the key their states are sealed with. */
export class Rounds {
  readonly #parked = new Map<string, ParkedCall>();
  readonly #codec = createRequestStateCodec<StatePayload>({
    key: randomBytes(32),
    ttlSeconds: STATE_TTL_S,
    // A state minted for tools/call answers only a tools/call.
    bind: (ctx) => ctx.mcpReq.method,
  });

  /** The SDK's check of a request's state, before any handler runs. */
  get verify(): RequestStateCodec<StatePayload>["verify"] {
    return (state, ctx) => this.#codec.verify(state, ctx);
  }

  /** The parked request a state names, while it waits. */
  get(call: string): ParkedCall | undefined {
    return this.#parked.get(call);
  }

  /**
   * The bridge's own question before a call: the host's roots, one `roots/list`
   * under ROOTS_INPUT_KEY, with a state that says so; the retry carries the answer.
   */
  async askRoots(ctx: ServerContext): Promise<unknown> {
    const requestState = await this.#codec.mint({ roots: true }, ctx);
    const inputRequests = { [ROOTS_INPUT_KEY]: { method: "roots/list" } as never };
    return inputRequired({ inputRequests, requestState });
  }

  /** Ends every parked request (the bridge closes). */
  close(): void {
    for (const parked of this.#parked.values()) this.#end(parked);
  }

  /** The host's retry: its answers to the parked questions, then the call's next step. */
  async resume(
    state: Extract<StatePayload, { call: string }>,
    ctx: ServerContext,
  ): Promise<unknown> {
    const parked = this.#parked.get(state.call);
    const pending = parked?.pending;
    if (parked === undefined || pending === undefined || parked.rounds !== state.round) {
      throw staleState();
    }
    parked.pending = undefined;
    clearTimeout(parked.timer);
    this.#parked.delete(parked.id);
    for (const [key, step] of pending) {
      const response = ctx.mcpReq.inputResponses?.[key];
      if (response === undefined) step.refuse();
      else step.answer(response);
    }
    return this.round(parked, ctx);
  }

  /**
   * Waits for the call's next step: its result, or the questions of one round for the host
   * — every question of the server's round that this host answers, asked together.
   */
  async round(parked: ParkedCall, ctx: ServerContext): Promise<unknown> {
    const step = (await parked.next())!;
    if (step.kind === "done") return step.result;
    if (step.kind === "failed") throw step.error;
    const asks: Ask[] = [step];
    const expected =
      step.round === undefined
        ? 1
        : Object.values(step.round).filter((method) => parked.asks.has(method)).length;
    while (asks.length < expected) {
      const more = await parked.next(ROUND_GATHER_MS);
      if (more === undefined) break;
      if (more.kind !== "ask") {
        parked.unshift(more);
        break;
      }
      asks.push(more);
    }
    parked.rounds += 1;
    const pending = new Map<string, Ask>();
    for (const [i, ask] of asks.entries()) {
      const own = `mcpool-${parked.rounds}${i > 0 ? `-${i}` : ""}`;
      pending.set(ask.key !== undefined && !pending.has(ask.key) ? ask.key : own, ask);
    }
    parked.pending = pending;
    this.#parked.set(parked.id, parked);
    parked.timer = setTimeout(() => this.#end(parked), PARKED_MS);
    parked.timer.unref();
    const requestState = await this.#codec.mint({ call: parked.id, round: parked.rounds }, ctx);
    const inputRequests = Object.fromEntries(
      [...pending].map(([key, ask]) => [key, ask.question as never]),
    );
    return inputRequired({ inputRequests, requestState });
  }

  /** A parked call nobody came back for: its question refused, the call cancelled upstream. */
  #end(parked: ParkedCall): void {
    clearTimeout(parked.timer);
    this.#parked.delete(parked.id);
    for (const step of parked.pending?.values() ?? []) step.refuse();
    parked.pending = undefined;
    parked.abort.abort();
  }
}

/**
 * The profile a request runs with — a call, a `prompts/get`, a `resources/read`, the
 * requests 2026-07-28 lets ask its host anything: a host that declares roots is asked for
 * them first — an `input_required` of the bridge's own, with one `roots/list` — unless its
 * roots are known, or the request's server is known to be modern (it asks inside the
 * request itself). `qualified`: the called tool; undefined: any server in scope (a prompt's
 * or a resource's server is found as the pool routes it). On the retry that carries the
 * host's answer (a state of the bridge's roots question), the roots are learnt, and the
 * connection told its lists changed when they differ from those it held.
 */
export async function withRoots(
  core: Pick<BridgeCore, "upstream" | "scope" | "listTools" | "log">,
  rounds: Rounds,
  roots: ModernRoots,
  qualified: string | undefined,
  identity: ConversationIdentity,
  ctx: ServerContext,
): Promise<{ profile: HostProfile } | { ask: unknown }> {
  const declared = clientCapabilities(ctx);
  const state = ctx.mcpReq.requestState<StatePayload>();
  if (state !== undefined && "roots" in state) {
    const changed = roots.learn(ctx.mcpReq.inputResponses?.[ROOTS_INPUT_KEY], core.log);
    // Listed first, as a legacy host lists with its roots before it calls: the project's
    // child is up and its server has read its roots when the request reaches it.
    await core.listTools(identity, roots.profile(declared)).catch(() => undefined);
    // The connection's lists changed only if the roots it holds did.
    if (changed) roots.onLearnt?.();
  }
  if (declared.roots === undefined || roots.known || !(await mayAskAtStart(core, qualified))) {
    return { profile: roots.profile(declared) };
  }
  return { ask: await rounds.askRoots(ctx) };
}

/** A state whose request no longer waits: answered, ended or expired. */
export function staleState(): ProtocolError {
  return new ProtocolError(
    -32602,
    "mcpool: this requestState's call is no longer waiting for an answer (it was answered, ended or expired); call the tool again",
  );
}
