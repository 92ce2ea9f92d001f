/**
 * What a pooled server asks a host during its call: the call's own elicitation
 * and sampling handlers, which send the question to the host on the call's own stream —
 * and only to a host that declared the capability. And for a modern host
 * (modern/bridge.ts), a request between its rounds: the steps the pool's work on it takes — a
 * question for the host, the result, a failure — queued until the bridge takes them, so
 * the questions of one round can be handed to the host together.
 */
import { randomUUID } from "node:crypto";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type {
  AskingOptions,
  ElicitHandler,
  ElicitResult,
  HostProfile,
  SampleHandler,
} from "mcpool-client";
import type { Extra, Session } from "./session.js";

/**
 * The call's own elicitation handler: the pooled server's question goes to the host on
 * this request's stream. None when the host did not declare the capability — the daemon
 * then refuses the server for it (-32601), as the host would.
 */
export const elicitFor = (session: Session, extra: Extra): ElicitHandler | undefined => {
  const declared = session.server.getClientCapabilities()?.elicitation;
  if (declared === undefined) return undefined;
  return async (params, { signal }) => {
    if (params.mode === "url" && (declared as { url?: unknown }).url === undefined) {
      return { action: "decline" };
    }
    // A host that fails to answer, or goes away, throws: the client answers `cancel`.
    const answer = await extra.sendRequest(
      // The pool's input key (splitInputKey, below) is never shown to a host.
      { method: "elicitation/create", params: splitInputKey(params).params as never },
      ElicitResultSchema,
      { signal },
    );
    return answer as ElicitResult;
  };
};

/**
 * The call's own sampling handler: the pooled server's request goes to the host with
 * createMessage on this request's stream. None when the host did not declare sampling —
 * the daemon then refuses the server (-32601).
 */
export const sampleFor = (session: Session, extra: Extra): SampleHandler | undefined => {
  if (session.server.getClientCapabilities()?.sampling === undefined) return undefined;
  // A host that refuses, fails or goes away throws: the server gets a JSON-RPC error.
  return async (params, { signal }) =>
    (await session.server.createMessage(splitInputKey(params).params as never, {
      signal,
      relatedRequestId: extra.requestId,
    })) as Awaited<ReturnType<SampleHandler>>;
};

/**
 * The `_meta` keys the pool gives a modern server's input request's own key and its round
 * in (the pool's INPUT_KEY_META and INPUT_ROUND_META, src/pool/mcp/input-required.ts): kept
 * for a modern host, never shown to any host.
 */
const INPUT_KEY_META = "mcpool/inputKey";
const INPUT_ROUND_META = "mcpool/inputRound";

/** A question's params without the pool's keys; its own key and its round's, when given. */
export function splitInputKey(params: unknown): {
  params: unknown;
  key: string | undefined;
  round: Record<string, string> | undefined;
} {
  const none = { params, key: undefined, round: undefined };
  if (typeof params !== "object" || params === null) return none;
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  if (_meta === undefined || !(INPUT_KEY_META in _meta || INPUT_ROUND_META in _meta)) return none;
  const { [INPUT_KEY_META]: key, [INPUT_ROUND_META]: round, ...meta } = _meta;
  const kept = Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
  return {
    params: kept,
    key: typeof key === "string" ? key : undefined,
    round: isRound(round) ? round : undefined,
  };
}

function isRound(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.values(value).every((method) => typeof method === "string")
  );
}

export type Question = {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params: unknown;
};

export type Step =
  | { kind: "done"; result: unknown }
  | { kind: "failed"; error: unknown }
  | {
      kind: "ask";
      question: Question;
      /** The server's own key for it, when the server is modern (the pool passes it on). */
      key: string | undefined;
      /** Every key of the server's round and its method, when the server is modern. */
      round: Record<string, string> | undefined;
      answer: (response: unknown) => void;
      refuse: () => void;
    };

/** One upstream request of a modern host (a call, a prompts/get, a resources/read), between its rounds. */
export class ParkedCall {
  readonly id = randomUUID();
  readonly abort = new AbortController();
  readonly #steps: Step[] = [];
  #waiting: ((step: Step | undefined) => void) | undefined;
  /** The methods this call asks its host (what the host declared). */
  readonly asks = new Set<string>();
  /** The questions the host was given, keyed as in its inputRequests. */
  pending: Map<string, Ask> | undefined;
  rounds = 0;
  timer: NodeJS.Timeout | undefined;
  /** The pooled server the call went to, when the bridge knows it (its log lines). */
  serverId: string | undefined;
  /** The host profile it named: the daemon names the hosts of a log line by theirs. */
  profile: HostProfile | undefined;

  /**
   * The handlers that park this request's questions for its host: each of what the host
   * declared in the request's envelope (elicitation, sampling, roots) becomes a question of
   * the next `input_required`.
   */
  askers(
    declared: Record<string, unknown>,
  ): Pick<AskingOptions, "onElicit" | "onSample" | "onRoots"> {
    const ask =
      (method: Question["method"]) =>
      (question: unknown, { signal }: { signal: AbortSignal }): Promise<never> =>
        new Promise((resolve, reject) => {
          const refuse = (): void => reject(new Error("the host did not answer"));
          signal.addEventListener("abort", refuse, { once: true });
          const { params: asked, key, round } = splitInputKey(question);
          this.push({
            kind: "ask",
            question: { method, params: asked },
            key,
            round,
            answer: resolve as (response: unknown) => void,
            refuse,
          });
        });
    const askers: Pick<AskingOptions, "onElicit" | "onSample" | "onRoots"> = {};
    if (declared.elicitation !== undefined) {
      askers.onElicit = ask("elicitation/create");
      this.asks.add("elicitation/create");
    }
    if (declared.sampling !== undefined) {
      askers.onSample = ask("sampling/createMessage");
      this.asks.add("sampling/createMessage");
    }
    // A modern host's roots are asked inside the request, as the server asked them.
    if (declared.roots !== undefined) {
      askers.onRoots = ask("roots/list");
      this.asks.add("roots/list");
    }
    return askers;
  }

  push(step: Step): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting(step);
    else this.#steps.push(step);
  }

  /** A step taken back: the next next() gets it first. */
  unshift(step: Step): void {
    this.#steps.unshift(step);
  }

  /** The next step; with `withinMs`, undefined when none comes in that time. */
  next(withinMs?: number): Promise<Step | undefined> {
    const step = this.#steps.shift();
    if (step !== undefined) return Promise.resolve(step);
    return new Promise((resolve) => {
      const timer =
        withinMs === undefined
          ? undefined
          : setTimeout(() => {
              if (this.#waiting === waiting) this.#waiting = undefined;
              resolve(undefined);
            }, withinMs);
      const waiting = (step: Step | undefined): void => {
        clearTimeout(timer);
        resolve(step);
      };
      this.#waiting = waiting;
    });
  }
}

export type Ask = Extract<Step, { kind: "ask" }>;
