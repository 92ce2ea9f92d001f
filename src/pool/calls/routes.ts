/**
 * The pool's routes back to its callers (SPEC C14): one CallerRouter for elicitation and
 * one for sampling, the client capabilities that say which a server may send, and the
 * route of a call. Every call path registers here and every connection answers from here,
 * per-conversation clients (B9) included: a conversation's requests go to its own callers.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ConversationIdentity } from "mcpool-protocol";
import { CallerRouter, type Route } from "../server/caller-router.js";
import { conversationKey } from "../core/identity.js";
import {
  elicitationCapability,
  elicitationPolicy,
  samplingPolicy,
  type ElicitationMode,
  type PoolElicitHandler,
  type PoolSampleHandler,
  type CreateMessageResult,
  type ElicitParams,
  type ElicitResult,
  type SampleParams,
} from "../server/routing.js";
import type { IndexedTool } from "../catalogue/tool-index.js";
import type { CallOptions } from "./options.js";
import type { PoolLog } from "../core/types.js";

export type { Route } from "../server/caller-router.js";

export class CallRoutes {
  /** What the pool declares: elicitation with `onElicit`, sampling with `onSample`. */
  readonly capabilities: Pick<ClientCapabilities, "elicitation" | "sampling">;
  readonly #elicitation: CallerRouter<ElicitParams, ElicitResult>;
  readonly #sampling: CallerRouter<SampleParams, CreateMessageResult>;
  readonly #elicitPolicy: ReturnType<typeof elicitationPolicy>;
  /** The pool's own handlers, for what no call of its own answers. */
  readonly #fallbacks: {
    onElicit: PoolElicitHandler | undefined;
    onSample: PoolSampleHandler | undefined;
  };

  constructor(
    options: {
      onElicit?: PoolElicitHandler;
      elicitationModes?: readonly ElicitationMode[];
      onSample?: PoolSampleHandler;
    },
    log: PoolLog,
  ) {
    const elicitation = options.onElicit && elicitationCapability(options.elicitationModes);
    this.capabilities = {
      ...(elicitation ? { elicitation } : {}),
      ...(options.onSample ? { sampling: {} } : {}),
    };
    this.#elicitPolicy = elicitationPolicy(log);
    this.#fallbacks = { onElicit: options.onElicit, onSample: options.onSample };
    this.#elicitation = new CallerRouter(options.onElicit, this.#elicitPolicy);
    this.#sampling = new CallerRouter(options.onSample, samplingPolicy);
  }

  /**
   * From now until the returned function is called, the requests that come in on `route`
   * may be this caller's: its elicitations with `onElicit`, its sampling with `onSample`.
   */
  register(route: Route, opts: Pick<CallOptions, "onElicit" | "onSample">): () => void {
    const unelicit = opts.onElicit && this.#elicitation.register(route, opts.onElicit);
    const unsample = opts.onSample && this.#sampling.register(route, opts.onSample);
    return () => {
      unelicit?.();
      unsample?.();
    };
  }

  /**
   * A call's own answers to what its server embeds in a modern result (`input_required`,
   * SPEC H2): that result belongs to exactly this call, so only its handlers are asked, by
   * the same policies; a kind it has no handler for goes to the pool's own handler, as with
   * no caller in flight (else declined, or -32601) — never to another caller.
   */
  ownAnswers(
    route: Route,
    opts: Pick<CallOptions, "onElicit" | "onSample">,
  ): (
    request: { method: string; params?: unknown },
    signal: AbortSignal,
  ) => Promise<unknown> | undefined {
    // Built on the first question only: most calls never get one.
    let routers:
      | {
          elicit: CallerRouter<ElicitParams, ElicitResult>;
          sample: CallerRouter<SampleParams, CreateMessageResult>;
        }
      | undefined;
    const made = () => {
      if (routers !== undefined) return routers;
      routers = {
        elicit: new CallerRouter(this.#fallbacks.onElicit, this.#elicitPolicy),
        sample: new CallerRouter(this.#fallbacks.onSample, samplingPolicy),
      };
      if (opts.onElicit) routers.elicit.register(route, opts.onElicit);
      if (opts.onSample) routers.sample.register(route, opts.onSample);
      return routers;
    };
    return ({ method, params }, signal) => {
      if (method === "elicitation/create") {
        return made().elicit.route(route, params as ElicitParams, signal);
      }
      if (method === "sampling/createMessage") {
        return made().sample.route(route, params as SampleParams, signal);
      }
      return undefined;
    };
  }

  /** The answer to one elicitation/create that came in on `route`; never rejects. */
  elicit(route: Route, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    return this.#elicitation.route(route, params, signal);
  }

  /** The answer to one sampling/createMessage that came in on `route`; rejects with an McpError. */
  sample(route: Route, params: SampleParams, signal: AbortSignal): Promise<CreateMessageResult> {
    return this.#sampling.route(route, params, signal);
  }
}

/**
 * A tool a conversation listed (B9): its call goes on that conversation's own client, and
 * what its server asks meanwhile goes to that conversation's callers. Only the conversation
 * registry makes these (conversations/calls.ts, ConversationTool); calls only tell them apart.
 */
export interface ConversationBound {
  readonly conversation: { readonly identity: ConversationIdentity };
}

/** Whether a resolved tool is a conversation's, to be sent on the caller's own client. */
export function isConversationTool<T extends IndexedTool>(
  indexed: T,
): indexed is T & ConversationBound {
  return "conversation" in indexed;
}

/** Where the requests a call's server sends while it runs come in: its conversation's, or its server's. */
export function routeOf(indexed: IndexedTool): Route {
  if (!isConversationTool(indexed)) return { serverId: indexed.entry.id };
  return {
    serverId: indexed.entry.id,
    conversation: conversationKey(indexed.conversation.identity),
  };
}
