/**
 * A legacy host's call's own handlers for what its pooled server asks meanwhile (SPEC C14):
 * an elicitation or a sampling request goes to the host on the call's own stream, when the
 * host declared the capability. The pool's input key (input-key.ts) is never shown to it.
 */
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ElicitHandler, ElicitResult, SampleHandler } from "mcpool-client";
import { splitInputKey } from "./input-key.js";
import type { Extra, Session } from "./session.js";

/**
 * The call's own elicitation handler: the pooled server's question goes to the host on
 * this request's stream. None when the host did not declare the capability — the client
 * then declines for it.
 */
export function elicitFor(session: Session, extra: Extra): ElicitHandler | undefined {
  const declared = session.server.getClientCapabilities()?.elicitation;
  if (declared === undefined) return undefined;
  return async (params, { signal }) => {
    if (params.mode === "url" && (declared as { url?: unknown }).url === undefined) {
      return { action: "decline" };
    }
    // A host that fails to answer, or goes away, throws: the client answers `cancel`.
    const answer = await extra.sendRequest(
      { method: "elicitation/create", params: splitInputKey(params).params as never },
      ElicitResultSchema,
      { signal },
    );
    return answer as ElicitResult;
  };
}

/**
 * The call's own sampling handler: the pooled server's request goes to the host with
 * createMessage on this request's stream. None when the host did not declare sampling —
 * the daemon then refuses the server (-32601).
 */
export function sampleFor(session: Session, extra: Extra): SampleHandler | undefined {
  if (session.server.getClientCapabilities()?.sampling === undefined) return undefined;
  // A host that refuses, fails or goes away throws: the server gets a JSON-RPC error.
  return async (params, { signal }) =>
    (await session.server.createMessage(splitInputKey(params).params as never, {
      signal,
      relatedRequestId: extra.requestId,
    })) as Awaited<ReturnType<SampleHandler>>;
}
