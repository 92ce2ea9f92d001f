/**
 * A modern host's request between its rounds (SPEC H3, modern.ts): the steps the pool's
 * work on it takes — a question for the host, the result, a failure — queued until the
 * bridge takes them, so the questions of one round can be handed to the host together.
 */
import { randomUUID } from "node:crypto";

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
