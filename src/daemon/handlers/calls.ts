/**
 * A `tools/call` as the pool takes it: the wire's options, and what the call hears back
 * while it runs, routed to the connection that made it and nowhere else: its progress as `progress` notifications carrying the token the
 * client chose, and its server's elicitations and sampling requests as an `elicit` or
 * `sample` request naming the call. The
 * pool gives each call its own upstream progress token and its own elicitation route, so
 * two clients using the same JSON-RPC ids and tokens never see each other's traffic.
 */
import { CALL_VALUE_PARAMS } from "mcpool-protocol";
import type { CallParams, ProgressToken, SampleParams } from "mcpool-protocol";

import type { CallOptions } from "../../pool/calls/options.js";
import type { TaskOwner } from "../../pool/calls/tasks.js";
import { checkedProfile } from "./conversations.js";
import type { RequestContext } from "../socket/server.js";

/**
 * A `tools/call`'s options for the pool: routed back to `ctx`'s connection (routedCall; the
 * connection may have subscribed to answer elicitations and sampling for every call), the
 * wire's options as they are, set only when given (no object copied per call), its profile
 * checked, its signal the request's own, and a task's owner from `taskOwner` (wire-tasks.ts).
 */
export function callOptions(
  params: CallParams,
  ctx: RequestContext,
  subscribed: { elicit?: boolean; sample?: boolean } | undefined,
  taskOwner: (named: string | undefined) => TaskOwner,
): CallOptions {
  const options: CallOptions = routedCall(
    params,
    ctx,
    params.elicit === true || subscribed?.elicit === true,
    params.sample === true || subscribed?.sample === true,
  );
  for (const key of CALL_VALUE_PARAMS) {
    if (params[key] !== undefined) (options as Record<string, unknown>)[key] = params[key];
  }
  if (params.bindings !== undefined) options.bindings = params.bindings;
  if (params.meta !== undefined) options.meta = params.meta;
  if (params.caller !== undefined) options.caller = params.caller;
  const profile = checkedProfile(params.profile);
  if (profile !== undefined) options.profile = profile;
  options.signal = ctx.signal;
  // A task-augmented call: its task is this connection's host's.
  if (params.task !== undefined) {
    options.task = params.task;
    options.taskOwner = taskOwner(params.taskOwner);
  }
  return options;
}

/**
 * The call options that route a call's traffic back to `ctx`'s connection. `answers`: the
 * connection answers elicitations (the call asked with `elicit`, or the connection
 * subscribed with `{ elicit: true }`); only then does the pool count it as a caller to ask.
 * `samples`: the same for sampling (`sample`, or `{ sample: true }`).
 */
export function routedCall(
  params: Pick<CallParams, "progressToken" | "roots">,
  ctx: RequestContext,
  answers: boolean,
  samples = false,
): Pick<CallOptions, "onProgress" | "onElicit" | "onSample" | "onRoots"> {
  const options: Pick<CallOptions, "onProgress" | "onElicit" | "onSample" | "onRoots"> = {};
  // Each handler is made by a function of its own, only when the call needs it: a closure
  // here would have every call pay for what it captures.
  const token = params.progressToken;
  if (token !== undefined) options.onProgress = progressTo(ctx, token);
  const callId = ctx.id;
  // A call sent as a notification has no id to name, and nobody to answer for it.
  if (callId === undefined || callId === null) return options;
  if (answers) options.onElicit = elicitOf(ctx, callId);
  if (samples) options.onSample = sampleOf(ctx, callId);
  // A modern server's roots/list inside the call: the caller's roots.
  if (params.roots === true) options.onRoots = rootsOf(ctx, callId);
  return options;
}

/** The call's progress, as `progress` notifications under the token the client chose. */
function progressTo(
  ctx: RequestContext,
  token: ProgressToken,
): NonNullable<CallOptions["onProgress"]> {
  return (progress) => {
    ctx.notify("progress", {
      progressToken: token,
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message } : {}),
    });
  };
}

function elicitOf(
  ctx: RequestContext,
  callId: string | number,
): NonNullable<CallOptions["onElicit"]> {
  return (asked, { serverId, signal }) =>
    ctx.request("elicit", { serverId, callId, params: asked }, signal);
}

function sampleOf(
  ctx: RequestContext,
  callId: string | number,
): NonNullable<CallOptions["onSample"]> {
  // The wire's shapes are structural copies of the SDK's; the SDK checks the answer.
  return async (asked, { serverId, signal }) =>
    (await ctx.request(
      "sample",
      { serverId, callId, params: asked as SampleParams["params"] },
      signal,
    )) as Awaited<ReturnType<NonNullable<CallOptions["onSample"]>>>;
}

function rootsOf(
  ctx: RequestContext,
  callId: string | number,
): NonNullable<CallOptions["onRoots"]> {
  return async (asked, { serverId, signal }) =>
    (await ctx.request("roots", { serverId, callId, params: asked }, signal)) as {
      roots: unknown[];
    };
}
