/**
 * The pool's routes back to its callers: one CallerRouter for elicitation and
 * one for sampling, the client capabilities that say which a server may send, and the
 * route of a call. Every call path registers here and every connection answers from here,
 * per-conversation clients included: a conversation's requests go to its own callers.
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
import type { IndexedTool } from "../catalog/tool-index.js";
import { isProfileEntry } from "../server/profile-entry.js";
import type { CallOptions } from "./options.js";
import type { PoolLog } from "../core/types.js";
import type { InputAnswerer } from "../mcp/protocol.js";
import type { ServerEntry } from "../server/entry.js";
import { methodNotFound } from "../core/mcp-error.js";

export type { Route } from "../server/caller-router.js";

const NOTHING_TO_UNDO = (): void => undefined;

export class CallRoutes {
  /** What the pool declares: elicitation with `onElicit`, sampling with `onSample`. */
  readonly capabilities: Pick<ClientCapabilities, "elicitation" | "sampling">;
  readonly #elicitation: CallerRouter<ElicitParams, ElicitResult>;
  readonly #sampling: CallerRouter<SampleParams, CreateMessageResult>;

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
    this.#elicitation = new CallerRouter(options.onElicit, elicitationPolicy(log));
    this.#sampling = new CallerRouter(options.onSample, samplingPolicy);
  }

  /**
   * From now until the returned function is called, the requests that come in on `route`
   * may be this caller's: its elicitations with `onElicit`, its sampling with `onSample`.
   */
  register(route: Route, opts: Pick<CallOptions, "onElicit" | "onSample">): () => void {
    // Most calls bring neither handler: nothing to undo, and no function made for it.
    if (!opts.onElicit && !opts.onSample) return NOTHING_TO_UNDO;
    const unelicit = opts.onElicit && this.#elicitation.register(route, opts.onElicit);
    const unsample = opts.onSample && this.#sampling.register(route, opts.onSample);
    return () => {
      unelicit?.();
      unsample?.();
    };
  }

  /** The answer to one elicitation/create that came in on `route`; never rejects. */
  elicit(route: Route, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    return this.#elicitation.route(route, params, signal);
  }

  /**
   * Who answers the input requests of one call's modern results (MRTR): an
   * `input_required` belongs to exactly the call that got it, so its elicitation and
   * sampling go to this call's own handlers — checked as the pool's client checks a
   * server's requests — and never to another caller in flight, as a legacy server's do;
   * anything else (a profile child's roots) the connection answers as it would unasked.
   */
  answerer(
    serverId: string,
    opts: Pick<CallOptions, "onElicit" | "onSample" | "onRoots" | "profile">,
  ): InputAnswerer {
    const { elicitation, sampling } = this.capabilities;
    return async (request, signal, local) => {
      const { checkedElicitation, checkedSampling } = await import("../mcp/server-requests.js");
      if (request.method === "elicitation/create" && elicitation) {
        return checkedElicitation(request, elicitation, (params) =>
          this.#elicitation.answerFor(opts.onElicit, serverId, params, signal),
        );
      }
      if (request.method === "sampling/createMessage" && sampling) {
        return checkedSampling(request, (params) =>
          this.#sampling.answerFor(opts.onSample, serverId, params, signal),
        );
      }
      // A modern server asks for roots in the call itself: the calling host's, asked
      // of a host that answers them per call (a modern host), else its profile's.
      if (request.method === "roots/list" && opts.onRoots) {
        return opts.onRoots(request.params ?? {}, { serverId, signal });
      }
      const roots = opts.profile?.roots;
      if (request.method === "roots/list" && roots !== undefined) return { roots: [...roots] };
      // The connection's own answers: a host profile's child answers roots/list.
      return local(request, signal);
    };
  }

  /** The answer to one sampling/createMessage that came in on `route`; rejects with an McpError. */
  sample(route: Route, params: SampleParams, signal: AbortSignal): Promise<CreateMessageResult> {
    return this.#sampling.route(route, params, signal);
  }
}

/**
 * A tool a conversation listed: its call goes on that conversation's own client, and
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

/**
 * Where the requests a server sends on `entry`'s connection come in: its profile child's, or
 * its own.
 */
export function entryRoute(entry: ServerEntry): Route {
  return isProfileEntry(entry)
    ? { serverId: entry.id, profile: entry.key }
    : { serverId: entry.id };
}

/**
 * A host's own handlers for what a server asks while the host's request runs: those it
 * gave, and for what its profile does not declare a refusal ("Method not found", as its SDK
 * answers), so that no other caller in flight answers for it. No profile: as given.
 */
export function ownHandlers<T extends Pick<CallOptions, "onElicit" | "onSample" | "profile">>(
  opts: T,
): T {
  const profile = opts.profile;
  if (profile === undefined) return opts;
  const refuse = (): never => {
    throw methodNotFound();
  };
  const own: T = { ...opts };
  if (own.onElicit === undefined && (profile.elicitation ?? []).length === 0) {
    own.onElicit = refuse;
  }
  if (own.onSample === undefined && profile.sampling !== true) own.onSample = refuse;
  return own;
}

/**
 * Where the requests a call's server sends while it runs come in: its conversation's, its profile
 * child's, or its server's.
 */
export function routeOf(indexed: IndexedTool): Route {
  const entry = indexed.entry;
  if (!isConversationTool(indexed)) return entryRoute(entry);
  return {
    serverId: indexed.entry.id,
    conversation: conversationKey(indexed.conversation.identity),
  };
}
