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
import { legacyResult } from "./offer.js";
import type { ResourcesPromptsRouter } from "./resources-prompts.js";
import { sessionCaller, type Session } from "./session.js";

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
  if (capabilities.resources !== undefined) {
    // The session's profile: its requests go where its calls go (its own child, if any).
    server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) =>
      legacyResult(
        await router.listResources(
          request.params?.cursor,
          await session.profile.get(extra.requestId),
        ),
      ),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request, extra) =>
      legacyResult(
        await router.listResourceTemplates(
          request.params?.cursor,
          await session.profile.get(extra.requestId),
        ),
      ),
    );
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) =>
      legacyResult(
        await router.readResource(request.params.uri, {
          caller: sessionCaller(session),
          profile: await session.profile.get(extra.requestId),
        }),
      ),
    );
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      await router.subscribe(session, request.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      await router.unsubscribe(session, request.params.uri);
      return {};
    });
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler(ListPromptsRequestSchema, async (request, extra) =>
      legacyResult(
        await router.listPrompts(
          request.params?.cursor,
          await session.profile.get(extra.requestId),
        ),
      ),
    );
    server.setRequestHandler(GetPromptRequestSchema, async (request, extra) =>
      legacyResult(
        await router.getPrompt(request.params.name, request.params.arguments, {
          caller: sessionCaller(session),
          profile: await session.profile.get(extra.requestId),
        }),
      ),
    );
  }
  if (capabilities.completions !== undefined) {
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) =>
      legacyResult(
        await router.complete(request.params, await session.profile.get(extra.requestId)),
      ),
    );
  }
}
