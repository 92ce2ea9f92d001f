/**
 * A legacy host's resources, prompts and completion: the handlers of a 2025-11-25 session,
 * each request named with the session's profile, so it goes where the session's calls go
 * (its own child, if any) and completes as they would.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { AskingOptions, HostProfile } from "mcpool-client";
import { elicitFor, sampleFor } from "./host-requests.js";
import { legacyResult } from "./offer.js";
import type { ResourcesPromptsRouter } from "./resources-prompts.js";
import { sessionCaller, type Extra, type Session } from "./session.js";

/**
 * Handles what `capabilities` declares (the SDK refuses a handler for anything else), for a
 * legacy host: what a modern server answers reaches it as a 2025-11-25 result (legacyResult).
 */
export function installPassthrough(
  router: ResourcesPromptsRouter,
  server: Server,
  session: Session,
  capabilities: ServerCapabilities,
): void {
  // Each answer is asked with the session's profile (its requests go where its calls go:
  // its own child, if any) and reaches the host shaped for its era.
  const profiled =
    <Request, Result extends { _meta?: Record<string, unknown> | undefined }>(
      answer: (request: Request, profile: HostProfile, extra: Extra) => Promise<Result>,
    ) =>
    async (request: Request, extra: Extra): Promise<Result> =>
      legacyResult(await answer(request, await session.profile.get(extra.requestId), extra));
  /**
   * A read's or a prompt's own: the session's caller and profile, and what the server asks
   * inside it going to this host on this request's stream, as a call's does.
   */
  const asking = (profile: HostProfile, extra: Extra): AskingOptions => {
    const options: AskingOptions = { caller: sessionCaller(session), profile };
    const elicit = elicitFor(session, extra);
    if (elicit !== undefined) options.onElicit = elicit;
    const sample = sampleFor(session, extra);
    if (sample !== undefined) options.onSample = sample;
    return options;
  };
  if (capabilities.resources !== undefined) {
    server.setRequestHandler(
      ListResourcesRequestSchema,
      profiled((request, profile) => router.listResources(request.params?.cursor, profile)),
    );
    server.setRequestHandler(
      ListResourceTemplatesRequestSchema,
      profiled((request, profile) => router.listResourceTemplates(request.params?.cursor, profile)),
    );
    server.setRequestHandler(
      ReadResourceRequestSchema,
      profiled((request, profile, extra) =>
        router.readResource(request.params.uri, asking(profile, extra)),
      ),
    );
    // Held where the session's requests go, so it hears the updates of the session it reads.
    server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
      const profile = await session.profile.get(extra.requestId);
      await router.subscribe(session, request.params.uri, profile);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      await router.unsubscribe(session, request.params.uri);
      return {};
    });
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler(
      ListPromptsRequestSchema,
      profiled((request, profile) => router.listPrompts(request.params?.cursor, profile)),
    );
    server.setRequestHandler(
      GetPromptRequestSchema,
      profiled((request, profile, extra) =>
        router.getPrompt(request.params.name, request.params.arguments, asking(profile, extra)),
      ),
    );
  }
  if (capabilities.completions !== undefined) {
    server.setRequestHandler(
      CompleteRequestSchema,
      profiled((request, profile) => router.complete(request.params, profile)),
    );
  }
}
