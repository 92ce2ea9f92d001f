/**
 * What a `tools/call` hears back while it runs, routed to the connection that
 * made it and nowhere else: its progress as `progress` notifications carrying the token the
 * client chose, and its server's elicitations and sampling requests as an `elicit` or
 * `sample` request naming the call. The
 * pool gives each call its own upstream progress token and its own elicitation route, so
 * two clients using the same JSON-RPC ids and tokens never see each other's traffic.
 */
import type { CallParams, SampleParams } from "mcpool-protocol";

import type { CallOptions } from "../../pool/calls/options.js";
import type { RequestContext } from "../socket/server.js";

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
  const token = params.progressToken;
  if (token !== undefined) {
    options.onProgress = (progress) => {
      ctx.notify("progress", {
        progressToken: token,
        progress: progress.progress,
        ...(progress.total !== undefined ? { total: progress.total } : {}),
        ...(progress.message !== undefined ? { message: progress.message } : {}),
      });
    };
  }
  const callId = ctx.id;
  // A call sent as a notification has no id to name, and nobody to answer for it.
  if (answers && callId !== undefined && callId !== null) {
    options.onElicit = (asked, { serverId, signal }) =>
      ctx.request("elicit", { serverId, callId, params: asked }, signal);
  }
  if (samples && callId !== undefined && callId !== null) {
    // The wire's shapes are structural copies of the SDK's; the SDK checks the answer.
    options.onSample = async (asked, { serverId, signal }) =>
      (await ctx.request(
        "sample",
        { serverId, callId, params: asked as SampleParams["params"] },
        signal,
      )) as Awaited<ReturnType<NonNullable<CallOptions["onSample"]>>>;
  }
  if (params.roots === true && callId !== undefined && callId !== null) {
    // A modern server's roots/list inside the call: the caller's roots.
    options.onRoots = async (asked, { serverId, signal }) =>
      (await ctx.request("roots", { serverId, callId, params: asked }, signal)) as {
        roots: unknown[];
      };
  }
  return options;
}
